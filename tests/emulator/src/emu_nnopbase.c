/*
 * emu_nnopbase.c - libnnopbase.so of the emulator.
 *
 * Exports every function of headers/acl_meta.h and headers/aclnn_base.h: tensors, scalars,
 * arrays, lists (create / destroy / getters), executors, aclnnInit/aclnnFinalize; plus the
 * internal executor services libopapi builds on (emu_executor_new/add/launch).
 *
 * Handles are registered in the runtime library's registry, so a destroyed or foreign pointer is
 * recognised (never dereferenced blindly): destroying it again counts a misuse and returns
 * ACLNN_ERR_PARAM_INVALID (161002); executors answer ACLNN_ERR_INNER_NULLPTR (561103).
 *
 * Getters that return arrays (aclGetViewShape, aclGetStorageShape, aclGetViewStrides) allocate
 * them with malloc(): release with free(). (Real CANN uses C++ new[] and expects delete[].)
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>

#include "emu_internal.h"

#define MAGIC_SCALAR 0x5343414cu
#define MAGIC_ARRAY 0x41525259u
#define MAGIC_LIST 0x4c495354u
#define MAX_ARRAY_ELEMS (1ull << 32)

/* ========================================================================================== */
/* Helpers                                                                                     */
/* ========================================================================================== */
static void tensor_set(aclTensor *t, const int64_t *viewDims, uint64_t n, aclDataType dtype,
                       const int64_t *stride, int64_t offset, aclFormat format,
                       const int64_t *storageDims, uint64_t sn, void *data)
{
    t->magic = EMU_TENSOR_MAGIC;
    t->ndim = (uint32_t)n;
    for (uint64_t i = 0; i < n; i++)
        t->dims[i] = viewDims[i];
    if (stride) {
        for (uint64_t i = 0; i < n; i++)
            t->strides[i] = stride[i];
    } else {                                  /* NULL stride: contiguous */
        int64_t s = 1;
        for (uint64_t i = n; i-- > 0;) {
            t->strides[i] = s;
            s *= t->dims[i];
        }
    }
    t->offset = offset;
    t->dtype = dtype;
    t->format = format;
    t->storage_ndim = (uint32_t)sn;
    for (uint64_t i = 0; i < sn; i++)
        t->storage_dims[i] = storageDims[i];
    t->data = data;
}

/* Shared argument rules of aclCreateTensor / aclInitTensor (CANN: a NULL dims array is only
 * allowed with a count of 0). Returns a message or NULL. */
static const char *tensor_args_bad(const int64_t *viewDims, uint64_t n, const int64_t *storageDims, uint64_t sn)
{
    if (!viewDims && n > 0)
        return "viewDims is nullptr but viewDimsNum > 0";
    if (!storageDims && sn > 0)
        return "storageDims is nullptr but storageDimsNum > 0";
    if (n > EMU_MAX_DIMS || sn > EMU_MAX_DIMS)
        return "rank exceeds the emulator limit of 64";
    return NULL;
}

/* A live handle of `kind`? Otherwise count a misuse and report 161002. */
static int need_live(const char *func, int kind, const void *p, const char *what)
{
    if (emu_reg_kind(p) == kind)
        return 0;
    emu_note_misuse(func, "%s %p is unknown or already destroyed", what, p);
    return emu_error(ACLNN_ERR_PARAM_INVALID, func, "%s %p is unknown or already destroyed", what, p);
}

EMU_EXPORT int emu_is_tensor(const aclTensor *t) { return emu_reg_kind(t) == EMU_K_TENSOR; }

/* ========================================================================================== */
/* Creation                                                                                    */
/* ========================================================================================== */
aclTensor *aclCreateTensor(const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                           const int64_t *stride, int64_t offset, aclFormat format,
                           const int64_t *storageDims, uint64_t storageDimsNum, void *tensorData)
{
    if (emu_enter(__func__))
        return NULL;
    const char *bad = tensor_args_bad(viewDims, viewDimsNum, storageDims, storageDimsNum);
    if (bad) {
        emu_error(viewDimsNum > EMU_MAX_DIMS || storageDimsNum > EMU_MAX_DIMS ? ACLNN_ERR_PARAM_INVALID
                                                                             : ACLNN_ERR_PARAM_NULLPTR,
                  __func__, "%s", bad);
        return NULL;
    }
    aclTensor *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    tensor_set(t, viewDims, viewDimsNum, dataType, stride, offset, format, storageDims, storageDimsNum, tensorData);
    emu_reg_add(EMU_K_TENSOR, t);
    return t;
}

aclScalar *aclCreateScalar(void *value, aclDataType dataType)
{
    if (emu_enter(__func__))
        return NULL;
    size_t size = emu_dtype_size(dataType);
    if (!value || size == 0) {
        emu_error(ACLNN_ERR_PARAM_NULLPTR, __func__, value ? "unsupported dataType %d" : "value is nullptr (dataType %d)", (int)dataType);
        return NULL;
    }
    aclScalar *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->magic = MAGIC_SCALAR;
    s->dtype = dataType;
    memcpy(s->value, value, size);            /* copied: the host buffer may go right away */
    emu_reg_add(EMU_K_SCALAR, s);
    return s;
}

/* Copies `size` elements of `elem` bytes into a new buffer (never NULL on success). */
static void *copy_elems(const char *func, const void *value, uint64_t size, size_t elem, int *ok)
{
    *ok = 0;
    if (!value && size > 0) {
        emu_error(ACLNN_ERR_PARAM_NULLPTR, func, "value is nullptr but size is %llu", (unsigned long long)size);
        return NULL;
    }
    if (size > MAX_ARRAY_ELEMS) {
        emu_error(ACLNN_ERR_PARAM_INVALID, func, "size %llu is too large", (unsigned long long)size);
        return NULL;
    }
    void *v = malloc(size ? size * elem : 1);
    if (!v)
        return NULL;
    if (size)
        memcpy(v, value, size * elem);
    *ok = 1;
    return v;
}

aclIntArray *aclCreateIntArray(const int64_t *value, uint64_t size)
{
    int ok;
    if (emu_enter(__func__))
        return NULL;
    int64_t *v = copy_elems(__func__, value, size, sizeof *v, &ok);
    aclIntArray *a = ok ? calloc(1, sizeof *a) : NULL;
    if (!a) {
        free(v);
        return NULL;
    }
    a->magic = MAGIC_ARRAY;
    a->size = size;
    a->v = v;
    emu_reg_add(EMU_K_INT_ARRAY, a);
    return a;
}

