/*
 * emu_opcache.c - the aclnn op cache (linked into the runtime library, which holds all global
 * state, so every library and the control API see one copy).
 *
 * Real CANN (hicann/opbase):
 * - include/nnopbase/opdev/op_dfx.h L2_DFX_PHASE_1: a composite (hand-written op_api) phase 1
 *   first calls op::internal::GetFromCache(); on a hit it returns ACLNN_SUCCESS at once with an
 *   OpExecCacheWrap as the executor (common/utils/op_cache.cpp GetFromCache, CreateCacheWrap).
 *   The key (op_cache.cpp AddParamToBuf) is the op plus every tensor's view shape, strides,
 *   storage shape, dtype, offset and format, and the attributes; never an address.
 * - composite_op/aclnn_engine/op_executor.cpp: an executor run by phase 2 and then deleted
 *   finalizes its OpExecCache (~OpExecutorImpl: Finalize + SetUse), so the NEXT identical phase 1
 *   hits; a repeatable executor removes its cache (OpExecutorImpl::SetRepeatable ->
 *   RemoveExecCache); a failed run marks it invalid (CommonOpExecutorRun).
 * - The cache is on by default; OpExecCacheManager::GetCacheSizeLimit reads ACLNN_CACHE_LIMIT
 *   (default K_CACHE_LIMIT = 10000); a full cache adds nothing (AddOpExecCache).
 * The emulator keeps the keys only (64-bit FNV-1a of the key bytes) and reads ACLNN_CACHE_LIMIT
 * at call time (the real one reads it once).
 */
#include <stdlib.h>

#include "emu_internal.h"

static uint64_t *g_keys;
static size_t g_n, g_cap;

static size_t cache_limit(void)
{
    const char *s = getenv("ACLNN_CACHE_LIMIT");
    if (s && *s) {
        char *end;
        unsigned long long v = strtoull(s, &end, 10);
        if (*end == 0)
            return v > 10000000ULL ? 10000000U : (size_t)v;   /* K_MAX_CACHE_LIMIT */
    }
    return 10000;                                             /* K_CACHE_LIMIT */
}

EMU_EXPORT int emu_op_cache_find(uint64_t key)
{
    int found = 0;
    emu_lock();
    for (size_t i = 0; i < g_n && !found; i++)
        found = g_keys[i] == key;
    emu_unlock();
    return found;
}

EMU_EXPORT void emu_op_cache_add(uint64_t key)
{
    emu_lock();
    int known = 0;
    for (size_t i = 0; i < g_n && !known; i++)
        known = g_keys[i] == key;
    if (!known && g_n < cache_limit()) {
        if (g_n == g_cap) {
            size_t cap = g_cap ? 2 * g_cap : 64;
            uint64_t *keys = realloc(g_keys, cap * sizeof *keys);
            if (!keys) {
                emu_unlock();
                return;                                       /* out of memory: not cached */
            }
            g_keys = keys;
            g_cap = cap;
        }
        g_keys[g_n++] = key;
    }
    emu_unlock();
}

/* Control API: forget every cached key (tests start from an empty cache). */
EMU_EXPORT void emu_clear_op_cache(void)
{
    emu_lock();
    g_n = 0;
    emu_unlock();
}

/* Control API: how many op+layout keys the cache holds. */
EMU_EXPORT int64_t emu_op_cache_entries(void)
{
    emu_lock();
    int64_t n = (int64_t)g_n;
    emu_unlock();
    return n;
}
