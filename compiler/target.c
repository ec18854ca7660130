#include "target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Packed weight rows are for the host's fast kernels (kernels.h
 * w_row_stride): the DSP targets and the scalar baseline keep dense rows. */
static int pack_weights_default(const cs_target *t) {
  return t->mcpu == CS_MCPU_GENERIC && t->kernels == CS_KERNELS_FAST;
}

void cs_target_default(cs_target *t) {
  memset(t, 0, sizeof *t);
  t->mcpu = CS_MCPU_GENERIC;
  t->tidl_kernels = 1;
  t->constants_byte_alignment = 64;
  t->requant = CS_REQUANT_FLOAT;
  t->kernels = CS_KERNELS_FAST;
  t->pack_weights = pack_weights_default(t);
  t->l2_budget = CS_L2_BUDGET_DEFAULT;
}

/* The spec runs InjectMMALIBDMA in the c7x pipeline only: the other
 * targets have no L2 SRAM scratch to stage into. */
int cs_target_stages_l2(const cs_target *t) {
  return t->mcpu == CS_MCPU_C7X && t->mmalib && t->l2_budget > 0;
}

static int parse_bool(const char *v, int *out) {
  if (!strcmp(v, "1") || !strcmp(v, "true")) { *out = 1; return 1; }
  if (!strcmp(v, "0") || !strcmp(v, "false")) { *out = 0; return 1; }
  return 0;
}

cs_status cs_target_parse(const char *s, cs_target *t) {
  cs_target_default(t);
  if (!s || !*s) return CS_OK;
  char *copy = strdup(s);
  if (!copy) return cs_error(CS_ERR_NOMEM, "out of memory");
  int skip_set = 0, cpp_set = 0, pack_set = 0;
  cs_status st = CS_OK;
  int first = 1;
  for (char *tok = strtok(copy, " \t"); tok; tok = strtok(NULL, " \t")) {
    if (first) {
      first = 0;
      if (!strcmp(tok, "c_static_lib") || !strcmp(tok, "c_static")) continue;
      if (tok[0] != '-') {
        st = cs_error(CS_ERR_USAGE, "target '%s': kind '%s' is not c_static_lib", s, tok);
        break;
      }
    }
    if (tok[0] != '-') {
      st = cs_error(CS_ERR_USAGE, "target '%s': expected -key=value, got '%s'", s, tok);
      break;
    }
    char *key = tok + 1;
    char *val = strchr(key, '=');
    if (!val) {
      st = cs_error(CS_ERR_USAGE, "target attribute '%s' has no value (use -%s=VALUE)", key, key);
      break;
    }
    *val++ = '\0';
    int b = 0;
    if (!strcmp(key, "mcpu")) {
      if (!strcmp(val, "c7x")) t->mcpu = CS_MCPU_C7X;
      else if (!strcmp(val, "c66x")) t->mcpu = CS_MCPU_C66X;
      else if (!strcmp(val, "generic") || !strcmp(val, "host")) t->mcpu = CS_MCPU_GENERIC;
      else { st = cs_error(CS_ERR_USAGE, "target attribute -mcpu='%s': expected c7x, c66x or generic", val); break; }
    } else if (!strcmp(key, "requant")) {
      if (!strcmp(val, "float")) t->requant = CS_REQUANT_FLOAT;
      else if (!strcmp(val, "q31")) t->requant = CS_REQUANT_Q31;
      else { st = cs_error(CS_ERR_USAGE, "target attribute -requant='%s': expected float or q31", val); break; }
    } else if (!strcmp(key, "kernels")) {
      if (!strcmp(val, "fast")) t->kernels = CS_KERNELS_FAST;
      else if (!strcmp(val, "scalar")) t->kernels = CS_KERNELS_SCALAR;
      else { st = cs_error(CS_ERR_USAGE, "target attribute -kernels='%s': expected fast or scalar", val); break; }
    } else if (!strcmp(key, "constants-byte-alignment")) {
      char *end;
      long a = strtol(val, &end, 10);
      if (*end || a < 1 || a > 4096 || (a & (a - 1))) {
        st = cs_error(CS_ERR_USAGE, "target attribute -constants-byte-alignment='%s': expected a power of two in [1, 4096]", val);
        break;
      }
      t->constants_byte_alignment = (int)a;
    } else if (!strcmp(key, "l2-budget")) {
      char *end;
      long a = strtol(val, &end, 10);
      if (end == val || *end || a < 0 || a > CS_L2_BUDGET_MAX) {
        st = cs_error(CS_ERR_USAGE, "target attribute -l2-budget='%s': expected bytes in [0, %ld] (0: no L2 staging)",
                      val, CS_L2_BUDGET_MAX);
        break;
      }
      t->l2_budget = a;
    } else if (!strcmp(key, "mmalib") || !strcmp(key, "tidl-kernels") ||
               !strcmp(key, "profile-layers") || !strcmp(key, "skip-runtime-checks") ||
               !strcmp(key, "use-cpp-api") || !strcmp(key, "pack-weights")) {
      if (!parse_bool(val, &b)) {
        st = cs_error(CS_ERR_USAGE, "target attribute -%s='%s': expected 0 or 1", key, val);
        break;
      }
      if (!strcmp(key, "mmalib")) t->mmalib = b;
      else if (!strcmp(key, "tidl-kernels")) t->tidl_kernels = b;
      else if (!strcmp(key, "profile-layers")) t->profile_layers = b;
      else if (!strcmp(key, "skip-runtime-checks")) { t->skip_runtime_checks = b; skip_set = 1; }
      else if (!strcmp(key, "pack-weights")) { t->pack_weights = b; pack_set = 1; }
      else { t->use_cpp_api = b; cpp_set = 1; }
    } else {
      st = cs_error(CS_ERR_USAGE, "unknown target attribute -%s (known: mcpu, mmalib, tidl-kernels, requant, kernels, profile-layers, skip-runtime-checks, use-cpp-api, constants-byte-alignment, pack-weights, l2-budget)", key);
      break;
    }
  }
  if (st == CS_OK && t->mcpu != CS_MCPU_GENERIC) {
    /* DSP defaults (spec: "When mcpu=c7x is set, the following defaults apply"). */
    if (!skip_set) t->skip_runtime_checks = 1;
    if (!cpp_set) t->use_cpp_api = 1;
  }
  /* After the loop: the default follows -mcpu and -kernels wherever they
   * appear in the string. */
  if (st == CS_OK && !pack_set) t->pack_weights = pack_weights_default(t);
  free(copy);
  return st;
}