aclFloatArray *aclCreateFloatArray(const float *value, uint64_t size)
{
    int ok;
    if (emu_enter(__func__))
        return NULL;
    float *v = copy_elems(__func__, value, size, sizeof *v, &ok);
    aclFloatArray *a = ok ? calloc(1, sizeof *a) : NULL;
    if (!a) {
        free(v);
        return NULL;
    }
    a->magic = MAGIC_ARRAY;
    a->size = size;
    a->v = v;
    emu_reg_add(EMU_K_FLOAT_ARRAY, a);
    return a;
}

aclBoolArray *aclCreateBoolArray(const bool *value, uint64_t size)
{
    int ok;
    if (emu_enter(__func__))
        return NULL;
    bool *v = copy_elems(__func__, value, size, sizeof *v, &ok);
    aclBoolArray *a = ok ? calloc(1, sizeof *a) : NULL;
    if (!a) {
        free(v);
        return NULL;
    }
    a->magic = MAGIC_ARRAY;
    a->size = size;
    a->v = v;
    emu_reg_add(EMU_K_BOOL_ARRAY, a);
    return a;
}

/* Lists take ownership of their elements (aclDestroy*List destroys them). Every non-NULL element
 * must be a live handle of the element kind. */
static void **make_list(const char *func, int kind, const void *const *value, uint64_t size, int *ok)
{
    *ok = 0;
    void **v = copy_elems(func, value, size, sizeof(void *), ok);
    if (!*ok)
        return NULL;
    for (uint64_t i = 0; i < size; i++)
        if (v[i] && emu_reg_kind(v[i]) != kind) {
            emu_note_misuse(func, "element %llu (%p) is not a live handle", (unsigned long long)i, v[i]);
            emu_error(ACLNN_ERR_PARAM_INVALID, func, "element %llu (%p) is unknown or already destroyed", (unsigned long long)i, v[i]);
            free(v);
            *ok = 0;
            return NULL;
        }
    return v;
}

aclTensorList *aclCreateTensorList(const aclTensor *const *value, uint64_t size)
{
    int ok;
    if (emu_enter(__func__))
        return NULL;
    void **v = make_list(__func__, EMU_K_TENSOR, (const void *const *)value, size, &ok);
    aclTensorList *l = ok ? calloc(1, sizeof *l) : NULL;
    if (!l) {
        free(v);
        return NULL;
    }
    l->magic = MAGIC_LIST;
    l->size = size;
    l->v = (aclTensor **)v;
    emu_reg_add(EMU_K_TENSOR_LIST, l);
    return l;
}

aclScalarList *aclCreateScalarList(const aclScalar *const *value, uint64_t size)
{
    int ok;
    if (emu_enter(__func__))
        return NULL;
    void **v = make_list(__func__, EMU_K_SCALAR, (const void *const *)value, size, &ok);
    aclScalarList *l = ok ? calloc(1, sizeof *l) : NULL;
    if (!l) {
        free(v);
        return NULL;
    }
    l->magic = MAGIC_LIST;
    l->size = size;
    l->v = (aclScalar **)v;
    emu_reg_add(EMU_K_SCALAR_LIST, l);
    return l;
}

/* ========================================================================================== */
/* Destruction: NULL -> 0; unknown / already destroyed -> misuse + 161002.                     */
/* ========================================================================================== */
static aclnnStatus destroy_simple(const char *func, int kind, const void *p, const char *what)
{
    if (!p)
        return ACLNN_SUCCESS;
    emu_lock();
    int live = emu_reg_kind(p) == kind;
    if (live) {
        /* free the element buffer of arrays; the struct itself is quarantined by the registry */
        if (kind == EMU_K_INT_ARRAY)
            free(((aclIntArray *)p)->v);
        else if (kind == EMU_K_FLOAT_ARRAY)
            free(((aclFloatArray *)p)->v);
        else if (kind == EMU_K_BOOL_ARRAY)
            free(((aclBoolArray *)p)->v);
        emu_reg_release(kind, p);
    }
    emu_unlock();
    if (!live) {
        emu_note_misuse(func, "%s %p destroyed twice or never created", what, p);
        return emu_error(ACLNN_ERR_PARAM_INVALID, func, "%s %p is unknown or already destroyed", what, p);
    }
    return ACLNN_SUCCESS;
}

aclnnStatus aclDestroyTensor(const aclTensor *tensor)
{
    int st = emu_enter(__func__);
    return st ? st : destroy_simple(__func__, EMU_K_TENSOR, tensor, "tensor");
}

aclnnStatus aclDestroyScalar(const aclScalar *scalar)
{
    int st = emu_enter(__func__);
    return st ? st : destroy_simple(__func__, EMU_K_SCALAR, scalar, "scalar");
}

aclnnStatus aclDestroyIntArray(const aclIntArray *array)
{
    int st = emu_enter(__func__);
    return st ? st : destroy_simple(__func__, EMU_K_INT_ARRAY, array, "int array");
}

aclnnStatus aclDestroyFloatArray(const aclFloatArray *array)
{
    int st = emu_enter(__func__);
    return st ? st : destroy_simple(__func__, EMU_K_FLOAT_ARRAY, array, "float array");
}

aclnnStatus aclDestroyBoolArray(const aclBoolArray *array)
{
    int st = emu_enter(__func__);
    return st ? st : destroy_simple(__func__, EMU_K_BOOL_ARRAY, array, "bool array");
}

/* Destroys the list and every element still alive; an element already destroyed counts a misuse
 * (the caller destroyed it separately: a double free in real CANN). */
static aclnnStatus destroy_list(const char *func, int list_kind, int elem_kind, const void *p, void **elems,
                                uint64_t n)
{
    int bad = 0;
    for (uint64_t i = 0; i < n; i++) {
        if (!elems[i])
            continue;
        if (emu_reg_kind(elems[i]) == elem_kind)
            emu_reg_release(elem_kind, elems[i]);
        else {
            emu_note_misuse(func, "list element %llu (%p) was already destroyed", (unsigned long long)i, elems[i]);
            bad = 1;
        }
    }
    free(elems);
    emu_reg_release(list_kind, p);
    if (bad)
        return emu_error(ACLNN_ERR_PARAM_INVALID, func, "a list element was already destroyed");
    return ACLNN_SUCCESS;
}

