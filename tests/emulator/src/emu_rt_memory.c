/*
 * emu_rt_memory.c - libascendcl.so / libacl_rt.so: the allocation tables, device memory
 * (aclrtMalloc/aclrtFree: see "Device memory"), pinned host memory, aclrtMemcpy(Async) and
 * aclrtMemset(Async) with each layer's checks in the real order, aclrtGetMemInfo.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "emu_internal.h"

/* ---- allocation tables ---- */
static int table_add(alloc_table *t, void *p, size_t size, size_t block, char *alias, size_t map, int32_t device)
{
    if (t->n == t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        alloc_rec *v = realloc(t->v, cap * sizeof *v);
        if (!v)
            return -1;
        t->v = v;
        t->cap = cap;
    }
    t->v[t->n].p = p;
    t->v[t->n].size = size;
    t->v[t->n].block = block;
    t->v[t->n].alias = alias;
    t->v[t->n].map = map;
    t->v[t->n].device = device;
    t->n++;
    t->bytes += size;
    return 0;
}

/* Index of the allocation starting exactly at p, or -1. */
static long table_find(const alloc_table *t, const void *p)
{
    for (size_t i = 0; i < t->n; i++)
        if (t->v[i].p == p)
            return (long)i;
    return -1;
}

static void table_remove(alloc_table *t, size_t i)
{
    t->bytes -= t->v[i].size;
    t->v[i] = t->v[--t->n];
}

/* 1 when [p, p+bytes) is inside one allocation of the table. */
int table_contains(const alloc_table *t, const void *p, uint64_t bytes)
{
    const char *c = p;
    for (size_t i = 0; i < t->n; i++) {
        const char *b = t->v[i].p;
        if (c >= b && c <= b + t->v[i].size && bytes <= (uint64_t)(b + t->v[i].size - c))
            return 1;
    }
    return 0;
}

EMU_EXPORT int emu_device_range_ok(const void *p, uint64_t bytes)
{
    emu_lock();
    int ok = p && table_contains(&g_dev_mem, p, bytes);
    emu_unlock();
    return ok;
}

/* 1 when [p, p+bytes) is inside the block of one allocation of the table (see padded_size). */
int table_block_contains(const alloc_table *t, const void *p, uint64_t bytes)
{
    const char *c = p;
    for (size_t i = 0; i < t->n; i++) {
        const char *b = t->v[i].p;
        if (c >= b && c <= b + t->v[i].block && bytes <= (uint64_t)(b + t->v[i].block - c))
            return 1;
    }
    return 0;
}

/* What a kernel may touch without a page fault: the whole block the runtime allocated, bytes past
 * the ones asked for included (a device has no finer protection; they hold garbage). */
EMU_EXPORT int emu_device_block_ok(const void *p, uint64_t bytes)
{
    emu_lock();
    int ok = p && table_block_contains(&g_dev_mem, p, bytes);
    emu_unlock();
    return ok;
}

static int malloc_fill_byte(void)
{
    const char *s = getenv("EMU_MALLOC_FILL");
    if (s && *s)
        return (int)(strtol(s, NULL, 0) & 0xff);
    return 0xff;                              /* 0xffffffff is a NaN for f32/f16/bf16 */
}

/* ========================================================================================== */
/* Memory                                                                                      */
/* ========================================================================================== */
static int policy_ok(aclrtMemMallocPolicy policy)
{
    uint32_t p = (uint32_t)policy;
    uint32_t high = p & ~0xffu;
    return (p & 0xffu) <= 7u &&
           (high & ~(uint32_t)(ACL_MEM_TYPE_LOW_BAND_WIDTH | ACL_MEM_TYPE_HIGH_BAND_WIDTH |
                               ACL_MEM_ACCESS_USER_SPACE_READONLY)) == 0;
}

/* The block aclrtMalloc really gets for `size` bytes: hicann/runtime src/acl/aclrt_impl/memory.cpp
 * aclMallocMemInner -> GetAlignedAndPaddingSize: (size + 32 + padding - 1) / 32 * 32, the padding
 * being the SoC's AICoreSpec padding_size (DATA_MEMORY_PADDING_SIZE, 32, by default), none for
 * the HUGE1G policies; ApiImpl::DevMalloc (api_impl.cc) then aligns it to 32 again. So 8 bytes
 * asked for are a 64-byte block: a kernel reading past the 8 bytes stays inside it and reads
 * garbage; no page fault. */
