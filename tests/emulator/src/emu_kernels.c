/*
 * emu_kernels.c - phase-2 compute of the four operators (part of libopapi).
 *
 * Every kernel reads its tensors through their frozen view metadata (shape, strides and offset
 * in elements) and the current device address, so non-contiguous inputs AND outputs work.
 * Compute is float32 (as the A2/A3 kernels do: fp16/bf16 are widened to fp32 and rounded back
 * to the tensor dtype with round-to-nearest-even); reductions accumulate in double and are
 * rounded once. Results are computed into a scratch buffer first and then stored, so outputs
 * that overlap inputs behave as if the op were out of place.
 *
 * Formulas: shared/reference/ops.md 1.1 (MSE), 2.1 (GroupNorm, kernel form with gamma inside the
 * group sums), 3.1 (CrossEntropyLossGrad, A2/A3), 4.1 (PReLU, with the TBE "update + dx*0" quirk).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdlib.h>

#include "emu_ops.h"

/* ---- element access ---------------------------------------------------------------------- */
static float ld(const emu_tview *v, int64_t off)
{
    const char *p = (const char *)v->data;
    switch (v->dtype) {
    case ACL_FLOAT: { float f; memcpy(&f, p + off * 4, 4); return f; }
    case ACL_FLOAT16: { uint16_t h; memcpy(&h, p + off * 2, 2); return emu_f16_to_f32(h); }
    case ACL_BF16: { uint16_t h; memcpy(&h, p + off * 2, 2); return emu_bf16_to_f32(h); }
    default: return NAN;                      /* phase 1 lets no other dtype through */
    }
}

static void st(const emu_tview *v, int64_t off, float x)
{
    char *p = (char *)v->data;
    uint16_t h;
    switch (v->dtype) {
    case ACL_FLOAT: memcpy(p + off * 4, &x, 4); break;
    case ACL_FLOAT16: h = emu_f32_to_f16(x); memcpy(p + off * 2, &h, 2); break;
    case ACL_BF16: h = emu_f32_to_bf16(x); memcpy(p + off * 2, &h, 2); break;
    default: break;
    }
}

static int64_t ld_i64(const emu_tview *v, int64_t off)
{
    int64_t x;
    memcpy(&x, (const char *)v->data + off * 8, 8);
    return x;
}

/* x rounded to the precision of `dtype` (identity for float32). */
static float round_to(int dtype, float x)
{
    if (dtype == ACL_FLOAT16)
        return emu_f16_to_f32(emu_f32_to_f16(x));
    if (dtype == ACL_BF16)
        return emu_bf16_to_f32(emu_f32_to_bf16(x));
    return x;
}

static int64_t view_numel(const emu_tview *v)
{
    int64_t n = 1;
    for (int i = 0; i < v->ndim; i++)
        n *= v->dims[i];
    return n;
}

/*
 * Element offsets (from the storage base, in elements) of a view read as `dims` (row-major),
 * with NumPy broadcasting: dims of the view that are 1 (or missing on the left) repeat.
 * With dims == the view's own shape this simply enumerates the view. NULL on OOM.
 */
static int64_t *offsets_as(const emu_tview *v, const int64_t *dims, int n)
{
    int64_t total = 1;
    for (int i = 0; i < n; i++)
        total *= dims[i];
    int64_t *off = malloc((size_t)(total > 0 ? total : 1) * sizeof *off);
    if (!off)
        return NULL;
    int64_t bstride[EMU_MAX_DIMS], idx[EMU_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        int vi = v->ndim - n + i;             /* right-aligned */
        bstride[i] = (vi >= 0 && v->dims[vi] != 1) ? v->strides[vi] : 0;
        idx[i] = 0;
    }
    int64_t cur = v->offset;
    for (int64_t k = 0; k < total; k++) {
        off[k] = cur;
        for (int d = n - 1; d >= 0; d--) {    /* odometer increment */
            if (++idx[d] < dims[d]) {
                cur += bstride[d];
                break;
            }
            cur -= bstride[d] * (dims[d] - 1);
            idx[d] = 0;
        }
    }
    return off;
}

