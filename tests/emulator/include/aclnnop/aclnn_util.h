/*
 * aclnn_util.h - the export macro of the built-in operator headers (emulated CANN toolkit).
 * Written for the pyaclnn emulator in the style of CANN's include/aclnnop/aclnn_util.h, which the
 * hand-written operator headers include next to "aclnn/aclnn_base.h".
 */
#ifndef OP_API_INC_ACLNN_UTIL_H_
#define OP_API_INC_ACLNN_UTIL_H_

#define ACLNN_API __attribute__((visibility("default")))

/* The real one (hicann/ops-nn common/inc/op_api/aclnn_util.h) includes <set> and
 * "opdev/platform.h", which includes <string> (hicann/opbase include/nnopbase/opdev/platform.h):
 * official samples rely on what those bring in (the PReLU doc sample calls printf with only
 * <vector> included; libstdc++'s <string> brings <cstdio>). C sources of the emulator skip them. */
#ifdef __cplusplus
#include <set>
#include <string>
#endif

#endif  // OP_API_INC_ACLNN_UTIL_H_