aclnnStatus aclDestroyTensorList(const aclTensorList *array)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    if (!array)
        return ACLNN_SUCCESS;
    emu_lock();
    if ((st = need_live(__func__, EMU_K_TENSOR_LIST, array, "tensor list")) == 0)
        st = destroy_list(__func__, EMU_K_TENSOR_LIST, EMU_K_TENSOR, array, (void **)array->v, array->size);
    emu_unlock();
    return st;
}

aclnnStatus aclDestroyScalarList(const aclScalarList *array)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    if (!array)
        return ACLNN_SUCCESS;
    emu_lock();
    if ((st = need_live(__func__, EMU_K_SCALAR_LIST, array, "scalar list")) == 0)
        st = destroy_list(__func__, EMU_K_SCALAR_LIST, EMU_K_SCALAR, array, (void **)array->v, array->size);
    emu_unlock();
    return st;
}

/* ========================================================================================== */
/* Getters                                                                                     */
/* ========================================================================================== */
/* NULL tensor or output pointer -> 161001; unknown tensor -> misuse + 161002. */
static int tensor_getter(const char *func, const aclTensor *t, const void *out1, const void *out2)
{
    if (!t || !out1 || !out2)
        return emu_error(ACLNN_ERR_PARAM_NULLPTR, func, "tensor or output pointer is nullptr");
    return need_live(func, EMU_K_TENSOR, t, "tensor");
}

static int64_t *dup_dims(const int64_t *src, uint32_t n)
{
    int64_t *v = malloc(n ? n * sizeof *v : sizeof *v);   /* never NULL for a 0-D tensor */
    if (v && n)
        memcpy(v, src, n * sizeof *v);
    return v;
}

static aclnnStatus get_dims(const char *func, const aclTensor *t, int64_t **out, uint64_t *num, int which)
{
    int st = tensor_getter(func, t, out, num);
    if (st)
        return st;
    emu_lock();
    uint32_t n = which == 1 ? t->storage_ndim : t->ndim;
    const int64_t *src = which == 0 ? t->dims : which == 1 ? t->storage_dims : t->strides;
    int64_t *v = dup_dims(src, n);
    emu_unlock();
    if (!v)
        return emu_error(ACLNN_ERR_INNER, func, "out of memory");
    *out = v;
    *num = n;
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetViewShape(const aclTensor *tensor, int64_t **viewDims, uint64_t *viewDimsNum)
{
    int st = emu_enter(__func__);
    return st ? st : get_dims(__func__, tensor, viewDims, viewDimsNum, 0);
}

aclnnStatus aclGetStorageShape(const aclTensor *tensor, int64_t **storageDims, uint64_t *storageDimsNum)
{
    int st = emu_enter(__func__);
    return st ? st : get_dims(__func__, tensor, storageDims, storageDimsNum, 1);
}

aclnnStatus aclGetViewStrides(const aclTensor *tensor, int64_t **stridesValue, uint64_t *stridesNum)
{
    int st = emu_enter(__func__);
    return st ? st : get_dims(__func__, tensor, stridesValue, stridesNum, 2);
}

aclnnStatus aclGetViewOffset(const aclTensor *tensor, int64_t *offset)
{
    int st = emu_enter(__func__);
    if (st || (st = tensor_getter(__func__, tensor, offset, offset)))
        return st;
    *offset = tensor->offset;
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetFormat(const aclTensor *tensor, aclFormat *format)
{
    int st = emu_enter(__func__);
    if (st || (st = tensor_getter(__func__, tensor, format, format)))
        return st;
    *format = tensor->format;
    return ACLNN_SUCCESS;
}

aclnnStatus aclGetDataType(const aclTensor *tensor, aclDataType *dataType)
{
    int st = emu_enter(__func__);
    if (st || (st = tensor_getter(__func__, tensor, dataType, dataType)))
        return st;
    *dataType = tensor->dtype;
    return ACLNN_SUCCESS;
}

/* Element count of a live array/list of `kind`; NULL arguments -> 161001, unknown -> 161002. */
static aclnnStatus get_size(const char *func, int kind, const void *p, uint64_t *size)
{
    if (!p || !size)
        return emu_error(ACLNN_ERR_PARAM_NULLPTR, func, "array or size is nullptr");
    emu_lock();
    int st = need_live(func, kind, p, "array");
    if (!st) {
        switch (kind) {
        case EMU_K_INT_ARRAY: *size = ((const aclIntArray *)p)->size; break;
        case EMU_K_FLOAT_ARRAY: *size = ((const aclFloatArray *)p)->size; break;
        case EMU_K_BOOL_ARRAY: *size = ((const aclBoolArray *)p)->size; break;
        case EMU_K_TENSOR_LIST: *size = ((const aclTensorList *)p)->size; break;
        default: *size = ((const aclScalarList *)p)->size; break;
        }
    }
    emu_unlock();
    return st;
}

aclnnStatus aclGetIntArraySize(const aclIntArray *array, uint64_t *size)
{
    int st = emu_enter(__func__);
    return st ? st : get_size(__func__, EMU_K_INT_ARRAY, array, size);
}

aclnnStatus aclGetFloatArraySize(const aclFloatArray *array, uint64_t *size)
{
    int st = emu_enter(__func__);
    return st ? st : get_size(__func__, EMU_K_FLOAT_ARRAY, array, size);
}

aclnnStatus aclGetBoolArraySize(const aclBoolArray *array, uint64_t *size)
{
    int st = emu_enter(__func__);
    return st ? st : get_size(__func__, EMU_K_BOOL_ARRAY, array, size);
}

aclnnStatus aclGetTensorListSize(const aclTensorList *tensorList, uint64_t *size)
{
    int st = emu_enter(__func__);
    return st ? st : get_size(__func__, EMU_K_TENSOR_LIST, tensorList, size);
}

aclnnStatus aclGetScalarListSize(const aclScalarList *scalarList, uint64_t *size)
{
    int st = emu_enter(__func__);
    return st ? st : get_size(__func__, EMU_K_SCALAR_LIST, scalarList, size);
}

aclnnStatus aclInitTensor(aclTensor *tensor, const int64_t *viewDims, uint64_t viewDimsNum, aclDataType dataType,
                          const int64_t *stride, int64_t offset, aclFormat format, const int64_t *storageDims,
                          uint64_t storageDimsNum, void *tensorDataAddr)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    if (!tensor)
        return emu_error(ACLNN_ERR_PARAM_NULLPTR, __func__, "tensor is nullptr");
    const char *bad = tensor_args_bad(viewDims, viewDimsNum, storageDims, storageDimsNum);
    if (bad)
        return emu_error(ACLNN_ERR_PARAM_NULLPTR, __func__, "%s", bad);
    emu_lock();
    if ((st = need_live(__func__, EMU_K_TENSOR, tensor, "tensor")) == 0)
        tensor_set(tensor, viewDims, viewDimsNum, dataType, stride, offset, format, storageDims, storageDimsNum,
                   tensorDataAddr);
    emu_unlock();
    return st;
}

aclnnStatus aclSetRawTensorAddr(aclTensor *tensor, void *addr)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    if (!tensor)
        return emu_error(ACLNN_ERR_PARAM_NULLPTR, __func__, "tensor is nullptr");
    emu_lock();
    if ((st = need_live(__func__, EMU_K_TENSOR, tensor, "tensor")) == 0)
        tensor->data = addr;
    emu_unlock();
    return st;
}

