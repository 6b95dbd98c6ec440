/* pyaclnn: C declarations for cffi (ABI mode), header-shaped after CANN's aclnn/aclnn_base.h.
 * Names and values exactly as the official headers (checked against abi.json by
 * tests/registry/test_headers.py). Declarations only: no includes, no logic.
 * Functions declared with () in CANN are declared (void) here. */

aclnnStatus aclnnInit(const char *configPath);
aclnnStatus aclnnFinalize(void);
