/*
 * aclnn_util.h - the export macro of the built-in operator headers (emulated CANN toolkit).
 * Written for the pyaclnn emulator in the style of CANN's include/aclnnop/aclnn_util.h, which the
 * hand-written operator headers include next to "aclnn/aclnn_base.h".
 */
#ifndef OP_API_INC_ACLNN_UTIL_H_
#define OP_API_INC_ACLNN_UTIL_H_

#define ACLNN_API __attribute__((visibility("default")))

#endif  // OP_API_INC_ACLNN_UTIL_H_