size_t padded_size(size_t size, aclrtMemMallocPolicy policy)
{
    uint32_t low = (uint32_t)policy & 0xffu;
    int pad = low != ACL_MEM_MALLOC_HUGE1G_ONLY && low != ACL_MEM_MALLOC_HUGE1G_ONLY_P2P;
    return ((size + 31) & ~(size_t)31) + (pad ? 32 : 0);
}

/* ---- Device memory ----
 * On a device, aclrtMalloc memory is HBM: the host cannot load or store through a device address
 * (hicann/runtime api_impl.cc ApiImpl::DevMalloc -> Driver::DevMemAlloc, device memory; only
 * aclrtMemcpy/aclrtMemset and kernels reach it). The emulator maps each block twice from a memfd:
 * the address handed out is PROT_NONE, so a host read or write through it faults (SIGSEGV), and a
 * private read-write alias is what copies, memsets and kernels use (emu_host_alias). The
 * mappings are whole pages; the bytes past the block are no device memory all the same (the
 * range checks use the block). NULL when the system refuses (out of memory). */
static void *device_map(size_t block, char **alias, size_t *map)
{
    long page = sysconf(_SC_PAGESIZE);
    size_t len = (block + (size_t)page - 1) / (size_t)page * (size_t)page;
    int fd = memfd_create("emu-device-memory", MFD_CLOEXEC);
    if (fd < 0)
        return NULL;
    void *a = MAP_FAILED, *d = MAP_FAILED;
    if (ftruncate(fd, (off_t)len) == 0) {
        a = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (a != MAP_FAILED)
            d = mmap(NULL, len, PROT_NONE, MAP_SHARED, fd, 0);
    }
    close(fd);                                /* the mappings keep the memory */
    if (d == MAP_FAILED) {
        if (a != MAP_FAILED)
            munmap(a, len);
        return NULL;
    }
    memset(a, malloc_fill_byte(), len);       /* "uninitialised" memory: NaN bytes by default */
    *alias = a;
    *map = len;
    return d;
}

/* Where the host reaches the device byte at `p`: `p` itself unless it lies in a device block
 * (then its alias). Copies, memsets and kernels go through this. */
EMU_EXPORT void *emu_host_alias(const void *p)
{
    const char *c = p;
    void *r = (void *)p;
    emu_lock();
    for (size_t i = 0; c && i < g_dev_mem.n; i++) {
        const alloc_rec *a = &g_dev_mem.v[i];
        if (c >= a->p && c < a->p + a->map) {
            r = a->alias + (c - a->p);
            break;
        }
    }
    emu_unlock();
    return r;
}

static void *aligned_alloc64(size_t size)
{
    void *p = NULL;
    size_t real = ((size + 31) & ~(size_t)31) + 32;   /* every block fits (padded_size) */
    if (posix_memalign(&p, 64, real) != 0)
        return NULL;
    memset(p, malloc_fill_byte(), real);      /* "uninitialised" memory: NaN bytes by default */
    return p;
}

/* 1 when the device has room for a block of ``block`` bytes. The driver allocates every block,
 * rounded up to 512 bytes (MEM_SET_ALIGN_SIZE(9): hicann/runtime src/runtime/driver/npu_driver_mem.cc
 * NpuDriver::DevMemAllocOnline), from the device's memory: the NPU Simulator's pool
 * (emu_driver.c emu_drv_hbm_size; hicann/runtime src/cmodel_driver/driver_mem.c drvMemAlloc), else
 * EMU_DEVICE_MEM_TOTAL. Beyond it halMemAlloc fails with DRV_ERROR_OUT_OF_MEMORY, which the runtime
 * reports as ACL_ERROR_RT_MEMORY_ALLOCATION (src/runtime/core/src/common/errcode_manage.cc:
 * DRV_ERROR_OUT_OF_MEMORY -> RT_ERROR_DRV_OUT_MEMORY -> ACL_ERROR_RT_MEMORY_ALLOCATION, "driver
 * error:out of memory"; ApiImpl::DevMalloc in api_impl.cc retries once after trimming the memory
 * pools, then returns it). Checked before anything is mapped: a block the device cannot hold fails
 * at once (1 << 36 bytes, padded past the 64 GiB, used to be mapped and filled for a minute).
 * The pool is first-fit, so fragmentation can refuse earlier than this sum (not modelled). */