aclnnStatus aclGetRawTensorAddr(const aclTensor *tensor, void **addr)
{
    int st = emu_enter(__func__);
    if (st || (st = tensor_getter(__func__, tensor, addr, addr)))
        return st;
    *addr = tensor->data;
    return ACLNN_SUCCESS;
}

/* ========================================================================================== */
/* aclnnInit / aclnnFinalize                                                                   */
/* ========================================================================================== */
aclnnStatus aclnnInit(const char *configPath)
{
    (void)configPath;
    return emu_enter(__func__);
}

aclnnStatus aclnnFinalize(void) { return emu_enter(__func__); }

/* ========================================================================================== */
/* Executors                                                                                   */
/* ========================================================================================== */
/* A live executor, or a status: NULL -> 561103; unknown/freed -> misuse + 561103. */
static int need_executor(const char *func, const aclOpExecutor *e)
{
    if (!e)
        return emu_error(ACLNN_ERR_INNER_NULLPTR, func, "executor is nullptr");
    if (emu_reg_kind(e) == EMU_K_EXECUTOR)
        return 0;
    emu_note_misuse(func, "executor %p is unknown or already freed", (const void *)e);
    return emu_error(ACLNN_ERR_INNER_NULLPTR, func, "executor %p is unknown or already freed (phase 2 frees a non-repeatable executor)", (const void *)e);
}

EMU_EXPORT aclOpExecutor *emu_executor_new(const char *phase2_api)
{
    aclOpExecutor *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->magic = EMU_EXECUTOR_MAGIC;
    e->api = phase2_api;
    emu_reg_add(EMU_K_EXECUTOR, e);
    return e;
}

EMU_EXPORT void emu_executor_add(aclOpExecutor *e, const aclTensor *t, int is_output)
{
    int r = e->nroles++;
    emu_tview *v = &e->t[r];
    e->role_is_output[r] = is_output;
    v->handle = t;
    if (!t)
        return;
    v->ndim = (int)t->ndim;
    memcpy(v->dims, t->dims, sizeof v->dims);
    memcpy(v->strides, t->strides, sizeof v->strides);
    v->offset = t->offset;
    v->dtype = t->dtype;
    if (is_output)
        e->out_role[e->nout++] = r;
    else
        e->in_role[e->nin++] = r;
}

EMU_EXPORT void emu_executor_discard(aclOpExecutor *e) { emu_reg_release(EMU_K_EXECUTOR, e); }

/* FNV-1a over the bytes of a key part. */
static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ b[i]) * 0x100000001b3ULL;
    return h;
}

/* The op-cache key of a composite phase 1 (see emu_opcache.c for the real one): the op, then per
 * tensor parameter its view shape, strides, storage shape, dtype, offset and format (a separator
 * for NULL), then the attributes. Addresses are not part of it. Lock held. */
EMU_EXPORT void emu_executor_check_cache(aclOpExecutor *e)
{
    uint64_t h = fnv(0xcbf29ce484222325ULL, e->api, strlen(e->api));
    for (int r = 0; r < e->nroles; r++) {
        const aclTensor *t = e->t[r].handle;
        unsigned char sep = 0xff;
        h = fnv(h, &sep, 1);
        if (!t)
            continue;
        h = fnv(h, t->dims, t->ndim * sizeof t->dims[0]);
        h = fnv(h, &sep, 1);
        h = fnv(h, t->strides, t->ndim * sizeof t->strides[0]);
        h = fnv(h, &sep, 1);
        h = fnv(h, t->storage_dims, t->storage_ndim * sizeof t->storage_dims[0]);
        h = fnv(h, &t->dtype, sizeof t->dtype);
        h = fnv(h, &t->offset, sizeof t->offset);
        h = fnv(h, &t->format, sizeof t->format);
    }
    h = fnv(h, e->iattr, sizeof e->iattr);
    h = fnv(h, e->fattr, sizeof e->fattr);
    h = fnv(h, e->sattr, strlen(e->sattr));
    e->cache_key = h ? h : 1;
    if (!emu_op_cache_find(e->cache_key))
        return;
    /* OpExecCacheWrap: its tensor addresses are those phase 1 saw (op_cache.cpp
     * AddAclTensorToCachedList / OpExecCacheWrap::OpExecCacheWrap). */
    e->cache_wrap = 1;
    for (int r = 0; r < e->nroles; r++)
        if (e->t[r].handle) {
            e->t[r].data = e->t[r].handle->data;
            e->addr_set[r] = 1;
        }
}

/* hicann/opbase common/api/acl_op_api.cpp aclSetAclOpExecutorRepeatable: dispatches on the magic
 * number; an OpExecCacheWrap matches neither executor kind -> ACLNN_ERR_INNER (561000).
 * (OpExecutorImpl::SetRepeatable also answers 561000 for executors marked unrepeatable, e.g. with
 * an AI CPU or DSA task; none of the four emulated ops has one.) */
aclnnStatus aclSetAclOpExecutorRepeatable(aclOpExecutor *executor)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    emu_lock();
    if ((st = need_executor(__func__, executor)) == 0) {
        if (executor->cache_wrap)
            st = emu_error(ACLNN_ERR_INNER, __func__,
                           "executor %p is an op-cache wrapper (the same op and layout ran before): it cannot be "
                           "made repeatable", (void *)executor);
        else
            executor->repeatable = 1;
    }
    emu_unlock();
    return st;
}

