/*
 * The MMALIB cost rule's two model-level parts (issue 16): the L2 term of
 * a staged call (ir/c7x_cost.h cs_c7x_call_bytes, through the target:
 * cs_mm_call_bytes) and the padding budget (-mmalib-pad-budget: which
 * rewrites cs_mm_budget_refuse refuses, and how cs_mm_pad_decide honours
 * a refusal). The rounds themselves run in `cstatic compile`
 * (tests/e2e/test_mmalib_budget.py).
 */
#include <math.h>
#include <string.h>

#include "ir/c7x_cost.h"
#include "passes/match/mmalib_cost.h"
#include "passes/passes.h"
#include "unit.h"

static void test_call_bytes(void) {
  /* no staging: everything the call reads and writes is DDR traffic */
  CHECK(cs_c7x_call_bytes(0, 500, 200, 300) == 1000);
  /* staged, input and weights beside the guard: the spec's L2 figure is
   * the whole call */
  CHECK(cs_c7x_call_bytes(1000, 500, 200, 300) == 0);
  /* the input fits, the weights do not: they are read from DDR */
  CHECK(cs_c7x_call_bytes(1000, 500, 400, 300) == 400);
  /* the input alone exceeds the budget: the call reads DDR */
  CHECK(cs_c7x_call_bytes(1000, 900, 0, 300) == 1200);

  cs_target t;
  CHECK(cs_target_parse("c_static_lib -mcpu=c7x -mmalib=1", &t) == CS_OK);
  CHECK(cs_mm_call_bytes(&t, 1e5, 1e4, 1e5) == 0);
  CHECK(cs_mm_call_bytes(&t, 1e6, 1e4, 1e5) == 1e6 + 1e4 + 1e5); /* over the 384 KB default */
  CHECK(cs_target_parse("c_static_lib -mcpu=c7x -mmalib=1 -l2-budget=0", &t) == CS_OK);
  CHECK(cs_mm_call_bytes(&t, 1e5, 1e4, 1e5) == 2.1e5);
  /* a host build prices as the C7x build it emulates: the same decisions */
  CHECK(cs_target_parse("c_static_lib -mmalib=1", &t) == CS_OK);
  CHECK(cs_mm_call_bytes(&t, 1e5, 1e4, 1e5) == 0);

  /* a staged layer's MMA estimate is the panel term alone: the spec's
   * 64 -> 64 3x3 56x56 layer, 477 K cycles staged, 1.67 M from DDR */
  double in = 64.0 * 56 * 56, w = 64.0 * 64 * 9;
  CHECK(cs_target_parse("c_static_lib -mcpu=c7x -mmalib=1", &t) == CS_OK);
  double staged = cs_mm_cost_mma(576, 64, 56 * 56, 64, cs_mm_call_bytes(&t, in, w, in));
  double ddr = cs_mm_cost_mma(576, 64, 56 * 56, 64, in + w + in);
  CHECK_MSG(fabs(staged - 477e3) < 1.0 && fabs(ddr - 1.67e6) < 1.0, "staged %.0f, DDR %.0f", staged, ddr);
}

static cs_offload_pad decision(const char *layer, const char *what, int64_t macs, int64_t added, double mma,
                               double scalar) {
  cs_offload_pad p;
  cs_mm_pad_decision_init(&p, layer, what, 8, 32, macs, added);
  p.padded = 1;
  p.mma_cycles = mma;
  p.scalar_cycles = scalar;
  return p;
}

