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
 * - The cache is per thread: common/utils/op_cache.cpp declares the manager
 *   `thread_local OpExecCacheManager g_opExecCacheManager` (and its key buffers thread_local too),
 *   so a layout launched in one thread is a miss in every other thread.
 * The emulator keeps the keys only (64-bit FNV-1a of the key bytes) and reads ACLNN_CACHE_LIMIT
 * at call time (the real one reads it once).
 */
#include <pthread.h>
#include <stdlib.h>

#include "emu_internal.h"

/* This thread's cache; emu_clear_op_cache empties every thread's by bumping the generation. */
typedef struct op_cache {
    uint64_t *keys;
    size_t n, cap;
    uint64_t gen;
} op_cache;

static __thread op_cache t_cache;
static uint64_t g_gen;                                        /* under emu_lock */
static pthread_key_t g_exit_key;                              /* frees a thread's keys at its exit */
static pthread_once_t g_exit_once = PTHREAD_ONCE_INIT;

static void exit_key_init(void) { pthread_key_create(&g_exit_key, free); }

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

/* The calling thread's cache, emptied if a clear happened since its last use. Lock held. */
static op_cache *my_cache(void)
{
    op_cache *c = &t_cache;
    if (c->gen != g_gen) {
        c->n = 0;
        c->gen = g_gen;
    }
    return c;
}

EMU_EXPORT int emu_op_cache_find(uint64_t key)
{
    int found = 0;
    emu_lock();
    op_cache *c = my_cache();
    for (size_t i = 0; i < c->n && !found; i++)
        found = c->keys[i] == key;
    emu_unlock();
    return found;
}

EMU_EXPORT void emu_op_cache_add(uint64_t key)
{
    emu_lock();
    op_cache *c = my_cache();
    int known = 0;
    for (size_t i = 0; i < c->n && !known; i++)
        known = c->keys[i] == key;
    if (!known && c->n < cache_limit()) {
        if (c->n == c->cap) {
            size_t cap = c->cap ? 2 * c->cap : 64;
            uint64_t *keys = realloc(c->keys, cap * sizeof *keys);
            if (!keys) {
                emu_unlock();
                return;                                       /* out of memory: not cached */
            }
            pthread_once(&g_exit_once, exit_key_init);
            pthread_setspecific(g_exit_key, keys);
            c->keys = keys;
            c->cap = cap;
        }
        c->keys[c->n++] = key;
    }
    emu_unlock();
}

/* Control API: forget every cached key, in every thread (tests start from an empty cache). */
EMU_EXPORT void emu_clear_op_cache(void)
{
    emu_lock();
    g_gen++;
    emu_unlock();
}

/* Control API: how many op+layout keys the calling thread's cache holds. */
EMU_EXPORT int64_t emu_op_cache_entries(void)
{
    emu_lock();
    int64_t n = (int64_t)my_cache()->n;
    emu_unlock();
    return n;
}