/* Frees any executor (repeatable or not, e.g. one whose phase 2 never ran). */
aclnnStatus aclDestroyAclOpExecutor(aclOpExecutor *executor)
{
    int st = emu_enter(__func__);
    if (st)
        return st;
    emu_lock();
    if ((st = need_executor(__func__, executor)) == 0)
        emu_reg_release(EMU_K_EXECUTOR, executor);
    emu_unlock();
    return st;
}

/* The role at `index` of a generated executor: the position in the op definition, NULL optional
 * slots counted (hicann/opbase common/api/acl_op_api.cpp aclSetInputTensorAddr ->
 * individual_op/api/individual_op_api.cpp NnopbaseSetInputTensorAddr: index < inputs.num, and
 * extTensors[index].isNull is refused with ACLNN_ERR_PARAM_INVALID; outputs likewise in
 * NnopbaseSetOutputTensorAddr). -1 out of range, -2 a NULL slot. */
static int definition_role(const aclOpExecutor *e, size_t index, int which)
{
    size_t nin = 0;
    for (int r = 0; r < e->nroles; r++)
        nin += !e->role_is_output[r];
    if (which == 2 && index >= nin) {         /* aclSetTensorAddr: inputs, then outputs */
        index -= nin;
        which = 1;
    }
    size_t k = 0;
    for (int r = 0; r < e->nroles; r++)
        if (e->role_is_output[r] == (which == 1) && k++ == index)
            return e->t[r].handle ? r : -2;
    return -1;
}

/* which: 0 = input index, 1 = output index, 2 = inputs then outputs. The address is kept in the
 * executor, and the aclTensor given is moved too: CANN's aclSet{Input,Output,}TensorAddr call
 * tensor->SetStorageAddr(addr) on it right after the NULL check, whatever the executor
 * (hicann/opbase src/nnopbase/common/api/acl_op_api.cpp), so the caller's descriptor describes
 * `addr` from then on (here only when the call succeeds). `tensor` must be the tensor captured
 * at that index by phase 1. A NULL tensor is refused first, before the executor is looked at:
 * acl_op_api.cpp aclSet{Input,Output,}TensorAddr begin with
 * NNOPBASE_ASSERT_NULLPTR_WITH_RETURN(tensor, ACLNN_ERR_INNER_NULLPTR), whose message is
 * "<func> failed because tensor cannot be a NULL pointer." (common/inc/nnopbase_error_msg.h).
 * Index rule by executor kind: a generated executor counts the op definition's slots (see
 * definition_role). A composite executor's real aclSet*TensorAddr ignores the index and only
 * moves the tensor (acl_op_api.cpp); the emulator still checks it against the documented range,
 * "[0, number of input tensors - 1]" (docs/en/api/nnopbase/aclnn/aclSetInputTensorAddr.md),
 * counting the non-NULL tensors in parameter order. An op-cache wrapper is neither kind: the
 * real call returns OK and the wrapper keeps the addresses of its phase 1. A destroyed tensor is
 * refused right after the NULL check (see there). */
static aclnnStatus set_addr(const char *func, aclOpExecutor *e, size_t index, const aclTensor *tensor, void *addr,
                            int which)
{
    int st;
    if (!tensor)
        return emu_error(ACLNN_ERR_INNER_NULLPTR, func, "%s failed because tensor cannot be a NULL pointer.", func);
    if (!emu_is_tensor(tensor)) {
        /* A destroyed aclTensor: the real call's first act is tensor->SetStorageAddr(addr), a write
         * into freed memory (use after free), and phase 2 would read the executor's dangling
         * pointer. The closest safe model: refuse it where the NULL tensor is refused, with the
         * same status (ACLNN_ERR_INNER_NULLPTR), and count a misuse; as set_dynamic does for a
         * dead element and emu_executor_launch for a tensor destroyed before phase 2. */
        emu_note_misuse(func, "tensor %p is unknown or already destroyed", (const void *)tensor);
        return emu_error(ACLNN_ERR_INNER_NULLPTR, func, "tensor %p is unknown or already destroyed (aclDestroyTensor); "
                         "pass the live aclTensor the executor was made with", (const void *)tensor);
    }
    emu_lock();
    if ((st = need_executor(func, e))) {
        emu_unlock();
        return st;
    }
    if (e->cache_wrap) {
        if (emu_reg_kind(tensor) == EMU_K_TENSOR)
            ((aclTensor *)tensor)->data = addr;   /* moved, though the wrapper keeps its addresses */
        emu_unlock();
        return ACLNN_SUCCESS;
    }
    int role = -1;
    if (e->generated)
        role = definition_role(e, index, which);
    else if (which == 0 && index < (size_t)e->nin)
        role = e->in_role[index];
    else if (which == 1 && index < (size_t)e->nout)
        role = e->out_role[index];
    else if (which == 2 && index < (size_t)e->nin)
        role = e->in_role[index];
    else if (which == 2 && index < (size_t)(e->nin + e->nout))
        role = e->out_role[index - (size_t)e->nin];
    if (role == -2) {
        emu_unlock();
        return emu_error(ACLNN_ERR_PARAM_INVALID, func,
                         "The %zuth %s in operator %s is a null pointer. The address cannot be updated through the "
                         "aclSetTensorAddr/aclSet%sTensorAddr API", index, which == 1 ? "output" : "input", e->api,
                         which == 1 ? "Output" : "Input");
    }
    if (role < 0) {
        emu_unlock();
        return emu_error(ACLNN_ERR_PARAM_INVALID, func, "index %zu out of range (%d inputs, %d outputs)", index, e->nin, e->nout);
    }
    if (tensor != e->t[role].handle) {
        emu_unlock();
        return emu_error(ACLNN_ERR_PARAM_INVALID, func, "tensor %p is not the tensor at index %zu", (const void *)tensor, index);
    }
    e->t[role].data = addr;
    e->addr_set[role] = 1;
    if (emu_reg_kind(tensor) == EMU_K_TENSOR)   /* it is e->t[role].handle (checked above) */
        ((aclTensor *)tensor)->data = addr;
    emu_unlock();
    return ACLNN_SUCCESS;
}

aclnnStatus aclSetInputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor, void *addr)
{
    int st = emu_enter(__func__);
    return st ? st : set_addr(__func__, executor, index, tensor, addr, 0);
}