static uint64_t device_pool(void)
{
    uint64_t pool = emu_keeper_device_memory();
    return pool ? pool : EMU_DEVICE_MEM_TOTAL;
}

static int device_pool_fits(size_t block)
{
    uint64_t pool = device_pool(), used = 0, want = ((uint64_t)block + 511) & ~511ull;
    emu_lock();
    for (size_t i = 0; i < g_dev_mem.n; i++)
        used += ((uint64_t)g_dev_mem.v[i].block + 511) & ~511ull;
    emu_unlock();
    return want <= pool && used + want <= pool;
}

/* 1 when this host could back a block of ``bytes`` (the emulated device memory is host memory,
 * filled when it is mapped): a block larger than the host's RAM is out of memory on the emulated
 * device too (ACL_ERROR_RT_MEMORY_ALLOCATION), not a process killed by the OOM killer. */
static int host_can_back(uint64_t bytes)
{
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
    return pages <= 0 || page <= 0 || bytes <= (uint64_t)pages * (uint64_t)page;
}

/* The shared second half of aclrtMalloc / aclrtMallocHost, after their own argument checks:
 * allocate ``size`` bytes and record the block in ``t`` (``side``: "device" or "host"). */
static aclError alloc_tracked(const char *func, alloc_table *t, const char *side, size_t size, size_t block,
                              int32_t device, void **out)
{
    if (t != &g_dev_mem && size > EMU_DEVICE_MEM_TOTAL)
        return emu_error(ACL_ERROR_RT_MEMORY_ALLOCATION, func, "out of %s memory (%zu bytes requested)", side, size);
    if (t == &g_dev_mem && !device_pool_fits(block))
        return emu_error(ACL_ERROR_RT_MEMORY_ALLOCATION, func,
                         "driver error:out of memory (device memory: %llu bytes, of which %llu in use; %zu requested)",
                         (unsigned long long)device_pool(), (unsigned long long)g_dev_mem.bytes, block);
    if (!host_can_back(block))
        return emu_error(ACL_ERROR_RT_MEMORY_ALLOCATION, func,
                         "out of %s memory (%zu bytes requested: more than the RAM of the host backing the emulator)",
                         side, block);
    char *alias = NULL;
    size_t map = 0;
    void *p = t == &g_dev_mem ? device_map(block, &alias, &map) : aligned_alloc64(size);
    if (!p)
        return emu_error(ACL_ERROR_RT_MEMORY_ALLOCATION, func, "out of %s memory (%zu bytes requested)", side, size);
    emu_lock();
    int bad = table_add(t, p, size, block, alias, map, device);
    emu_unlock();
    if (bad) {
        release_block(p, alias, map);
        return emu_error(ACL_ERROR_RT_MEMORY_ALLOCATION, func, "out of memory");
    }
    *out = p;
    return ACL_SUCCESS;
}

/* The shared second half of aclrtFree / aclrtFreeHost: forget a block recorded in ``t`` and free
 * it; an unknown pointer (a double free) is refused and counted as misuse. */
static aclError free_tracked(const char *func, alloc_table *t, const char *side, const char *allocator, void *ptr)
{
    emu_lock();
    long i = table_find(t, ptr);
    size_t size = i >= 0 ? t->v[i].block : 0;
    char *alias = i >= 0 ? t->v[i].alias : NULL;
    size_t map = i >= 0 ? t->v[i].map : 0;
    if (i >= 0)
        table_remove(t, (size_t)i);
    emu_stream *s = NULL;
    emu_task *user = i >= 0 && g_queued ? queued_user(ptr, size, 1, &s) : NULL;
    grave *g = user ? malloc(sizeof *g) : NULL;
    if (g) {                                  /* freed under queued work: poison, keep aside */
        memset(alias ? alias : ptr, EMU_POISON, size);
        g->p = ptr;
        g->alias = alias;
        g->map = map;
        g->next = g_graves;
        g_graves = g;
    }
    const char *api = user ? user->api : NULL;
    emu_unlock();
    if (i < 0) {
        emu_note_misuse(func, "free of unknown %s pointer %p (double free?)", side, ptr);
        return emu_error(ACL_ERROR_RT_PARAM_INVALID, func, "%p is not an %s'd address (double free%s?)", ptr,
                         allocator, t == &g_dev_mem ? ", or freed with its device by the last aclrtResetDevice" : "");
    }
    if (user)   /* CANN frees at once (ApiImpl::DevFree): the queued task would use freed memory */
        emu_note_misuse(func, "%s memory %p freed while %s queued on stream %p still uses it (synchronize first)",
                        side, ptr, api, (void *)s);
    if (!g && i >= 0)
        release_block(ptr, alias, map);
    return ACL_SUCCESS;
}

