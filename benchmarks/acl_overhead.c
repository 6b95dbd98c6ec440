/*
 * acl_overhead.c - the C baseline of benchmarks/acl_overhead.py.
 *
 * Times, against the CANN host emulator (tests/emulator), the very call sequences the Python
 * side times, so that "Python minus C" is the cost of pyaclnn itself:
 *
 *   full:   aclCreateTensor x4, aclnnMseLossBackwardGetWorkspaceSize, aclnnMseLossBackward,
 *           aclDestroyTensor x4 (4x4 float32 tensors over existing device buffers);
 *   repeat: one executor made repeatable once, then per call aclSetInputTensorAddr,
 *           aclSetOutputTensorAddr, aclnnMseLossBackward.
 *
 * Usage: acl_overhead BATCHES CALLS
 * Output (stdout), one line per variant: "<variant> <us per call of batch 1> <batch 2> ...".
 * Every status is checked; a failure prints the call and exits 1.
 *
 * Built by acl_overhead.py: cc -O2 -I<repo>/headers acl_overhead.c -L<toolkit>/lib64
 * -l:libopapi.so -l:libnnopbase.so -l:libascendcl.so (run with LD_LIBRARY_PATH=<toolkit>/lib64).
 */
#define _POSIX_C_SOURCE 200809L
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "acl_base.h"
#include "acl_rt.h"
#include "acl_meta.h"
#include "aclnn_base.h"
#include "aclnn_mse_loss_backward.h"

#define CHECK(call)                                                                     \
    do {                                                                                \
        long long status_ = (long long)(call);                                          \
        if (status_ != 0) {                                                             \
            fprintf(stderr, "acl_overhead: %s failed with status %lld\n", #call, status_); \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

#define CHECK_PTR(ptr, what)                                                            \
    do {                                                                                \
        if ((ptr) == NULL) {                                                            \
            fprintf(stderr, "acl_overhead: %s returned NULL\n", what);                  \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

enum { N_BUF = 6, MAX_BATCHES = 4096, WS_BYTES = 1 << 16 };

static const int64_t SHAPE[2] = {4, 4};
static const int64_t STRIDES[2] = {4, 1};

static double now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

static aclTensor *make_tensor(void *addr)
{
    aclTensor *t = aclCreateTensor(SHAPE, 2, ACL_FLOAT, STRIDES, 0, ACL_FORMAT_ND, SHAPE, 2, addr);
    CHECK_PTR(t, "aclCreateTensor");
    return t;
}

/* The workspace phase 1 asks for (512 bytes here: MseLossGradV2's), allocated once as a port
 * would; passing NULL with that size is 161001. */
static void *g_ws;

static void *workspace(uint64_t size)
{
    if (size > WS_BYTES) {
        fprintf(stderr, "acl_overhead: phase 1 asked for %llu workspace bytes, more than %d\n",
                (unsigned long long)size, WS_BYTES);
        exit(1);
    }
    return g_ws;
}

/* One complete operator call: descriptors, phase 1, phase 2, descriptors destroyed. */
static void full_call(void *const *buf, aclrtStream stream)
{
    aclTensor *g = make_tensor(buf[0]);
    aclTensor *x = make_tensor(buf[1]);
    aclTensor *y = make_tensor(buf[2]);
    aclTensor *o = make_tensor(buf[3]);
    uint64_t ws_size = 0;
    aclOpExecutor *ex = NULL;
    CHECK(aclnnMseLossBackwardGetWorkspaceSize(g, x, y, 0, o, &ws_size, &ex));
    CHECK(aclnnMseLossBackward(workspace(ws_size), ws_size, ex, stream));
    CHECK(aclDestroyTensor(g));
    CHECK(aclDestroyTensor(x));
    CHECK(aclDestroyTensor(y));
    CHECK(aclDestroyTensor(o));
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s BATCHES CALLS\n", argv[0]);
        return 2;
    }
    int batches = atoi(argv[1]), calls = atoi(argv[2]);
    if (batches < 1 || batches > MAX_BATCHES || calls < 1) {
        fprintf(stderr, "acl_overhead: BATCHES must be in [1, %d] and CALLS >= 1\n", MAX_BATCHES);
        return 2;
    }
    static double samples[MAX_BATCHES];

    CHECK(aclInit(NULL));
    CHECK(aclrtSetDevice(0));
    aclrtStream stream = NULL;
    CHECK(aclrtCreateStream(&stream));
    void *buf[N_BUF];
    CHECK(aclrtMalloc(&g_ws, WS_BYTES, ACL_MEM_MALLOC_HUGE_FIRST));
    for (int i = 0; i < N_BUF; i++) {
        CHECK(aclrtMalloc(&buf[i], 16 * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST));
        CHECK(aclrtMemset(buf[i], 16 * sizeof(float), 0, 16 * sizeof(float)));
    }

    /* full call: one warm-up batch, then the timed batches */
    for (int i = 0; i < calls; i++)
        full_call(buf, stream);
    for (int b = 0; b < batches; b++) {
        double t0 = now_us();
        for (int i = 0; i < calls; i++)
            full_call(buf, stream);
        samples[b] = (now_us() - t0) / calls;
    }
    printf("full");
    for (int b = 0; b < batches; b++)
        printf(" %.4f", samples[b]);
    printf("\n");

    /* reused repeatable executor: rebind one input and the output, launch */
    aclTensor *g = make_tensor(buf[0]);
    aclTensor *x = make_tensor(buf[1]);
    aclTensor *y = make_tensor(buf[2]);
    aclTensor *o = make_tensor(buf[3]);
    uint64_t ws_size = 0;
    aclOpExecutor *ex = NULL;
    /* reduction sum: a layout the loop above never ran, or phase 1 would return CANN's op-cache
     * wrapper, which aclSetAclOpExecutorRepeatable refuses (561000) */
    CHECK(aclnnMseLossBackwardGetWorkspaceSize(g, x, y, 2, o, &ws_size, &ex));
    CHECK(aclSetAclOpExecutorRepeatable(ex));
    for (int b = -1; b < batches; b++) { /* b == -1: warm-up */
        double t0 = now_us();
        for (int i = 0; i < calls; i++) {
            CHECK(aclSetInputTensorAddr(ex, 0, g, buf[(i & 1) ? 4 : 0]));
            CHECK(aclSetOutputTensorAddr(ex, 0, o, buf[(i & 1) ? 5 : 3]));
            CHECK(aclnnMseLossBackward(workspace(ws_size), ws_size, ex, stream));
        }
        if (b >= 0)
            samples[b] = (now_us() - t0) / calls;
    }
    printf("repeat");
    for (int b = 0; b < batches; b++)
        printf(" %.4f", samples[b]);
    printf("\n");

    CHECK(aclDestroyAclOpExecutor(ex));
    CHECK(aclDestroyTensor(g));
    CHECK(aclDestroyTensor(x));
    CHECK(aclDestroyTensor(y));
    CHECK(aclDestroyTensor(o));
    CHECK(aclrtSynchronizeStream(stream));
    for (int i = 0; i < N_BUF; i++)
        CHECK(aclrtFree(buf[i]));
    CHECK(aclrtFree(g_ws));
    CHECK(aclrtDestroyStream(stream));
    CHECK(aclrtResetDevice(0));
    CHECK(aclFinalize());
    return 0;
}