aclnnStatus aclSetOutputTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor, void *addr)
{
    int st = emu_enter(__func__);
    return st ? st : set_addr(__func__, executor, index, tensor, addr, 1);
}

aclnnStatus aclSetTensorAddr(aclOpExecutor *executor, const size_t index, aclTensor *tensor, void *addr)
{
    int st = emu_enter(__func__);
    return st ? st : set_addr(__func__, executor, index, tensor, addr, 2);
}

/* hicann/opbase src/nnopbase/common/api/acl_op_api.cpp aclSetDynamic{Input,Output,}TensorAddr:
 * tensors NULL -> 561103; relativeIndex >= the list size -> 161002; the element NULL -> 561103;
 * then the ELEMENT's storage address is set (the aclTensor itself changes: a composite executor
 * reads its tensors at phase 2, so that is all it takes; irIndex is not used); executor NULL ->
 * 561103. A generated ("Nnopbase") executor then updates its own copy
 * (individual_op_api.cpp NnopbaseSetDynamic{Input,Output}TensorAddr): irIndex must name its
 * dynamic input (output) and relativeIndex a list element, else 161002; aclSetDynamicTensorAddr
 * numbers the definition's inputs first, then its outputs (NnopbaseDynamicIsInput).
 * which: 0 input, 1 output, 2 either. Emulator additions: a dead list/element/executor is a
 * misuse + 561103. */
static aclnnStatus set_dynamic(const char *func, aclOpExecutor *e, size_t irIndex, size_t relativeIndex,
                               aclTensorList *tensors, void *addr, int which)
{
    int st = 0;
    emu_lock();
    if (!tensors) {
        st = emu_error(ACLNN_ERR_INNER_NULLPTR, func, "%s failed because tensors cannot be a NULL pointer.", func);
    } else if (emu_reg_kind(tensors) != EMU_K_TENSOR_LIST) {
        emu_note_misuse(func, "tensors %p is not a live aclTensorList", (void *)tensors);
        st = emu_error(ACLNN_ERR_INNER_NULLPTR, func, "tensors %p is not a live aclTensorList", (void *)tensors);
    } else if (relativeIndex >= tensors->size) {
        st = emu_error(ACLNN_ERR_PARAM_INVALID, func, "relativeIndex[%zu] is out of tensors size[%llu]", relativeIndex,
                       (unsigned long long)tensors->size);
    } else if (!tensors->v[relativeIndex]) {
        st = emu_error(ACLNN_ERR_INNER_NULLPTR, func, "tensor %zu of the list is nullptr", relativeIndex);
    } else if (!emu_is_tensor(tensors->v[relativeIndex])) {
        emu_note_misuse(func, "tensor %zu of the list is not a live aclTensor", relativeIndex);
        st = emu_error(ACLNN_ERR_INNER_NULLPTR, func, "tensor %zu of the list is not a live aclTensor", relativeIndex);
    } else {
        tensors->v[relativeIndex]->data = addr;
        if ((st = need_executor(func, e)) == 0 && e->generated) {
            size_t ir = irIndex;
            int out = which == 1;
            if (which == 2 && irIndex >= (size_t)e->ir_inputs) {
                out = 1;
                ir = irIndex - (size_t)e->ir_inputs;
            }
            int dir = out ? e->dyn_out.ir : e->dyn_in.ir, first = out ? e->dyn_out.first : e->dyn_in.first;
            int n = out ? e->dyn_out.n : e->dyn_in.n;
            if (n == 0 || ir != (size_t)dir)
                st = emu_error(ACLNN_ERR_PARAM_INVALID, func, "%s %zu of operator %s is not a dynamic (tensor-list) parameter",
                               out ? "output" : "input", ir, e->api);
            else if (relativeIndex >= (size_t)n)
                st = emu_error(ACLNN_ERR_PARAM_INVALID, func, "relativeIndex %zu is out of the %d tensors of %s %zu",
                               relativeIndex, n, out ? "output" : "input", ir);
            else {
                e->t[first + (int)relativeIndex].data = addr;
                e->addr_set[first + (int)relativeIndex] = 1;
            }
        }
    }
    emu_unlock();
    return st;
}

aclnnStatus aclSetDynamicInputTensorAddr(aclOpExecutor *executor, size_t irIndex, const size_t relativeIndex,
                                         aclTensorList *tensors, void *addr)
{
    int st = emu_enter(__func__);
    return st ? st : set_dynamic(__func__, executor, irIndex, relativeIndex, tensors, addr, 0);
}

aclnnStatus aclSetDynamicOutputTensorAddr(aclOpExecutor *executor, size_t irIndex, const size_t relativeIndex,
                                          aclTensorList *tensors, void *addr)
{
    int st = emu_enter(__func__);
    return st ? st : set_dynamic(__func__, executor, irIndex, relativeIndex, tensors, addr, 1);
}

aclnnStatus aclSetDynamicTensorAddr(aclOpExecutor *executor, size_t irIndex, const size_t relativeIndex,
                                    aclTensorList *tensors, void *addr)
{
    int st = emu_enter(__func__);
    return st ? st : set_dynamic(__func__, executor, irIndex, relativeIndex, tensors, addr, 2);
}

/* ========================================================================================== */
/* Phase 2                                                                                     */
/* ========================================================================================== */
/* Byte range [*lo, *lo + *len) touched by a non-empty view; 0 for an empty one. */
static int view_span(const emu_tview *v, char *base, char **lo, uint64_t *len)
{
    size_t es = emu_dtype_size(v->dtype);
    int64_t mn = v->offset, mx = v->offset;
    for (int i = 0; i < v->ndim; i++) {
        if (v->dims[i] <= 0)
            return 0;
        int64_t ext = v->strides[i] * (v->dims[i] - 1);
        if (ext < 0)
            mn += ext;
        else
            mx += ext;
    }
    *lo = base + mn * (int64_t)es;
    *len = (uint64_t)(mx - mn + 1) * es;
    return 1;
}

/* The kernel queued in place of the op's when a tensor's address is not device memory. Phase 2
 * does not look at the addresses (hicann/opbase CommonOpExecutorRun launches the kernels, and a
 * launch is asynchronous): on a device the kernel's out-of-bounds access is an AI Core exception,
 * the status of the failed task that the next aclrtSynchronizeStream returns (hicann/runtime
 * src/runtime/core/src/common/errcode_manage.cc: RT_ERROR_TSFW_AICORE_EXCEPTION ->
 * ACL_ERROR_RT_AICORE_EXCEPTION; an AIV-only kernel reports ACL_ERROR_RT_VECTOR_CORE_EXCEPTION).
 * It touches no memory. */
