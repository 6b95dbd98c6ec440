/*
 * emu_ops.h - private to libopapi: the phase-2 kernels (emu_kernels.c) that phase 1 (emu_ops.c)
 * stores in the executor, and the tensor-parameter ("role") numbering they share.
 */
#ifndef EMU_OPS_H
#define EMU_OPS_H

#include "emu_internal.h"

/* Roles = tensor parameters in the op's parameter order (absent optionals keep their slot). */
enum { MSE_GRAD, MSE_SELF, MSE_TARGET, MSE_OUT };
enum { GN_DY, GN_X, GN_MEAN, GN_RSTD, GN_GAMMA, GN_DX, GN_DGAMMA, GN_DBETA };
enum { CE_GRADLOSS, CE_LOGPROB, CE_TARGET, CE_WEIGHT, CE_GRADZLOSS, CE_LSE, CE_OUT };
enum { PR_GRAD, PR_SELF, PR_WEIGHT, PR_DX, PR_DW };

/* Attribute slots. */
#define MSE_A_REDUCTION 0                   /* iattr */
#define GN_A_N 0                            /* iattr: N, C, HxW, group, mask0..2 */
#define GN_A_C 1
#define GN_A_HXW 2
#define GN_A_G 3
#define GN_A_MASK 4
#define CE_A_IGNORE 0                       /* iattr */
#define CE_A_REDUCTION 1                    /* iattr: 0 none, 1 mean, 2 sum */
#define CE_A_LS 0                           /* fattr: labelSmoothing narrowed to float */

#define CE_RED_NONE 0
#define CE_RED_MEAN 1
#define CE_RED_SUM 2

int emu_kernel_mse(aclOpExecutor *e);
int emu_kernel_group_norm(aclOpExecutor *e);
int emu_kernel_cross_entropy(aclOpExecutor *e);
int emu_check_cross_entropy(aclOpExecutor *e);
int emu_kernel_prelu(aclOpExecutor *e);

#endif /* EMU_OPS_H */