aclError aclrtMalloc(void **devPtr, size_t size, aclrtMemMallocPolicy policy)
{
    API_ENTER(INIT);                          /* a failure leaves *devPtr untouched */
    NEED_ARG(devPtr);
    if (size == 0)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "size must not be 0");
    /* memory.cpp aclMallocMemInner -> GetAlignedAndPaddingSize: size + the alignment (32) and
     * padding (32; none for the HUGE1G policies) must not wrap around, else ACL_ERROR_INVALID_PARAM
     * "size too large", before the runtime is asked */
    int huge1g = policy == ACL_MEM_MALLOC_HUGE1G_ONLY || policy == ACL_MEM_MALLOC_HUGE1G_ONLY_P2P;
    if (size > SIZE_MAX - (huge1g ? 32 : 64))
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "size too large: %zu", size);
    if (!policy_ok(policy))
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "policy %d is invalid", (int)policy);
    NEED_CTX(__func__);
    emu_lock();
    emu_ctx *c = cur_ctx();
    int32_t device = c ? c->device : 0;
    emu_unlock();
    return alloc_tracked(__func__, &g_dev_mem, "device", size, padded_size(size, policy), device, devPtr);
}

aclError aclrtFree(void *devPtr)
{
    API_ENTER(INIT);
    NEED_ARG(devPtr);
    return free_tracked(__func__, &g_dev_mem, "device", "aclrtMalloc", devPtr);
}

aclError aclrtMallocHost(void **hostPtr, size_t size)
{
    API_ENTER(INIT);
    NEED_ARG(hostPtr);
    if (size == 0)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "size must not be 0");
    return alloc_tracked(__func__, &g_host_mem, "host", size, size, -1, hostPtr);
}

aclError aclrtFreeHost(void *hostPtr)
{
    API_ENTER(INIT);
    NEED_ARG(hostPtr);
    return free_tracked(__func__, &g_host_mem, "host", "aclrtMallocHost", hostPtr);
}

/* The device closes (its last context is gone: the last aclrtResetDevice, or the destroy of the
 * last context made on it after that): its memory goes with it. hicann/runtime src/runtime/core/src/
 * runtime.cc Runtime::DeviceRelease -> FinalizeDeviceRelease deletes the Device, whose destructor
 * (src/runtime/core/src/device/raw_device.cc RawDevice::~RawDevice -> ReleaseDriverResourcesOnDestroy)
 * calls NpuDriver::DeviceClose -> halDeviceClose; the driver closes each component
 * (hicann/driver src/ascend_hal/pbl/commlib/drv_comm_intf.h drv_close_handlers), memory's being
 * drvMemDeviceCloseInner (src/ascend_hal/svm/v2/devmm/devmm_svm.c _drvMemDeviceCloseInner), which
 * destroys every heap of the device (devmm_heap_close -> devmm_virt_destroy_heap): what aclrtMalloc
 * returned there is unmapped. A later aclrtFree of such a pointer finds no heap (devmm_free_managed_nomal:
 * DRV_ERROR_INVALID_VALUE -> RT_ERROR_DRV_INPUT -> ACL_ERROR_RT_PARAM_INVALID, errcode_manage.cc), as
 * free_tracked answers an unknown pointer; a kernel on it faults (emu_nnopbase.c). Pinned host memory
 * (aclrtMallocHost) is in the host agent's heaps, which that close keeps. The queued work of the
 * device's streams ran before (the contexts' teardown drains them). Lock held. */