static int kernel_fault(aclOpExecutor *e)
{
    if (e->fault_role < 0)                    /* the workspace: NULL, though phase 1 asked for some */
        return emu_error(ACL_ERROR_RT_AICORE_EXCEPTION, e->api,
                         "aicore exception: the kernels' workspace (%llu bytes, as phase 1 reported) is at NULL: "
                         "allocate workspaceSize bytes with aclrtMalloc and pass them to phase 2",
                         (unsigned long long)e->workspace);
    const emu_tview *v = &e->t[e->fault_role];
    return emu_error(ACL_ERROR_RT_AICORE_EXCEPTION, e->api,
                     "aicore exception: %s tensor %d at %p is not inside a live aclrtMalloc allocation "
                     "(host pointer or freed memory?)", e->role_is_output[e->fault_role] ? "output" : "input",
                     e->fault_role, v->data);
}

/*
 * The second phase of every operator. Order:
 *   injected fault / unknown executor (561103, misuse; nothing to free) / a generated executor's
 *   workspace checks (161001, 161002: not consumed)
 *   -> from here on a non-repeatable executor is consumed (freed) whatever the result ->
 *   an executor of the other kind of op (561103, misuse; one of the same kind runs as the op that
 *   made it) -> no context (107002) -> bad stream (361001) -> workspace NULL with workspaceSize
 *   > 0 (161001) -> a generated op's workspaceSize smaller than phase 1 asked (161002) ->
 *   workspace not device memory (361001) ->
 *   a captured tensor destroyed since phase 1 (561103) -> the op's launch-time faults
 *   (CrossEntropyLossGrad: 361001) -> the kernel is queued on the stream and runs later
 *   (emu_rt_streams.c, "Stream queues"). A tensor not in device memory (misuse) queues kernel_fault
 *   instead, whose 507015 the next synchronisation returns; so does a composite
 *   op's NULL workspace where phase 1 asked for some.
 */
