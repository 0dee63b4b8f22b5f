/* The parity comparison on known vectors: NaN, Inf, denormals, empty, length 1, bitwise. */
#include <math.h>
#include <string.h>
#include "parity/parity.h"
#include "gate.h"
#include "kg_test.h"

static kg_parity_policy tol(double a, double r, double c)
{
    kg_parity_policy p = KG_PARITY_TOLERANCE_INIT(a, r, c);
    return p;
}

/* Sizes at the edges: empty, one element, all zeros. */
static void check_small_sizes(const kg_parity_policy *lp)
{
    kg_parity_result r;
    kg_parity_policy loose = *lp;
    /* empty: nothing to compare, passes with neutral figures */
    CHECK(kg_parity_compare(&r, NULL, KG_DTYPE_F32, NULL, KG_DTYPE_F64, 0, &loose) == 0);
    CHECK(r.pass && r.n == 0 && r.rel_l2 == 0 && r.cosine == 1.0);

    /* length 1 */
    float one = 2.0f;
    double oned = 2.0;
    CHECK(kg_parity_compare(&r, &one, KG_DTYPE_F32, &oned, KG_DTYPE_F64, 1, &loose) == 0 && r.pass);
    double oned2 = 2.1;
    CHECK(kg_parity_compare(&r, &one, KG_DTYPE_F32, &oned2, KG_DTYPE_F64, 1, &loose) == 0 &&
          !r.pass);

    /* all-zero reference and output: rel_l2 0, cosine 1; zero ref with nonzero out: rel inf */
    float z[2] = { 0, 0 }, nz[2] = { 0, 1e-9f };
    double zd[2] = { 0, 0 };
    CHECK(kg_parity_compare(&r, z, KG_DTYPE_F32, zd, KG_DTYPE_F64, 2, &loose) == 0 && r.pass);
    CHECK(kg_parity_compare(&r, nz, KG_DTYPE_F32, zd, KG_DTYPE_F64, 2, &loose) == 0 && !r.pass &&
          isinf(r.rel_l2));
}

/* Bitwise policy (one flipped bit, -0.0 vs +0.0, dtypes must match) and bf16 rounding. */
static void check_bitwise_bf16(const kg_parity_policy *lp)
{
    kg_parity_result r;
    kg_parity_policy loose = *lp;
    kg_parity_policy bit = KG_PARITY_BITWISE_INIT;
    double ad[4] = { 1.0, -2.0, 3.5, 0.25 };
    /* bitwise: equal bytes pass; one differing bit fails; -0.0 vs +0.0 differ bitwise */
    float x[3] = { 1.0f, 2.0f, 3.0f }, y[3] = { 1.0f, 2.0f, 3.0f };
    CHECK(kg_parity_compare(&r, x, KG_DTYPE_F32, y, KG_DTYPE_F32, 3, &bit) == 0 && r.pass);
    uint32_t u;
    memcpy(&u, &y[1], 4);
    u ^= 1;
    memcpy(&y[1], &u, 4);
    CHECK(kg_parity_compare(&r, x, KG_DTYPE_F32, y, KG_DTYPE_F32, 3, &bit) == 0 && !r.pass &&
          r.mismatched_bytes == 1 && r.first_bad == 1);
    float pz = 0.0f, nzero = -0.0f;
    CHECK(kg_parity_compare(&r, &pz, KG_DTYPE_F32, &nzero, KG_DTYPE_F32, 1, &bit) == 0 && !r.pass);
    /* bitwise needs matching dtypes */
    CHECK(kg_parity_compare(&r, x, KG_DTYPE_F32, ad, KG_DTYPE_F64, 3, &bit) == KG_EINVAL);

    /* bf16 values: 1 + 2^-8 rounds to 1 (ties to even), 1 + 3*2^-8 rounds up */
    CHECK(kg_f32_to_bf16(1.0f + 0x1p-8f) == 0x3f80);
    CHECK(kg_f32_to_bf16(1.0f + 3 * 0x1p-8f) == 0x3f82);
    CHECK(kg_bf16_to_f32(0x3f80) == 1.0f);
    uint16_t bf[2] = { kg_f32_to_bf16(1.5f), kg_f32_to_bf16(-2.0f) };
    double bfd[2] = { 1.5, -2.0 };
    CHECK(kg_parity_compare(&r, bf, KG_DTYPE_BF16, bfd, KG_DTYPE_F64, 2, &bit) == KG_EINVAL);
    CHECK(kg_parity_compare(&r, bf, KG_DTYPE_BF16, bfd, KG_DTYPE_F64, 2, &loose) == 0 && r.pass);
}