static int64_t *offsets(const emu_tview *v) { return offsets_as(v, v->dims, v->ndim); }

static int oom(const char *api) { return emu_error(ACLNN_ERR_INNER, api, "out of host memory in the kernel"); }

/* ========================================================================================== */
/* MseLossBackward: out = ((self - target) * cof) * gradOutput, broadcast to out's shape.     */
/* cof = 2/numel(self) for mean (computed as 1.0f/float(n)*2.0f like the V2 kernel), else 2.   */
/* ========================================================================================== */
int emu_kernel_mse(aclOpExecutor *e)
{
    static const char api[] = "aclnnMseLossBackward";
    const emu_tview *g = &e->t[MSE_GRAD], *s = &e->t[MSE_SELF], *t = &e->t[MSE_TARGET], *o = &e->t[MSE_OUT];
    int64_t n = view_numel(o);
    float cof = e->iattr[MSE_A_REDUCTION] == 1 ? 1.0f / (float)view_numel(s) * 2.0f : 2.0f;
    int64_t *og = offsets_as(g, o->dims, o->ndim), *os = offsets_as(s, o->dims, o->ndim);
    int64_t *ot = offsets_as(t, o->dims, o->ndim), *oo = offsets(o);
    float *r = malloc((size_t)n * sizeof *r);
    int status = ACLNN_SUCCESS;
    if (!og || !os || !ot || !oo || !r) {
        status = oom(api);
        goto out;
    }
    for (int64_t i = 0; i < n; i++) {
        float v = ((ld(s, os[i]) - ld(t, ot[i])) * cof) * ld(g, og[i]);
        r[i] = round_to(s->dtype, v);         /* computed at input precision, then cast to out */
    }
    for (int64_t i = 0; i < n; i++)
        st(o, oo[i], r[i]);
out:
    free(og), free(os), free(ot), free(oo), free(r);
    return status;
}

