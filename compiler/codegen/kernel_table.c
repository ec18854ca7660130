/*
 * What a kernel call names under a target, and how much work it is. The
 * kernel table itself (symbols, signatures, params) is cstatic/kernels.def,
 * as data in compiler/ir/kernels.c.
 */
#include "cg.h"

const char *cs_kernel_fn(const cs_kernel_info *ki, const cs_target *t) {
  if (t && t->kernels == CS_KERNELS_SCALAR && ki->scalar_fn) return ki->scalar_fn;
  return ki->fn;
}

int64_t cs_codegen_graph_macs(const cs_graph *g) {
  int64_t macs = 0;
  for (int i = 0; i < g->n_nodes; i++)
    if (!g->nodes[i].dead) macs += cs_kernel_macs(&g->nodes[i]);
  return macs;
}

int64_t cs_kernel_macs(const cs_node *n) {
  switch (n->op) {
    case CS_OP_K_CONV2D_I8:
    case CS_OP_K_CONV2D_F32: {
      const tidsp_conv2d_params *p = &n->k.conv;
      int64_t cin_per_group = p->groups > 0 ? p->c_in / p->groups : p->c_in;
      return (int64_t)p->n * p->c_out * p->h_out * p->w_out * cin_per_group * p->k_h * p->k_w;
    }
    case CS_OP_K_BATCH_MATMUL_I8:
      return (int64_t)n->k.batch_matmul.batch * n->k.batch_matmul.m * n->k.batch_matmul.k * n->k.batch_matmul.n;
    case CS_OP_K_MATMUL_I8:
      return (int64_t)n->k.matmul.m * n->k.matmul.k * n->k.matmul.n;
    case CS_OP_K_MMALIB_BATCH_MATMUL_I16: { /* batch, M, K, N padded: what the MMA runs */
      int cnt = 0;
      const int64_t *a = cs_node_attr_ints(n, "mm_args", &cnt);
      return a && cnt >= 4 ? a[0] * a[1] * a[2] * a[3] : 0;
    }
    case CS_OP_K_MMALIB_CONV2D_I8:
    case CS_OP_K_MMALIB_CONV2D_I8_GROUPED:
    case CS_OP_K_MMALIB_DWCONV2D_I8:
    case CS_OP_K_MMALIB_FC_I8:
    case CS_OP_K_MMALIB_CONV2D_I16:
    case CS_OP_K_MMALIB_DWCONV2D_I16:
    case CS_OP_K_MMALIB_FC_I16:
    case CS_OP_K_MMALIB_MATMUL_I16:
    case CS_OP_K_DEQUANT_VECMATMUL: {
      /* MACs from the weights (numel) times output positions. */
      int cnt = 0;
      const int64_t *a = cs_node_attr_ints(n, "mm_args", &cnt);
      if (!a) return 0;
      if (n->op == CS_OP_K_MMALIB_FC_I8 || n->op == CS_OP_K_MMALIB_FC_I16 || n->op == CS_OP_K_MMALIB_MATMUL_I16 ||
          n->op == CS_OP_K_DEQUANT_VECMATMUL)
        return cnt >= 3 ? a[0] * a[1] * a[2] : 0;
      int dw = n->op == CS_OP_K_MMALIB_DWCONV2D_I8 || n->op == CS_OP_K_MMALIB_DWCONV2D_I16;
      if (cnt < 12) return 0;
      int64_t kh = a[dw ? 3 : 4], kw = a[dw ? 4 : 5], s = a[dw ? 5 : 6];
      const int64_t *p = a + (dw ? 7 : 8);
      if (s < 1) return 0;
      int64_t ho = (a[1] + p[0] + p[1] - kh) / s + 1, wo = (a[2] + p[2] + p[3] - kw) / s + 1;
      if (dw) return a[0] * ho * wo * kh * kw;
      int64_t groups = cnt == 13 && a[12] > 0 ? a[12] : 1;
      /* a grouped conv: one call per group, each filling whole panels
       * (ir/offload.h CS_MMALIB_I8_TILE) */
      int64_t c_out = groups > 1 ? groups * ((a[3] / groups + CS_MMALIB_I8_TILE - 1) / CS_MMALIB_I8_TILE) *
                                       CS_MMALIB_I8_TILE
                                 : a[3];
      return c_out * ho * wo * (a[0] / groups) * kh * kw;
    }
    case CS_OP_K_MATMUL_F32:
      return (int64_t)n->k.matmul_f32.batch * n->k.matmul_f32.m * n->k.matmul_f32.k *
             n->k.matmul_f32.n;
    default:
      return 0;
  }
}