void device_memory_release(int32_t device)
{
    for (size_t i = 0; i < g_dev_mem.n;) {
        alloc_rec a = g_dev_mem.v[i];
        if (a.device != device) {
            i++;
            continue;
        }
        table_remove(&g_dev_mem, i);          /* (the last record moves to i) */
        release_block(a.p, a.alias, a.map);
    }
}

/* ---- aclrtMemcpy(Async) / aclrtMemset(Async): the checks of each layer, in the real order ----
 *
 * 1. The acl layer (hicann/runtime src/acl/aclrt_impl/memory.cpp aclrtMemcpyImpl,
 *    aclrtMemcpyAsyncImpl, aclrtMemsetImpl, aclrtMemsetAsyncImpl; the C build
 *    src/acl/aclrt_c/runtime/memory.c alike): count 0 is a success before anything else is looked
 *    at; then a NULL pointer (ACL_REQUIRES_NOT_NULL_WITH_INPUT_REPORT) and, for copies, the kind
 *    (MemcpyKindTranslate knows HOST_TO_HOST ... HOST_TO_BUF_TO_DEVICE only: INNER_ and
 *    INTER_DEVICE_TO_DEVICE are refused there), all ACL_ERROR_INVALID_PARAM. No context yet.
 * 2. The runtime's entry points (src/runtime/api/api_c.cc rtMemcpyAsync / rtMemsetAsync) validate
 *    the stream handle (RT_VALIDATE_AND_UNWRAP_OBJECT) before the parameter checks.
 * 3. The parameter checks of src/runtime/api/impl/api_error.cc (ApiErrorDecorator::MemCopySync,
 *    ::MemcpyAsync, ::MemsetAsync): cnt > destMax is RT_ERROR_INVALID_VALUE, which
 *    src/runtime/core/src/common/errcode_manage.cc maps to ACL_ERROR_RT_PARAM_INVALID (107000).
 *    ApiErrorDecorator::MemSetSync has no such check: for aclrtMemset it is the driver's
 *    (hicann/driver src/ascend_hal/svm/v2/devmm/devmm_svm.c drvMemsetD8Inner: dest_max < num ->
 *    DRV_ERROR_INVALID_VALUE -> RT_ERROR_DRV_INPUT -> 107000 too), after the context.
 * 4. Only then the current context (api_impl.cc ApiImpl::MemCopySync / MemcpyAsync / MemSetSync /
 *    MemsetAsync: CHECK_CONTEXT_VALID_WITH_RETURN -> ACL_ERROR_RT_CONTEXT_NULL), then the memory.
 */

/* Step 1. Returns -1 for count 0 (nothing to do: the call succeeds), else 0 or the status. */
static int acl_memcpy_checks(const char *func, const void *dst, const void *src, size_t count, aclrtMemcpyKind kind)
{
    if (count == 0)
        return -1;
    if (!dst || !src)
        return emu_error(ACL_ERROR_INVALID_PARAM, func, "%s is nullptr", !dst ? "dst" : "src");
    if ((int)kind < ACL_MEMCPY_HOST_TO_HOST || (int)kind > ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE)
        return emu_error(ACL_ERROR_INVALID_PARAM, func, "kind %d is invalid (HOST_TO_HOST .. HOST_TO_BUF_TO_DEVICE)",
                         (int)kind);
    return 0;
}

/* Step 3 (and the driver's check of aclrtMemset). */
static int max_check(const char *func, const char *max_name, size_t max, size_t count)
{
    if (count > max)
        return emu_error(ACL_ERROR_RT_PARAM_INVALID, func, "count %zu exceeds %s %zu (range (0, %zu])", count,
                         max_name, max, max);
    return 0;
}