/* ========================================================================================== */
/* GroupNormBackward (kernel form, given mean/rstd read flat as (N, G)):                       */
/*   xhat = (x - mean[n,g]) * rstd[n,g]                                                        */
/*   dbeta[c] = sum_{n,i} dy;  dgamma[c] = sum_{n,i} dy*xhat                                   */
/*   c1[n,g] = 1/M sum_{c in g} gamma[c] sum_i dy;  c2[n,g] = 1/M sum_{c in g} gamma[c] sum_i dy*xhat */
/*   dx = rstd * (gamma[c]*dy - c1 - xhat*c2),   M = (C/G)*HxW                                  */
/* ========================================================================================== */
int emu_kernel_group_norm(aclOpExecutor *e)
{
    static const char api[] = "aclnnGroupNormBackward";
    const emu_tview *dy = &e->t[GN_DY], *x = &e->t[GN_X], *mean = &e->t[GN_MEAN], *rstd = &e->t[GN_RSTD];
    const emu_tview *gamma = e->t[GN_GAMMA].handle ? &e->t[GN_GAMMA] : NULL;
    const emu_tview *dx = &e->t[GN_DX], *dgamma = &e->t[GN_DGAMMA], *dbeta = &e->t[GN_DBETA];
    int64_t N = e->iattr[GN_A_N], C = e->iattr[GN_A_C], HW = e->iattr[GN_A_HXW], G = e->iattr[GN_A_G];
    int m0 = (int)e->iattr[GN_A_MASK], m1 = (int)e->iattr[GN_A_MASK + 1], m2 = (int)e->iattr[GN_A_MASK + 2];
    int64_t D = C / G;
    double M = (double)D * (double)HW;
    int status = ACLNN_SUCCESS;

    int64_t *ody = offsets(dy), *ox = offsets(x), *om = offsets(mean), *orr = offsets(rstd);
    int64_t *og = gamma ? offsets(gamma) : NULL;
    double *sdy = calloc((size_t)(N * C), sizeof *sdy), *sdyx = calloc((size_t)(N * C), sizeof *sdyx);
    double *gam = malloc((size_t)C * sizeof *gam);
    float *rdx = m0 ? malloc((size_t)(N * C * HW) * sizeof *rdx) : NULL;
    int64_t *odx = m0 ? offsets(dx) : NULL, *odg = m1 ? offsets(dgamma) : NULL, *odb = m2 ? offsets(dbeta) : NULL;
    if (!ody || !ox || !om || !orr || (gamma && !og) || !sdy || !sdyx || !gam || (m0 && (!rdx || !odx)) ||
        (m1 && !odg) || (m2 && !odb)) {
        status = oom(api);
        goto out;
    }
    for (int64_t c = 0; c < C; c++)
        gam[c] = gamma ? (double)ld(gamma, og[c]) : 1.0;

    /* per-(n, c) sums of dy and dy*xhat */
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++) {
            int64_t ng = n * G + c / D;
            double mu = ld(mean, om[ng]), rs = ld(rstd, orr[ng]);
            double a = 0, b = 0;
            for (int64_t i = 0; i < HW; i++) {
                int64_t k = (n * C + c) * HW + i;
                double d = ld(dy, ody[k]);
                a += d;
                b += d * (((double)ld(x, ox[k]) - mu) * rs);
            }
            sdy[n * C + c] = a;
            sdyx[n * C + c] = b;
        }
    if (m0) {
        for (int64_t n = 0; n < N; n++)
            for (int64_t g = 0; g < G; g++) {
                double c1 = 0, c2 = 0;
                for (int64_t c = g * D; c < (g + 1) * D; c++) {
                    c1 += gam[c] * sdy[n * C + c];
                    c2 += gam[c] * sdyx[n * C + c];
                }
                c1 /= M;
                c2 /= M;
                double mu = ld(mean, om[n * G + g]), rs = ld(rstd, orr[n * G + g]);
                for (int64_t c = g * D; c < (g + 1) * D; c++)
                    for (int64_t i = 0; i < HW; i++) {
                        int64_t k = (n * C + c) * HW + i;
                        double xh = ((double)ld(x, ox[k]) - mu) * rs;
                        rdx[k] = (float)(rs * (gam[c] * (double)ld(dy, ody[k]) - c1 - xh * c2));
                    }
            }
    }
    /* store (after every read: outputs may alias inputs) */
    if (m0)
        for (int64_t k = 0; k < N * C * HW; k++)
            st(dx, odx[k], rdx[k]);
    for (int64_t c = 0; c < C; c++) {
        double sg = 0, sb = 0;
        for (int64_t n = 0; n < N; n++) {
            sg += sdyx[n * C + c];
            sb += sdy[n * C + c];
        }
        if (m1)
            st(dgamma, odg[c], (float)sg);
        if (m2)
            st(dbeta, odb[c], (float)sb);
    }
out:
    free(ody), free(ox), free(om), free(orr), free(og), free(sdy), free(sdyx), free(gam), free(rdx);
    free(odx), free(odg), free(odb);
    return status;
}

/* ========================================================================================== */
/* CrossEntropyLossGrad (A2/A3, labelSmoothing == 0):                                          */
/*   mask_i = float(target_i) != float(ignoreIndex);  w_i = weight[target_i] (1 without weight) */
/*   mean: lossOutGrad_i = gradLoss[0] / W * mask_i, W = sum_i w_i*mask_i (all ignored: NaN)    */
/*   sum:  gradLoss[0] * mask_i;  none (and unknown strings): gradLoss[i] * mask_i              */
/*   nll_i = lossOutGrad_i * w_i;  out[i,j] = exp(logProb[i,j])*nll_i - [j == target_i]*nll_i    */
/* ========================================================================================== */
/* The faults of this kernel that phase 2 reports (361001) before it queues the kernel: a non-zero
 * labelSmoothing, and a non-ignored target outside [0, C) -- read at launch, a simplification: a
 * device would start the kernel and fail (or write garbage) later, seen at synchronisation. */