int main(void)
{
    kg_parity_result r;
    kg_parity_policy loose = tol(1e-3, 1e-3, 0.999);

    /* identical vectors pass with exact figures */
    float a[4] = { 1.0f, -2.0f, 3.5f, 0.25f };
    double ad[4] = { 1.0, -2.0, 3.5, 0.25 };
    CHECK(kg_parity_compare(&r, a, KG_DTYPE_F32, ad, KG_DTYPE_F64, 4, &loose) == 0);
    CHECK(r.pass && r.max_abs == 0 && r.rel_l2 == 0 && fabs(r.cosine - 1) < 1e-15);

    /* known error: one element off by 0.5 -> max_abs 0.5, rel_l2 = 0.5/||ref|| */
    float b[4] = { 1.0f, -2.0f, 4.0f, 0.25f };
    CHECK(kg_parity_compare(&r, b, KG_DTYPE_F32, ad, KG_DTYPE_F64, 4, &loose) == 0);
    double refn = sqrt(1 + 4 + 12.25 + 0.0625);
    CHECK(!r.pass && r.max_abs == 0.5 && r.max_abs_at == 2 && r.first_bad == 2);
    CHECK(fabs(r.rel_l2 - 0.5 / refn) < 1e-12);
    CHECK(strstr(r.reason, "max_abs") != NULL);

    /* rel_l2 breach alone: absolute limit loose, relative tight */
    kg_parity_policy rel_only = tol(10.0, 1e-3, 0.0);
    CHECK(kg_parity_compare(&r, b, KG_DTYPE_F32, ad, KG_DTYPE_F64, 4, &rel_only) == 0);
    CHECK(!r.pass && strstr(r.reason, "rel_l2") != NULL);

    /* cosine breach alone: a sign flip of the whole vector */
    float neg[4] = { -1.0f, 2.0f, -3.5f, -0.25f };
    kg_parity_policy cos_only = tol(100.0, 100.0, 0.5);
    CHECK(kg_parity_compare(&r, neg, KG_DTYPE_F32, ad, KG_DTYPE_F64, 4, &cos_only) == 0);
    CHECK(!r.pass && fabs(r.cosine + 1) < 1e-12 && strstr(r.reason, "cosine") != NULL);

    /* NaN in output never passes, even with infinite tolerance */
    kg_parity_policy inf_tol = tol(INFINITY, INFINITY, -1.0);
    float c[3] = { 1.0f, NAN, 3.0f };
    double cd[3] = { 1.0, 2.0, 3.0 };
    CHECK(kg_parity_compare(&r, c, KG_DTYPE_F32, cd, KG_DTYPE_F64, 3, &inf_tol) == 0);
    CHECK(!r.pass && r.nonfinite_out == 1 && r.first_bad == 1);

    /* Inf in output never passes */
    float d[3] = { 1.0f, 2.0f, INFINITY };
    CHECK(kg_parity_compare(&r, d, KG_DTYPE_F32, cd, KG_DTYPE_F64, 3, &inf_tol) == 0);
    CHECK(!r.pass && r.nonfinite_out == 1 && r.first_bad == 2);

    /* the poison pattern (0xFF bytes) is NaN in f32 and bf16 and fails */
    float poison[2];
    uint16_t poison16[2];
    memset(poison, 0xFF, sizeof poison);
    memset(poison16, 0xFF, sizeof poison16);
    CHECK(kg_parity_compare(&r, poison, KG_DTYPE_F32, cd, KG_DTYPE_F64, 2, &inf_tol) == 0 &&
          !r.pass && r.nonfinite_out == 2);
    CHECK(kg_parity_compare(&r, poison16, KG_DTYPE_BF16, cd, KG_DTYPE_F64, 2, &inf_tol) == 0 &&
          !r.pass && r.nonfinite_out == 2);

    /* NaN in the reference fails too, with a reason saying so */
    double cn[3] = { 1.0, NAN, 3.0 };
    float e[3] = { 1.0f, 2.0f, 3.0f };
    CHECK(kg_parity_compare(&r, e, KG_DTYPE_F32, cn, KG_DTYPE_F64, 3, &inf_tol) == 0);
    CHECK(!r.pass && r.nonfinite_ref == 1 && strstr(r.reason, "reference") != NULL);

    /* denormals compare as values: tiny differences pass an absolute limit */
    float den[2] = { 1e-40f, -3e-42f };
    double dend[2] = { 1e-40, -3e-42 };
    kg_parity_policy tight_abs = tol(1e-44, 1.0, 0.0);
    CHECK(kg_parity_compare(&r, den, KG_DTYPE_F32, dend, KG_DTYPE_F64, 2, &tight_abs) == 0);
    CHECK(r.pass && r.max_abs < 1e-44);

    check_small_sizes(&loose);
    check_bitwise_bf16(&loose);

    /* Isolation ships the parity gate's whole typed result (it shipped sizeof(kg_parity_result),
     * the first member, so the parent's row was another type than in-process): the flattened
     * copy keeps every output and clears only the names. */
    CHECK(kg_gate_parity.result_size == sizeof(kg_parity_outputs));
    kg_parity_outputs po;
    memset(&po, 0, sizeof po);
    po.n = 2, po.worst_i = 1, po.pass = true, po.name[0] = "out", po.out[1].rel_l2 = 0.5;
    CHECK(kg_gate_parity.result_flatten != NULL);
    if (kg_gate_parity.result_flatten)
        kg_gate_parity.result_flatten(&po);
    CHECK(po.n == 2 && po.worst_i == 1 && po.pass && po.out[1].rel_l2 == 0.5 && !po.name[0]);
    return kg_test_done("test_parity_math");
}