/* The device side of a copy or memset must lie in a live allocation. Neither the acl layer nor the
 * runtime looks at the address; the driver does. On A2/A3 (hicann/driver
 * src/ascend_hal/svm/v2/devmm/devmm_svm.c _drvMemcpyInner -> the DEVMM_SVM_MEMCPY ioctl,
 * src/sdk_driver/svm/v2/master/comm/svm_master_memcpy.c devmm_memcpy_proc) a range it cannot
 * resolve fails with -EINVAL or -EADDRNOTAVAIL -> DRV_ERROR_PARA_ERROR / DRV_ERROR_IOCRL_FAIL,
 * which the runtime (src/runtime/core/src/common/errcode_manage.cc GetDrvErrCode, rtErrMap_)
 * reports as ACL_ERROR_RT_DRV_INTERNAL_ERROR; the async copy's location check
 * (api_error.cc MemcpyAsyncCheckLocation -> drvMemGetAttribute) fails alike for an address in no
 * heap. aclrtMemset: drvMemsetD8Inner -> the DEVMM_SVM_MEMSET8 ioctl
 * (src/sdk_driver/svm/v2/master/comm/svm_master_memset.c devmm_ioctl_memset_device_check: no heap,
 * a range past the heap or pages not allocated -> -EINVAL) -> 507899 alike; aclrtMemsetAsync:
 * src/runtime/core/src/launch/memory_common.cc MemSetAsync -> drvMemGetAttribute (DRV_ERROR_NOT_EXIST
 * for an address in no heap -> 507899), then an async copy into it. Pinned host memory
 * (aclrtMallocHost) is in the SVM range too: memset fills it (devmm_memset_fill_pages_process).
 * The emulator reports every such range at the call: a small overrun inside a mapped page (or a
 * host address outside the SVM range, which that driver copies or sets as host memory) would go
 * unnoticed on a device, and a freed address in a still-mapped heap may surface only when the
 * queued task runs. */
static int check_device_side(const char *func, const char *what, const void *p, size_t count, int pinned_ok)
{
    if (emu_device_range_ok(p, count))
        return 0;
    if (pinned_ok) {
        emu_lock();
        int ok = table_contains(&g_host_mem, p, count);
        emu_unlock();
        if (ok)
            return 0;
    }
    emu_note_misuse(func, "%s %p (+%zu bytes) is not inside a live device allocation", what, p, count);
    return emu_error(ACL_ERROR_RT_DRV_INTERNAL_ERROR, func, "%s %p (+%zu bytes) is not inside a live device allocation", what, p, count);
}

/* Pinned host memory (aclrtMallocHost: NpuDriver::HostMemAlloc -> halMemAlloc(MEM_HOST), the SVM
 * host-pin heap) may be the "device" side of a copy: drvMemcpy takes no kind (NpuDriver::MemCopySync
 * -> MemCopySyncAdapter -> drvMemcpy; hicann/driver devmm_svm.c _drvMemcpyInner) and the SVM copy
 * picks its direction from the addresses (svm_master_memcpy.c devmm_find_memcpy_dir: HOST-SVM to
 * or from non-SVM memory is H2H). The async copy checks the kind first (memcpy_async_kind). */
static int memcpy_device_checks(const char *func, const void *dst, const void *src, size_t count, aclrtMemcpyKind kind)
{
    int st = 0;
    int dst_dev = kind == ACL_MEMCPY_HOST_TO_DEVICE || kind == ACL_MEMCPY_DEVICE_TO_DEVICE ||
                  kind == ACL_MEMCPY_HOST_TO_BUF_TO_DEVICE;
    int src_dev = kind == ACL_MEMCPY_DEVICE_TO_HOST || kind == ACL_MEMCPY_DEVICE_TO_DEVICE;
    if (dst_dev && (st = check_device_side(func, "dst", dst, count, 1)))
        return st;
    if (src_dev && (st = check_device_side(func, "src", src, count, 1)))
        return st;
    return 0;
}

/* Where memory is, for the async copy (NpuDriver::PtrGetRealLocation from drvMemGetAttribute):
 * aclrtMalloc memory is DEVICE, aclrtMallocHost memory HOST, other host memory UNREGISTERED. */
enum { LOC_DEVICE, LOC_HOST, LOC_UNREGISTERED };
static const char *const g_loc_names[] = {"device", "host (aclrtMallocHost)", "unregistered host"};

static int mem_location(const void *p, size_t count)
{
    emu_lock();
    int loc = table_contains(&g_dev_mem, p, count) ? LOC_DEVICE
              : table_contains(&g_host_mem, p, count) ? LOC_HOST : LOC_UNREGISTERED;
    emu_unlock();
    return loc;
}