static aclnnStatus launch(const char *api, int generated_api, void *workspace, uint64_t workspaceSize,
                          aclOpExecutor *executor, aclrtStream stream)
{
    int fault = emu_enter(api);
    if (!executor)
        return fault ? fault : emu_error(ACLNN_ERR_PARAM_NULLPTR, api, "executor is nullptr");

    /* Take a private copy of the executor under the lock, consuming it if not repeatable. */
    aclOpExecutor *e = malloc(sizeof *e);
    if (!e)
        return emu_error(ACLNN_ERR_INNER, api, "out of memory");
    emu_lock();
    int st = need_executor(api, executor);
    if (st) {
        emu_unlock();
        free(e);
        return fault ? fault : st;
    }
    /* A generated op's phase 2 is NnopbaseRunWithWorkspace (hicann/opbase
     * src/nnopbase/individual_op/api/individual_op_api.cpp): workspaceLen > 0 with a NULL
     * workspace -> 161001, then workspaceLen below the executor's workspace -> 161002, both
     * returned before NnopbaseExecutorRunWithWorkspace: the executor is not run, so not consumed
     * (it may be launched again). A composite op's phase 2 consumes it (steps 6-7 below). */
    if (!fault && executor->generated && strcmp(executor->api, api) == 0) {
        if (workspaceSize > 0 && !workspace)
            st = emu_error(ACLNN_ERR_PARAM_NULLPTR, api, "workspace is nullptr but workspaceSize is %llu "
                           "(the executor was not run: it is still live)", (unsigned long long)workspaceSize);
        else if (workspaceSize < executor->workspace)
            st = emu_error(ACLNN_ERR_PARAM_INVALID, api, "The passed workspace size %llu does not meet the minimum "
                           "workspace size %llu actually required by the operator (the executor was not run: it is "
                           "still live)", (unsigned long long)workspaceSize, (unsigned long long)executor->workspace);
        if (st) {
            emu_unlock();
            free(e);
            return st;
        }
    }
    *e = *executor;
    if (!e->repeatable)
        emu_reg_release(EMU_K_EXECUTOR, executor);
    emu_unlock();

    if (fault) {
        st = fault;
        goto out;
    }
    /* An executor of another operator. Phase 2 does not know which operator made the executor:
     * a composite op's phase 2 (hicann/opbase op_executor.cpp CommonOpExecutorRun) runs whatever
     * kernels the aclOpExecutor holds, and a generated op's (individual_op_api.cpp
     * NnopbaseRunWithWorkspace) runs the NnopbaseExecutor's own opType; so an executor of the same
     * kind runs as the operator that made it. Across the kinds each reads the other's object as
     * its own (PtrCastTo): undefined behaviour on a device, refused here (misuse + 561103). */
    if (strcmp(e->api, api) != 0 && e->generated != generated_api) {
        emu_note_misuse(api, "executor made by %sGetWorkspaceSize", e->api);
        st = emu_error(ACLNN_ERR_INNER_NULLPTR, api,
                       "%s was given an executor made by %sGetWorkspaceSize: a %s executor, which %s would read as "
                       "its own kind (undefined behaviour on a device); launch it with %s", api, e->api,
                       e->generated ? "generated (nnopbase)" : "composite (aclOpExecutor)",
                       generated_api ? "NnopbaseRunWithWorkspace" : "CommonOpExecutorRun", e->api);
        goto out;
    }
    if ((st = emu_need_context())) {
        st = emu_error(st, api, st == ACL_ERROR_RT_CONTEXT_NULL
                                    ? "no current context in this thread (call aclrtSetDevice or aclrtSetCurrentContext in this thread first)"
                                    : "acl is not initialized (call aclInit first)");
        goto out;
    }
    if ((st = emu_check_stream(stream))) {
        if (st == ACL_ERROR_RT_PARAM_INVALID)
            emu_note_misuse(api, "unknown or destroyed stream %p", stream);
        st = emu_error(ACLNN_ERR_RUNTIME_ERROR, api, "stream %p: %s", stream,
                       st == ACL_ERROR_RT_PARAM_INVALID ? "unknown or already destroyed" : "belongs to another context");
        goto out;
    }
    /* The workspace. Both phase-2 runners look at the workspaceSize argument, not at what phase 1
     * reported (hicann/opbase op_executor.cpp CommonOpExecutorRun, individual_op_api.cpp
     * NnopbaseRunWithWorkspace): NULL with a size > 0 is 161001. Only the generated one compares
     * the size with the executor's (161002, "does not meet the minimum workspace size"); a
     * composite executor's kernels just use the address they get, so a NULL one (with size 0)
     * is their fault at the next synchronisation (the kernel_fault below). */
    char via[128] = "";                       /* an executor of another op of the same kind: name it */
    if (strcmp(e->api, api) != 0)
        snprintf(via, sizeof via, " (an executor of %s, which it runs)", e->api);
    if (workspaceSize > 0 && !workspace) {
        st = emu_error(ACLNN_ERR_PARAM_NULLPTR, api, "workspace is nullptr but workspaceSize is %llu (phase 1 asked for %llu)%s",
                       (unsigned long long)workspaceSize, (unsigned long long)e->workspace, via);
        goto out;
    }
    if (e->generated && workspaceSize < e->workspace) {
        st = emu_error(ACLNN_ERR_PARAM_INVALID, api, "The passed workspace size %llu does not meet the minimum workspace "
                       "size %llu actually required by the operator%s", (unsigned long long)workspaceSize,
                       (unsigned long long)e->workspace, via);
        goto out;
    }
    int null_workspace = e->workspace_used && !workspace;
    if (e->workspace > 0 && workspace && !emu_device_range_ok(workspace, e->workspace)) {
        emu_note_misuse(api, "workspace %p is not %llu bytes of device memory", workspace, (unsigned long long)e->workspace);
        st = emu_error(ACLNN_ERR_RUNTIME_ERROR, api, "workspace %p (+%llu bytes) is not inside a live aclrtMalloc allocation",
                       workspace, (unsigned long long)e->workspace);
        goto out;
    }
    if (!e->kernel) {                         /* empty-tensor fast path: no kernel, nothing written */
        st = ACLNN_SUCCESS;
        goto out;
    }
    const void *lo_of[EMU_MAX_ROLES + 1];
    uint64_t len_of[EMU_MAX_ROLES + 1];
    int writes_of[EMU_MAX_ROLES + 1], n = 0, fault_role = -1;
    if (e->workspace > 0 && workspace) {      /* the kernel's scratch memory */
        lo_of[n] = workspace, len_of[n] = e->workspace, writes_of[n++] = 1;
    }
    for (int r = 0; r < e->nroles; r++) {
        emu_tview *v = &e->t[r];
        if (!v->handle)
            continue;
        emu_lock();
        int live = emu_is_tensor(v->handle);
        if (live && !e->addr_set[r])
            v->data = v->handle->data;        /* current address of the handle */
        emu_unlock();
        if (!live) {
            emu_note_misuse(api, "tensor %p (parameter %d) destroyed between phase 1 and phase 2", (const void *)v->handle, r);
            st = emu_error(ACLNN_ERR_INNER_NULLPTR, api, "tensor %p was destroyed before phase 2", (const void *)v->handle);
            goto out;
        }
        char *lo;
        uint64_t len;
        if (!view_span(v, v->data, &lo, &len))
            continue;
        if (!emu_device_range_ok(lo, len)) {
            /* past the bytes asked for but inside the allocated block (emu_device_block_ok): the
             * kernel reads garbage there or writes unseen, it does not fault */
            int in_block = emu_device_block_ok(lo, len);
            emu_note_misuse(api, "%s tensor %d: [%p, +%llu bytes) is not inside a live aclrtMalloc allocation%s",
                            e->role_is_output[r] ? "output" : "input", r, (void *)lo, (unsigned long long)len,
                            in_block ? " (but inside its padded block: no fault on a device)" : "");
            if (!in_block) {
                if (fault_role < 0)
                    fault_role = r;
                continue;
            }
        }
        lo_of[n] = lo, len_of[n] = len, writes_of[n++] = e->role_is_output[r];
    }
    /* The kernel reaches device memory through its host alias (emu_rt_memory.c, "Device memory"):
     * each tensor's base moves by its block's alias offset (found from the bytes it touches). */
    for (int r = 0; r < e->nroles; r++) {
        emu_tview *v = &e->t[r];
        char *lo;
        uint64_t len;
        if (v->handle && view_span(v, v->data, &lo, &len) && emu_device_block_ok(lo, len))
            v->data = (char *)v->data + ((char *)emu_host_alias(lo) - lo);
    }
    if (null_workspace)
        fault_role = -1;                      /* kernel_fault reports the workspace */
    if (fault_role >= 0 || null_workspace) {  /* the launch succeeds; the kernel faults */
        e->fault_role = fault_role;
        e->kernel = kernel_fault;
    } else if (e->check && (st = e->check(e))) {
        goto out;
    }
    /* Phase 2 only queues the kernel: it runs when the stream gets to it (emu_rt_streams.c, "Stream
     * queues"). The private copy `e` holds the addresses read above, as a launched task holds
     * its arguments: the aclTensors may be destroyed once phase 2 has returned. */
    /* A composite default executor that was launched (and so deleted) fills the op cache; the
     * queue owns `e` from here on (see emu_opcache.c). */
    uint64_t cache_key = (!e->repeatable && !e->cache_wrap) ? e->cache_key : 0;
    st = emu_enqueue_kernel(stream, api, e, lo_of, len_of, writes_of, n);
    if (st == ACLNN_SUCCESS && cache_key)
        emu_op_cache_add(cache_key);
    return st;
out:
    if (st == ACLNN_SUCCESS && e->cache_key && !e->repeatable && !e->cache_wrap)
        emu_op_cache_add(e->cache_key);        /* the empty-tensor fast path ran too */
    free(e);
    return st;
}

EMU_EXPORT aclnnStatus emu_executor_launch(const char *api, void *workspace, uint64_t workspaceSize,
                                           aclOpExecutor *executor, aclrtStream stream)
{
    return launch(api, 0, workspace, workspaceSize, executor, stream);
}

EMU_EXPORT aclnnStatus emu_executor_launch_generated(const char *api, void *workspace, uint64_t workspaceSize,
                                                     aclOpExecutor *executor, aclrtStream stream)
{
    return launch(api, 1, workspace, workspaceSize, executor, stream);
}