void cs_target_format(const cs_target *t, char *buf, size_t size) {
  const char *cpu = t->mcpu == CS_MCPU_C7X ? "c7x" : t->mcpu == CS_MCPU_C66X ? "c66x" : "generic";
  snprintf(buf, size,
           "c_static_lib -mcpu=%s -mmalib=%d -tidl-kernels=%d -requant=%s -profile-layers=%d "
           "-skip-runtime-checks=%d -use-cpp-api=%d -constants-byte-alignment=%d",
           cpu, t->mmalib, t->tidl_kernels, t->requant == CS_REQUANT_Q31 ? "q31" : "float",
           t->profile_layers, t->skip_runtime_checks, t->use_cpp_api, t->constants_byte_alignment);
  size_t len = size ? strlen(buf) : 0;
  if (t->kernels == CS_KERNELS_SCALAR && len + 1 < size)
    snprintf(buf + len, size - len, " -kernels=scalar");
  len = size ? strlen(buf) : 0;
  if ((t->pack_weights != 0) != pack_weights_default(t) && len + 1 < size)
    snprintf(buf + len, size - len, " -pack-weights=%d", t->pack_weights != 0);
  len = size ? strlen(buf) : 0;
  if (t->l2_budget != CS_L2_BUDGET_DEFAULT && len + 1 < size)
    snprintf(buf + len, size - len, " -l2-budget=%ld", t->l2_budget);
}