/* aclrtMemcpyAsync's kind against its memory (api_error.cc MemcpyAsyncCheckLocation ->
 * MemcpyKindAutoCorrect and its MemcpyKindReviseMap; A2/A3 drivers report user-malloc attributes,
 * devmm_svm.c svm_support_get_user_malloc_attr): two known locations force the kind; with an
 * unregistered side only some kinds are allowed, others are RT_ERROR_INVALID_VALUE (107000).
 * Only H2H..D2D are looked at. Sets *kind to the kind the copy runs with. */
static int memcpy_async_kind(const char *func, const void *dst, const void *src, size_t count, aclrtMemcpyKind *kind)
{
    enum { H2H = 1 << 0, H2D = 1 << 1, D2H = 1 << 2, D2D = 1 << 3 };
    /* [src][dst]: a forced kind (>= 0), or -1 and the allowed kinds */
    static const int forced[3][3] = {{ACL_MEMCPY_DEVICE_TO_DEVICE, ACL_MEMCPY_DEVICE_TO_HOST, -1},
                                     {ACL_MEMCPY_HOST_TO_DEVICE, ACL_MEMCPY_HOST_TO_HOST, -1},
                                     {-1, -1, -1}};
    static const int allowed[3][3] = {{0, 0, D2H | D2D}, {0, 0, H2H | H2D}, {H2D | D2D, H2H | D2H, H2H | H2D | D2H | D2D}};
    if ((int)*kind > ACL_MEMCPY_DEVICE_TO_DEVICE)
        return 0;
    int s = mem_location(src, count), d = mem_location(dst, count);
    if (forced[s][d] >= 0) {
        *kind = (aclrtMemcpyKind)forced[s][d];
        return 0;
    }
    if (!(allowed[s][d] & (1 << *kind)))
        return emu_error(ACL_ERROR_RT_PARAM_INVALID, func, "kind %d does not match the memory: src is %s memory, dst is %s memory",
                         (int)*kind, g_loc_names[s], g_loc_names[d]);
    return 0;
}

aclError aclrtMemcpy(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind)
{
    API_ENTER(NONE);
    if ((st = acl_memcpy_checks(__func__, dst, src, count, kind)))
        return st < 0 ? ACL_SUCCESS : st;
    if ((st = max_check(__func__, "destMax", destMax, count)))
        return st;
    NEED_CTX(__func__);
    if ((st = capture_mode_refused(__func__)) || (st = memcpy_device_checks(__func__, dst, src, count, kind)))
        return st;
    /* no implicit stream synchronisation (api_c.cc rtMemcpy -> ApiImpl::MemCopySync): a copy
     * racing with queued work is the caller's bug */
    check_host_access(__func__, dst, count, 1);
    check_host_access(__func__, src, count, 0);
    memmove(emu_host_alias(dst), emu_host_alias(src), count);
    return ACL_SUCCESS;
}

/* After the steps above: the memory (MemcpyAsyncCheckLocation), then H2H, refused by an online
 * (host-driven) runtime with RT_ERROR_FEATURE_NOT_SUPPORT (api_error.cc MemcpyAsync; api_c.cc
 * rtMemcpyAsync: ACL_ERROR_RT_FEATURE_NOT_SUPPORT), then ApiImpl::MemcpyAsync's check that the
 * stream belongs to the current context (ACL_ERROR_RT_STREAM_CONTEXT). */
aclError aclrtMemcpyAsync(void *dst, size_t destMax, const void *src, size_t count, aclrtMemcpyKind kind,
                          aclrtStream stream)
{
    API_ENTER(NONE);
    if ((st = acl_memcpy_checks(__func__, dst, src, count, kind)))
        return st < 0 ? ACL_SUCCESS : st;
    if ((st = known_stream(__func__, stream)) || (st = max_check(__func__, "destMax", destMax, count)))
        return st;
    NEED_CTX(__func__);
    if ((st = memcpy_device_checks(__func__, dst, src, count, kind)) ||
        (st = memcpy_async_kind(__func__, dst, src, count, &kind)))
        return st;
    if (kind == ACL_MEMCPY_HOST_TO_HOST)
        return emu_error(ACL_ERROR_RT_FEATURE_NOT_SUPPORT, __func__, "ACL_MEMCPY_HOST_TO_HOST is not supported by the async copy");
    if ((st = capture_refuse_pageable(__func__, stream, dst, src, count, kind)))
        return st;
    if ((st = launch_stream(__func__, stream)) || (st = launch_fault(__func__, stream)))
        return st;
    emu_task *t = task_new(T_COPY, "aclrtMemcpyAsync");
    if (!t)
        return emu_error(ACL_ERROR_RT_MEMORY_ALLOCATION, __func__, "out of memory");
    t->dst = emu_host_alias(dst);             /* what the copy touches; the ranges stay device addresses */
    t->src = emu_host_alias(src);
    t->count = count;
    range_add(t, dst, count, 1);
    range_add(t, src, count, 0);
    task_submit(stream, t);                   /* runs when the stream gets to it */
    return ACL_SUCCESS;
}