int emu_check_cross_entropy(aclOpExecutor *e)
{
    static const char api[] = "aclnnCrossEntropyLossGrad";
    const emu_tview *tg = &e->t[CE_TARGET];
    int64_t N = e->t[CE_LOGPROB].dims[0], C = e->t[CE_LOGPROB].dims[1];
    float ignore = (float)e->iattr[CE_A_IGNORE];
    if (e->fattr[CE_A_LS] != 0.0)
        return emu_error(ACLNN_ERR_RUNTIME_ERROR, api,
                         "labelSmoothing %g != 0 is not implemented by the A2/A3 kernels (a device would hang or write garbage)",
                         e->fattr[CE_A_LS]);
    int64_t *otg = offsets(tg);
    if (!otg)
        return oom(api);
    int status = ACLNN_SUCCESS;
    for (int64_t i = 0; i < N && !status; i++) {
        int64_t t = ld_i64(tg, otg[i]);
        if ((float)t != ignore && (t < 0 || t >= C))
            status = emu_error(ACLNN_ERR_RUNTIME_ERROR, api,
                               "target[%lld] = %lld is outside [0, %lld) and not ignoreIndex (an out-of-bounds read on a device)",
                               (long long)i, (long long)t, (long long)C);
    }
    free(otg);
    return status;
}

int emu_kernel_cross_entropy(aclOpExecutor *e)
{
    static const char api[] = "aclnnCrossEntropyLossGrad";
    const emu_tview *gl = &e->t[CE_GRADLOSS], *lp = &e->t[CE_LOGPROB], *tg = &e->t[CE_TARGET], *o = &e->t[CE_OUT];
    const emu_tview *w = e->t[CE_WEIGHT].handle ? &e->t[CE_WEIGHT] : NULL;
    int64_t N = lp->dims[0], C = lp->dims[1];
    int red = (int)e->iattr[CE_A_REDUCTION];
    float ignore = (float)e->iattr[CE_A_IGNORE];
    int status = ACLNN_SUCCESS;

    if (e->fattr[CE_A_LS] != 0.0)
        return emu_error(ACLNN_ERR_RUNTIME_ERROR, api,
                         "labelSmoothing %g != 0 is not implemented by the A2/A3 kernels (a device would hang or write garbage)",
                         e->fattr[CE_A_LS]);
    int64_t *olp = offsets(lp), *otg = offsets(tg), *ogl = offsets(gl), *oo = offsets(o);
    int64_t *ow = w ? offsets(w) : NULL;
    float *nll = malloc((size_t)N * sizeof *nll), *wt = malloc((size_t)N * sizeof *wt);
    float *mask = malloc((size_t)N * sizeof *mask), *r = malloc((size_t)(N * C) * sizeof *r);
    int64_t *tv = malloc((size_t)N * sizeof *tv);
    if (!olp || !otg || !ogl || !oo || (w && !ow) || !nll || !wt || !mask || !r || !tv) {
        status = oom(api);
        goto out;
    }
    double W = 0;
    for (int64_t i = 0; i < N; i++) {
        int64_t t = ld_i64(tg, otg[i]);
        tv[i] = t;
        mask[i] = (float)t != ignore ? 1.0f : 0.0f;
        if (mask[i] != 0.0f && (t < 0 || t >= C)) {
            status = emu_error(ACLNN_ERR_RUNTIME_ERROR, api,
                               "target[%lld] = %lld is outside [0, %lld) and not ignoreIndex (an out-of-bounds read on a device)",
                               (long long)i, (long long)t, (long long)C);
            goto out;
        }
        /* ignored rows with an out-of-range target: the A2/A3 kernel uses weight 0 */
        wt[i] = !w ? 1.0f : (t >= 0 && t < C) ? ld(w, ow[t]) : 0.0f;
        W += (double)wt[i] * mask[i];
    }
    float g0 = ld(gl, ogl[0]);
    float mean_factor = g0 / (float)W;        /* W == 0 (all ignored): inf or NaN -> NaN below */
    for (int64_t i = 0; i < N; i++) {
        float lg = red == CE_RED_MEAN ? mean_factor * mask[i] : red == CE_RED_SUM ? g0 * mask[i] : ld(gl, ogl[i]) * mask[i];
        nll[i] = lg * wt[i];
    }
    for (int64_t i = 0; i < N; i++)
        for (int64_t j = 0; j < C; j++) {
            float v = expf(ld(lp, olp[i * C + j])) * nll[i];
            if (j == tv[i])
                v = v - nll[i];
            r[i * C + j] = v;
        }
    for (int64_t k = 0; k < N * C; k++)
        st(o, oo[k], r[k]);
out:
    free(olp), free(otg), free(ogl), free(oo), free(ow), free(nll), free(wt), free(mask), free(r), free(tv);
    return status;
}

