/*
 * Code flavours: what -mcpu=c7x / -mcpu=c66x change in the generated C.
 *
 *   generic  plain C99; nothing below is emitted.
 *   c66x     lib*.c include <c6x.h>; lib0.h includes
 *            cstatic/platform/tidsp_dsp.h and marks the entry points
 *            TVM_DSP_EXPORT.
 *   c7x      the same with <c7x.h>, plus cg_main_dsp: the entry the C7x
 *            firmware resolves by name once DLOAD has loaded the module
 *            (the C66x build links the model into its program, so nothing
 *            looks an entry up by name there). With -tidl-runtime=1
 *            cg_main_dsp first calls tidl_bridge_init_all(), a TIDL
 *            firmware's export (cstatic/platform/tidsp_dsp.h).
 *
 * The TI loop pragmas (MUST_ITERATE, UNROLL) of the spec belong to loops;
 * the generated code has none (one kernel call per layer), so they live
 * with the kernels in the runtime.
 */
#include "cg.h"

int cs_cg_is_dsp(const cs_cg *cg) { return cg->t->mcpu == CS_MCPU_C7X || cg->t->mcpu == CS_MCPU_C66X; }

int cs_cg_has_dsp_entry(const cs_cg *cg) { return cg->t->mcpu == CS_MCPU_C7X; }

const char *cs_cg_export(const cs_cg *cg) { return cs_cg_is_dsp(cg) ? "TVM_DSP_EXPORT\n" : ""; }

void cs_cg_flavour_includes(const cs_cg *cg, cs_sbuf *b) {
  if (!cs_cg_is_dsp(cg)) return;
  const char *h = cg->t->mcpu == CS_MCPU_C7X ? "c7x.h" : "c6x.h";
  const char *family = cg->t->mcpu == CS_MCPU_C7X ? "C7000" : "C6000";
  /* The host build (cstatic run, compile checks) has no TI headers: it
   * gets the stand-in, found through the same -I as cstatic/kernels.h. */
  cs_sbuf_printf(b, "\n/* TI %s intrinsics; host builds use the stand-in header. */\n"
                    "#if defined(__TI_COMPILER_VERSION__)\n#include <%s>\n#else\n"
                    "#include \"cstatic/platform/ti_stub/%s\"\n#endif\n",
                 family, h, h);
}

void cs_cg_flavour_header_decl(const cs_cg *cg, cs_sbuf *b) {
  if (!cs_cg_has_dsp_entry(cg)) return;
  cs_sbuf_puts(b,
               "\n/* The C7x firmware's entry, resolved by name after DLOAD loads the module:\n"
               " * model_run on tensor descriptors (cstatic/platform/tidsp_dsp.h; the\n"
               " * firmware's 80-byte tensor_desc). inputs[i] / outputs[j] describe\n"
               " * MODEL_INPUTi_* / MODEL_OUTPUTj_* (the model's own dtypes, e.g. float32:\n"
               " * dtype_code 2, dtype_bits 32), data_addr pointing at the elements.\n"
               " * weights: the blob (in a DLOAD module, _binary_weights_bin_start of\n"
               " * bin_to_asm.py");
  if (cg->opt && cg->opt->weights_as_c) cs_sbuf_puts(b, "; NULL selects model_weights");
  cs_sbuf_puts(b, "); arena: MODEL_ARENA_SIZE bytes aligned to\n"
                  " * MODEL_ARENA_ALIGN. Returns TIDSP_OK or a tidsp_status.");
  if (cg->t->skip_runtime_checks)
    cs_sbuf_puts(b, " Built with\n * -skip-runtime-checks=1: the counts, descriptors and alignments are\n"
                    " * trusted, not checked.");
  else
    cs_sbuf_puts(b, " Checks the\n * counts (TIDSP_ERR_PARAM) and every descriptor against the tensor it\n"
                    " * stands for (tidsp_dsp_tensor_check) before running.");
  cs_sbuf_printf(b, " */\n%sint32_t cg_main_dsp(const void *weights, void *arena,\n"
                    "                    const tidsp_dsp_tensor *inputs, int32_t num_inputs,\n"
                    "                    const tidsp_dsp_tensor *outputs, int32_t num_outputs);\n",
                 cs_cg_export(cg));
}

/* After the descriptor in lib0.c (it reads model_inputs / model_outputs). */
void cs_cg_flavour_dsp_entry(const cs_cg *cg, cs_sbuf *b) {
  if (!cs_cg_has_dsp_entry(cg)) return;
  const cs_schedule *s = &cg->s;
  int ni = s->n_inputs > 0 ? s->n_inputs : 1, no = s->n_outputs > 0 ? s->n_outputs : 1;
  int check = !cg->t->skip_runtime_checks;
  cs_sbuf_printf(b, "\n/* The C7x firmware's entry: descriptors in, model_run. */\n"
                    "%sint32_t cg_main_dsp(const void *weights, void *arena,\n"
                    "                    const tidsp_dsp_tensor *inputs, int32_t num_inputs,\n"
                    "                    const tidsp_dsp_tensor *outputs, int32_t num_outputs) {\n"
                    "  const void *in[%d];\n  void *out[%d];\n",
                 cs_cg_export(cg), ni, no);
  if (check || cg->t->tidl_runtime) cs_sbuf_puts(b, "  int32_t st;\n");
  if (cg->t->tidl_runtime)
    cs_sbuf_puts(b, "  /* -tidl-runtime=1: TIDL's runtime up before any TIDL-backed call. */\n"
                    "  st = tidl_bridge_init_all();\n"
                    "  if (st != TIDSP_OK) return st;\n");
  if (check) {
    cs_sbuf_puts(b, "  if ((num_inputs > 0 && inputs == NULL) || (num_outputs > 0 && outputs == NULL))\n"
                    "    return TIDSP_ERR_NULL;\n"
                    "  if (num_inputs != MODEL_NUM_INPUTS || num_outputs != MODEL_NUM_OUTPUTS)\n"
                    "    return TIDSP_ERR_PARAM;\n");
    for (int i = 0; i < s->n_inputs; i++)
      cs_sbuf_printf(b, "  st = tidsp_dsp_tensor_check(&inputs[%d], &model_inputs[%d]);\n"
                        "  if (st != TIDSP_OK) return st;\n", i, i);
    for (int j = 0; j < s->n_outputs; j++)
      cs_sbuf_printf(b, "  st = tidsp_dsp_tensor_check(&outputs[%d], &model_outputs[%d]);\n"
                        "  if (st != TIDSP_OK) return st;\n", j, j);
  } else {
    cs_sbuf_puts(b, "  (void)num_inputs;\n  (void)num_outputs;\n");
  }
  if (s->n_inputs == 0) cs_sbuf_puts(b, "  (void)inputs;\n  in[0] = NULL;\n");
  if (s->n_outputs == 0) cs_sbuf_puts(b, "  (void)outputs;\n  out[0] = NULL;\n");
  for (int i = 0; i < s->n_inputs; i++)
    cs_sbuf_printf(b, "  in[%d] = tidsp_dsp_tensor_data(&inputs[%d]);\n", i, i);
  for (int j = 0; j < s->n_outputs; j++)
    cs_sbuf_printf(b, "  out[%d] = tidsp_dsp_tensor_data(&outputs[%d]);\n", j, j);
  cs_sbuf_puts(b, "  return model_run(weights, arena, in, out);\n}\n");
}