/* Step 1 of the memsets. Returns -1 for count 0 (success), else 0 or the status. */
static int acl_memset_checks(const char *func, const void *devPtr, size_t count)
{
    if (count == 0)
        return -1;
    if (!devPtr)
        return emu_error(ACL_ERROR_INVALID_PARAM, func, "devPtr is nullptr");
    return 0;
}

/* Context (107002), then the driver: count > maxCount (107000) before the address (507899). */
aclError aclrtMemset(void *devPtr, size_t maxCount, int32_t value, size_t count)
{
    API_ENTER(NONE);
    if ((st = acl_memset_checks(__func__, devPtr, count)))
        return st < 0 ? ACL_SUCCESS : st;
    NEED_CTX(__func__);
    if ((st = capture_mode_refused(__func__)) || (st = max_check(__func__, "maxCount", maxCount, count)) ||
        (st = check_device_side(__func__, "devPtr", devPtr, count, 1)))
        return st;
    check_host_access(__func__, devPtr, count, 1);
    memset(emu_host_alias(devPtr), (int)(value & 0xff), count);
    return ACL_SUCCESS;
}

/* Stream handle, count > maxCount (ApiErrorDecorator::MemsetAsync, 107000), context (107002), the
 * stream's context (ApiImpl::MemsetAsync, 107003), then the address (MemSetAsync, 507899). */
aclError aclrtMemsetAsync(void *devPtr, size_t maxCount, int32_t value, size_t count, aclrtStream stream)
{
    API_ENTER(NONE);
    if ((st = acl_memset_checks(__func__, devPtr, count)))
        return st < 0 ? ACL_SUCCESS : st;
    if ((st = known_stream(__func__, stream)) || (st = max_check(__func__, "maxCount", maxCount, count)))
        return st;
    NEED_CTX(__func__);
    if ((st = launch_stream(__func__, stream)) || (st = check_device_side(__func__, "devPtr", devPtr, count, 1)) ||
        (st = launch_fault(__func__, stream)))
        return st;
    emu_task *t = task_new(T_MEMSET, "aclrtMemsetAsync");
    if (!t)
        return emu_error(ACL_ERROR_RT_MEMORY_ALLOCATION, __func__, "out of memory");
    t->dst = emu_host_alias(devPtr);
    t->value = (int)(value & 0xff);
    t->count = count;
    range_add(t, devPtr, count, 1);
    task_submit(stream, t);
    return ACL_SUCCESS;
}

aclError aclrtGetMemInfo(aclrtMemAttr attr, size_t *freeBytes, size_t *totalBytes)
{
    API_ENTER(CTX);
    if (!freeBytes || !totalBytes)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "free or total is nullptr");
    if ((int)attr < ACL_DDR_MEM || (int)attr > ACL_MEM_P2P_HUGE1G)
        return emu_error(ACL_ERROR_INVALID_PARAM, __func__, "attr %d is invalid", (int)attr);
    int ddr = attr == ACL_DDR_MEM || attr == ACL_DDR_MEM_HUGE || attr == ACL_DDR_MEM_NORMAL ||
              attr == ACL_DDR_MEM_P2P_HUGE || attr == ACL_DDR_MEM_P2P_NORMAL;
    emu_lock();
    uint64_t used = g_dev_mem.bytes;
    emu_unlock();
    *totalBytes = ddr ? 0 : (size_t)EMU_DEVICE_MEM_TOTAL;
    *freeBytes = ddr ? 0 : (size_t)(used > EMU_DEVICE_MEM_TOTAL ? 0 : EMU_DEVICE_MEM_TOTAL - used);
    return ACL_SUCCESS;
}