static void test_budget_refuses_least_saving_per_mac(void) {
  /* MTCNN P-Net's four paddings under the L2 rule (MACs added, cycles):
   * a model of 2 939 160 MACs brought to ×1.872 */
  cs_offload_pad pads[5] = {
      decision("conv0", NULL, 1625088, 1256904, 35576, 294630), /* 0.21 cycles saved per MAC added */
      decision("conv1", NULL, 1270080, 635040, 23502, 279264),  /* 0.40 */
      decision("conv3", NULL, 46208, 323456, 6509, 53314),      /* 0.145 */
      decision("conv4", NULL, 23104, 346560, 6509, 42380),      /* 0.104 */
      decision("conv5", "taps", 1000, 100000, 9e9, 1),          /* the exact path's form */
  };
  pads[4].fixed = 1;
  cs_offload_report r = {0};
  r.pads = pads;
  r.n_pad = r.cap_pad = 5;
  const int64_t own = 2939160, total = own + 1256904 + 635040 + 323456 + 346560 + 100000;
  cs_offload_pad *refused = NULL;
  int n = 0;
  /* within the budget: nothing */
  CHECK(cs_mm_budget_refuse(&r, total, 2.0, &refused, &n) == 0 && n == 0);
  /* ×1.6 allows 1 763 496 MACs more: conv4, conv3, then conv0 must go (in
   * that order) to fit; conv0 alone leaves room for the other two, which go
   * back; conv1 and the fixed tiles stay */
  CHECK(cs_mm_budget_refuse(&r, total, 1.6, &refused, &n) == 1 && n == 1);
  CHECK(n == 1 && !strcmp(refused[0].layer, "conv0"));
  /* a second round within the budget: nothing more */
  pads[0].padded = 0;
  const int64_t left = total - 1256904;
  CHECK(cs_mm_budget_refuse(&r, left, 1.6, &refused, &n) == 0 && n == 1);
  /* at ×1: conv4, conv3 and conv1 go, the fixed tiles cannot (still over) */
  CHECK(cs_mm_budget_refuse(&r, left, 1.0, &refused, &n) == 3 && n == 4);
  CHECK(n == 4 && !strcmp(refused[1].layer, "conv4") && !strcmp(refused[2].layer, "conv3") &&
        !strcmp(refused[3].layer, "conv1"));
  /* only fixed forms left: nothing to refuse, though over */
  pads[1].padded = pads[2].padded = pads[3].padded = 0;
  CHECK(cs_mm_budget_refuse(&r, own + 100000, 1.0, &refused, &n) == 0 && n == 4);
  free(refused);
}

static void test_a_refused_rewrite_is_over_budget(void) {
  cs_target t;
  CHECK(cs_target_parse("c_static_lib -mcpu=c7x -mmalib=1", &t) == CS_OK);
  cs_offload_pad list[2] = {decision("conv0", NULL, 1, 1, 1, 2), decision("conv1", "C_out pack", 1, 1, 1, 2)};
  t.mm_refused = list;
  t.n_mm_refused = 2;
  CHECK(cs_mm_refused(&t, "conv0", NULL) && cs_mm_refused(&t, "conv0", "C_out"));
  CHECK(!cs_mm_refused(&t, "conv0", "C_out pack") && cs_mm_refused(&t, "conv1", "C_out pack"));
  CHECK(!cs_mm_refused(&t, "conv2", NULL) && !cs_mm_refused(&t, NULL, NULL));
  cs_offload_pad p;
  /* pays, refused: not padded, over the budget */
  cs_mm_pad_decision_init(&p, "conv0", NULL, 8, 32, 100, 300);
  CHECK(cs_mm_pad_decide(&t, &p, 10, 100) == 0 && !p.padded && p.over_budget);
  /* does not pay: just that */
  CHECK(cs_mm_pad_decide(&t, &p, 99, 100) == 0 && !p.padded && !p.over_budget);
  /* pays, not refused */
  cs_mm_pad_decision_init(&p, "conv2", NULL, 8, 32, 100, 300);
  CHECK(cs_mm_pad_decide(&t, &p, 10, 100) == 1 && p.padded && !p.over_budget);
}

int main(void) {
  test_call_bytes();
  test_budget_refuses_least_saving_per_mac();
  test_a_refused_rewrite_is_over_budget();
  UNIT_MAIN_END();
}
