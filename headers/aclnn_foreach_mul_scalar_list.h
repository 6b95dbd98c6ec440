/* pyaclnn: C declarations for cffi (ABI mode), header-shaped after the aclnnop/aclnn_foreach_mul_scalar_list.h
 * CANN generates from hicann/ops-nn foreach/foreach_mul_scalar_list/op_host/foreach_mul_scalar_list_def.cpp
 * (x dynamic, scalars a ScalarList, y dynamic named out; every tensor list const; the prototype of
 * foreach/foreach_mul_scalar_list/docs/aclnnForeachMulScalarList.md). Declarations only: no includes, no logic. */

aclnnStatus aclnnForeachMulScalarListGetWorkspaceSize(const aclTensorList* x, const aclScalarList* scalars, const aclTensorList* out, uint64_t* workspaceSize, aclOpExecutor** executor);
aclnnStatus aclnnForeachMulScalarList(void* workspace, uint64_t workspaceSize, aclOpExecutor* executor, aclrtStream stream);