/* ========================================================================================== */
/* PreluBackward: channel dim 1 (0-D/1-D self: one channel), gradOutput broadcast to self.     */
/*   dx = x > 0 ? dy : dy*w[c];   update = (x > 0 ? 0 : x*dy) + dx*0  (TBE quirk: NaN/inf dx     */
/*   poisons update), rounded to the dtype;  gradWeight[c] = sum of update over all but dim 1    */
/*   (weight with 1 element: over everything).                                                  */
/* ========================================================================================== */
int emu_kernel_prelu(aclOpExecutor *e)
{
    static const char api[] = "aclnnPreluBackward";
    const emu_tview *dy = &e->t[PR_GRAD], *x = &e->t[PR_SELF], *w = &e->t[PR_WEIGHT];
    const emu_tview *dx = &e->t[PR_DX], *dw = &e->t[PR_DW];
    int64_t n = view_numel(x), wn = view_numel(w);
    int64_t C = wn == 1 ? 1 : x->dims[1];     /* phase 1: wn == 1 or wn == dims[1] (rank >= 2) */
    int64_t inner = 1;
    for (int i = 2; i < x->ndim; i++)
        inner *= x->dims[i];
    int dt = x->dtype;
    int status = ACLNN_SUCCESS;

    int64_t *ody = offsets_as(dy, x->dims, x->ndim), *ox = offsets(x), *ow = offsets(w);
    int64_t *odx = offsets(dx), *odw = offsets(dw);
    float *rdx = malloc((size_t)n * sizeof *rdx);
    double *acc = calloc((size_t)C, sizeof *acc);
    if (!ody || !ox || !ow || !odx || !odw || !rdx || !acc) {
        status = oom(api);
        goto out;
    }
    for (int64_t k = 0; k < n; k++) {
        int64_t c = wn == 1 ? 0 : (k / inner) % C;
        float xv = ld(x, ox[k]), g = ld(dy, ody[k]);
        float d = xv > 0.0f ? g : g * ld(w, ow[c]);
        d = round_to(dt, d);
        float upd = (xv > 0.0f ? 0.0f : round_to(dt, xv * g)) + d * 0.0f;
        acc[c] += round_to(dt, upd);
        rdx[k] = d;
    }
    for (int64_t k = 0; k < n; k++)
        st(dx, odx[k], rdx[k]);
    for (int64_t c = 0; c < C; c++)
        st(dw, odw[c], (float)acc[c]);
out:
    free(ody), free(ox), free(ow), free(odx), free(odw), free(rdx), free(acc);
    return status;
}
