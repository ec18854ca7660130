/*
 * The firmware's L2 SRAM for modules (fw/l2_share.c, fw/loader.c,
 * fw/service.c), through fw_handle_message as a client drives it: the
 * loaded modules share one region of the L2 pool, as large as the largest
 * module's l2_size (aligned to TIDSP_L2_ALIGN), grown at DYN_LOAD, shrunk
 * at DYN_UNLOAD and on a failing load; a module whose need alone exceeds
 * the pool is refused naming the model and both sizes; each INFER runs
 * with exactly its own l2_size of the region bound (tidsp_l2_scratch),
 * unbound again after, every DMA queue drained.
 *
 * The modules are tiny shared objects compiled here with $CC (default cc)
 * from the model.h descriptor alone (with an empty but valid weights blob
 * compiled in, which the firmware checks at load). What runs inside the
 * firmware while the region is bound is observed by a probe: the test
 * points a loaded module's entry at a function of its own, which calls the
 * runtime as generated code would.
 */
#define _GNU_SOURCE /* mkdtemp */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cstatic/dma.h"
#include "fw.h"
#include "unit.h"

enum { DDR_SIZE = 4 << 20, L2_SIZE = 4096, STAGING = 256 << 10, RESULT = 4096 };

static _Alignas(4096) uint8_t ddr[DDR_SIZE];
static _Alignas(4096) uint8_t l2[L2_SIZE];
static _Alignas(4096) uint8_t shared[STAGING + RESULT];
static fw_state st;
static char tmp_dir[64];

/* ---- modules ------------------------------------------------------------ */

static const char module_c[] =
    "#include \"cstatic/platform/tidsp_dsp.h\"\n"
    /* weights.bin with no tensors: magic, version 1, count 0, align 64,
     * total 64, payload at 64, checksum FNV-1a of nothing */
    "static const unsigned char blob[64] __attribute__((aligned(64))) = {'C', 'S', 'W', 'B', 1, 0, 0, 0,\n"
    "  0, 0, 0, 0, 64, 0, 0, 0, 64, 0, 0, 0, 0, 0, 0, 0, 64, 0, 0, 0, 0, 0, 0, 0,\n"
    "  0x25, 0x23, 0x22, 0x84, 0xe4, 0x9c, 0xf2, 0xcb};\n"
    "static int32_t check(const void *w, size_t n) { (void)w; (void)n; return TIDSP_OK; }\n"
    "static const char *text(int32_t s) { (void)s; return \"\"; }\n"
    "static const tidsp_tensor_info y = {\"y\", TIDSP_DTYPE_I8, 1, {4}, 4, 4, 0, 1.0f, 0};\n"
    "TVM_DSP_EXPORT int32_t cg_main_dsp(const void *w, void *arena, const tidsp_dsp_tensor *in,\n"
    "                                   int32_t n_in, const tidsp_dsp_tensor *out, int32_t n_out) {\n"
    "  volatile uint8_t *p = (volatile uint8_t *)(uintptr_t)out[0].data_addr;\n"
    "  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(MARK + i);\n"
    "  return TIDSP_OK;\n"
    "}\n"
    "TVM_DSP_EXPORT const tidsp_model_desc model_desc = {\n"
    "  .abi_version = TIDSP_MODEL_ABI_VERSION, .name = NAME, .target = \"c_static_lib -mcpu=c7x\",\n"
    "  .n_inputs = 0, .n_outputs = 1, .outputs = &y, .raw_outputs = &y,\n"
    "  .arena_size = ARENA, .arena_align = 64, .l2_size = L2,\n"
    "  .weights_size = sizeof blob, .weights_align = 64,\n"
    "  .weights_embedded = blob, .check_weights = check, .status_str = text};\n";

typedef struct module_image {
  uint8_t *bytes;
  size_t size;
} module_image;

/* Build the module NAME with l2_size / arena_size; its entry writes
 * MARK, MARK+1, … into its output. */
static module_image build_module(const char *name, size_t l2_size, size_t arena_size, int mark) {
  module_image img = {NULL, 0};
  char src_dir[512], path[640], so[640], cmd[4096];
  snprintf(src_dir, sizeof src_dir, "%s", __FILE__);
  char *cut = strstr(src_dir, "/tests/unit/");
  if (cut) *cut = '\0';
  else snprintf(src_dir, sizeof src_dir, ".");
  snprintf(path, sizeof path, "%s/module.c", tmp_dir);
  FILE *f = fopen(path, "w");
  if (!f || fputs(module_c, f) < 0) {
    if (f) fclose(f);
    return img;
  }
  fclose(f);
  snprintf(so, sizeof so, "%s/%s.so", tmp_dir, name);
  const char *cc = getenv("CC");
  snprintf(cmd, sizeof cmd,
           "'%s' -std=c99 -O1 -fPIC -shared -nostdlib -I'%s/include' -DNAME='\"%s\"' -DL2=%zu "
           "-DARENA=%zu -DMARK=%d '%s' -o '%s'",
           cc && *cc ? cc : "cc", src_dir, name, l2_size, arena_size, mark, path, so);
  int rc = system(cmd);
  if (rc == -1 || !WIFEXITED(rc) || WEXITSTATUS(rc) != 0) return img;
  f = fopen(so, "rb");
  if (!f) return img;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  img.bytes = malloc(n > 0 ? (size_t)n : 1);
  if (img.bytes && n > 0 && fread(img.bytes, 1, (size_t)n, f) == (size_t)n) img.size = (size_t)n;
  fclose(f);
  return img;
}

/* ---- requests ----------------------------------------------------------- */

static uint8_t resp[C7X_MSG_MAX];

static c7x_msg_header request(uint32_t type, const void *body, size_t body_len) {
  static uint32_t seq;
  uint8_t req[C7X_MSG_MAX];
  c7x_msg_header h = {type, ++seq, (uint32_t)(sizeof h + body_len), 0};
  memcpy(req, &h, sizeof h);
  if (body_len) memcpy(req + sizeof h, body, body_len);
  int fd;
  size_t n = fw_handle_message(&st, req, sizeof h + body_len, resp, &fd);
  c7x_msg_header r;
  memcpy(&r, resp, sizeof r);
  CHECK(n == r.len && r.seq == seq);
  return r;
}

static const char *message(void) { return (const char *)resp + sizeof(c7x_msg_header); }

/* DYN_LOAD img; the handle, or 0 with the status in *status. */
static uint64_t load(const module_image *img, int32_t *status) {
  c7x_dyn_load_req q;
  memset(&q, 0, sizeof q);
  q.elf_size = (uint32_t)img->size;
  memcpy(shared, img->bytes, img->size);
  c7x_msg_header r = request(C7X_MSG_DYN_LOAD, &q, sizeof q);
  *status = r.status;
  if (r.status != C7X_OK) return 0;
  c7x_dyn_load_resp p;
  memcpy(&p, resp + sizeof r, sizeof p);
  return p.handle;
}

static int32_t unload(uint64_t handle) {
  c7x_handle_req q = {handle, 0, 0};
  return request(C7X_MSG_DYN_UNLOAD, &q, sizeof q).status;
}

static int32_t infer(uint64_t handle, uint32_t repeat) {
  c7x_infer_req q = {handle, 0, 0, repeat, 0};
  return request(C7X_MSG_INFER, &q, sizeof q).status;
}

static uint64_t l2_free_reported(void) {
  c7x_msg_header r = request(C7X_MSG_GET_STATUS, NULL, 0);
  c7x_status_resp p;
  memcpy(&p, resp + sizeof r, sizeof p);
  CHECK(r.status == C7X_OK && p.l2_size == L2_SIZE);
  return p.l2_free;
}

/* ---- the probe ------------------------------------------------------------ */

static struct {
  size_t need;         /* the l2_size it asks for */
  int calls;
  void *seen[4];       /* tidsp_l2_scratch(need) at each call */
  int bigger_refused;  /* tidsp_l2_scratch(need + 1) was NULL at every call */
  int leave_copy;      /* issue a DMA copy and return without waiting */
} probe;

static uint8_t probe_src[32], probe_dst[32];

static int32_t probe_entry(const void *w, void *arena, const tidsp_dsp_tensor *in, int32_t n_in,
                           const tidsp_dsp_tensor *out, int32_t n_out) {
  void *p = tidsp_l2_scratch(probe.need);
  if (probe.calls < 4) probe.seen[probe.calls] = p;
  probe.calls++;
  if (tidsp_l2_scratch(probe.need + 1) != NULL) probe.bigger_refused = 0;
  if (probe.leave_copy) tidsp_dma_copy(2, probe_dst, probe_src, sizeof probe_src, 0);
  return p ? TIDSP_OK : TIDSP_ERR_L2;
}

static void probe_reset(size_t need) {
  memset(&probe, 0, sizeof probe);
  probe.need = need;
  probe.bigger_refused = 1;
}

/* ---- tests ---------------------------------------------------------------- */

static void test_l2_block_at_load_bound_at_infer(const module_image *a) {
  int32_t s;
  uint64_t h = load(a, &s);
  CHECK_MSG(h != 0, "loading l2_a: status %d: %s", s, message());
  if (!h) return;
  fw_module *m = fw_module_find(&st, h);
  CHECK(m && m->l2 != NULL && ((uintptr_t)m->l2 % TIDSP_L2_ALIGN) == 0);
  CHECK(m && (uint8_t *)m->l2 >= l2 && (uint8_t *)m->l2 + 1500 <= l2 + L2_SIZE);
  CHECK(l2_free_reported() <= L2_SIZE - 1500);
  if (!m) return;

  /* The module's own entry runs (its output is in the result window). */
  CHECK(infer(h, 0) == C7X_OK);
  CHECK(shared[STAGING] == 11 && shared[STAGING + 3] == 14);

  /* Each of three repeats sees exactly its block, no more; afterwards the
   * region is unbound and the copy the probe left pending is done. */
  m->entry = probe_entry;
  probe_reset(1500);
  probe.leave_copy = 1;
  for (size_t i = 0; i < sizeof probe_src; i++) probe_src[i] = (uint8_t)(i + 1);
  memset(probe_dst, 0, sizeof probe_dst);
  CHECK(infer(h, 3) == C7X_OK);
  CHECK(probe.calls == 3);
  for (int i = 0; i < 3; i++) CHECK_MSG(probe.seen[i] == m->l2, "repeat %d saw %p, not %p", i, probe.seen[i], m->l2);
  CHECK(probe.bigger_refused);
  CHECK(tidsp_l2_scratch(1) == NULL);
  CHECK_MSG(memcmp(probe_dst, probe_src, sizeof probe_src) == 0,
            "a copy the module left pending was not drained before the reply");

  CHECK(unload(h) == C7X_OK);
  CHECK(l2_free_reported() == L2_SIZE);
}

/* The modules loaded share one region, as large as the largest need:
 * two modules whose needs (3000 + 2500) sum beyond the 4096-byte pool
 * load side by side and each inference binds its own l2_size of the same
 * region; the region shrinks when the largest unloads and grows again. */
static void test_shared_region(const module_image *big, const module_image *mid, const module_image *a) {
  int32_t s;
  uint64_t h1 = load(big, &s);
  CHECK_MSG(h1 != 0, "loading l2_big: status %d: %s", s, message());
  uint64_t h2 = load(mid, &s);
  CHECK_MSG(h2 != 0, "loading l2_mid beside l2_big (3000 + 2500 > 4096): status %d: %s", s, message());
  uint64_t h3 = load(a, &s);
  CHECK_MSG(h3 != 0, "loading a third module: status %d: %s", s, message());
  fw_module *m1 = fw_module_find(&st, h1), *m2 = fw_module_find(&st, h2), *m3 = fw_module_find(&st, h3);
  CHECK(m1 && m2 && m3);
  if (!m1 || !m2 || !m3) return;
  CHECK(m1->l2 && m1->l2 == m2->l2 && m2->l2 == m3->l2 && m1->l2 == st.l2_region);
  CHECK(((uintptr_t)m1->l2 % TIDSP_L2_ALIGN) == 0 && (uint8_t *)m1->l2 + 3000 <= l2 + L2_SIZE);
  CHECK(st.l2_region_size == 3000 && l2_free_reported() == L2_SIZE - 3000);

  /* Their own entries run, each writing its own output. */
  CHECK(infer(h1, 0) == C7X_OK && shared[STAGING] == 61 && shared[STAGING + 3] == 64);
  CHECK(infer(h2, 0) == C7X_OK && shared[STAGING] == 71 && shared[STAGING + 3] == 74);

  /* Each inference binds exactly its own need of the shared region. */
  m1->entry = m2->entry = probe_entry;
  probe_reset(3000);
  CHECK(infer(h1, 0) == C7X_OK);
  CHECK(probe.calls == 1 && probe.seen[0] == st.l2_region && probe.bigger_refused);
  probe_reset(2500);
  CHECK(infer(h2, 0) == C7X_OK);
  CHECK(probe.calls == 1 && probe.seen[0] == st.l2_region && probe.bigger_refused);

  /* The largest goes: the region shrinks to the next largest need, and
   * the others still run in it. */
  CHECK(unload(h1) == C7X_OK);
  CHECK(st.l2_region_size == 2500 && l2_free_reported() == L2_SIZE - 2500);
  CHECK(m2->l2 == st.l2_region && m3->l2 == st.l2_region);
  probe_reset(2500);
  CHECK(infer(h2, 0) == C7X_OK && probe.calls == 1 && probe.seen[0] == st.l2_region);

  /* A larger one grows it again, moving nobody's data (there is none
   * between inferences): every loaded module points at the new region. */
  h1 = load(big, &s);
  CHECK_MSG(h1 != 0, "reloading l2_big: status %d: %s", s, message());
  CHECK(st.l2_region_size == 3000 && m2->l2 == st.l2_region && m3->l2 == st.l2_region);
  CHECK(unload(h1) == C7X_OK && unload(h2) == C7X_OK);
  CHECK(st.l2_region_size == 1500 && m3->l2 == st.l2_region);
  CHECK(unload(h3) == C7X_OK);
  CHECK(st.l2_region == NULL && st.l2_region_size == 0 && l2_free_reported() == L2_SIZE);
}

/* More than the whole pool: refused naming both sizes, nothing kept;
 * also beside a loaded module, whose region stays as it was. */
static void test_too_big_for_the_pool(const module_image *huge, const module_image *a) {
  int32_t s;
  uint64_t ddr_free = fw_pool_free_bytes(&st.ddr);
  CHECK(load(huge, &s) == 0 && s == C7X_ERR_NOMEM);
  CHECK_MSG(strstr(message(), "L2 SRAM") && strstr(message(), "'l2_huge'") && strstr(message(), "needs 5000 bytes") &&
                strstr(message(), "the pool holds 4096"),
            "message: %s", message());
  CHECK(l2_free_reported() == L2_SIZE && fw_pool_free_bytes(&st.ddr) == ddr_free);
  uint64_t h = load(a, &s);
  CHECK(h != 0);
  void *region = st.l2_region;
  CHECK(load(huge, &s) == 0 && s == C7X_ERR_NOMEM);
  CHECK_MSG(strstr(message(), "(1500 bytes now)"), "message: %s", message());
  fw_module *m = fw_module_find(&st, h);
  CHECK(st.l2_region == region && st.l2_region_size == 1500 && m && m->l2 == region);
  CHECK(infer(h, 0) == C7X_OK && shared[STAGING] == 11);
  CHECK(unload(h) == C7X_OK && l2_free_reported() == L2_SIZE);
}

/* The L2 block was taken, then the arena does not fit the DDR heap: the
 * failing load gives the block back. */
static void test_failed_load_frees_l2(const module_image *no_arena) {
  int32_t s;
  uint64_t ddr_free = fw_pool_free_bytes(&st.ddr);
  CHECK(load(no_arena, &s) == 0 && s == C7X_ERR_NOMEM);
  CHECK_MSG(strstr(message(), "DDR heap") && strstr(message(), "arena"), "message: %s", message());
  CHECK(l2_free_reported() == L2_SIZE && fw_pool_free_bytes(&st.ddr) == ddr_free);
}

/* l2_size 0: no block, and the region stays unbound while it runs, so a
 * model that asks anyway gets TIDSP_ERR_L2, reported by name. */
static void test_no_l2(const module_image *none) {
  int32_t s;
  uint64_t h = load(none, &s);
  CHECK_MSG(h != 0, "loading l2_none: status %d: %s", s, message());
  fw_module *m = fw_module_find(&st, h);
  CHECK(m && m->l2 == NULL && l2_free_reported() == L2_SIZE);
  if (!m) return;
  m->entry = probe_entry;
  probe_reset(1);
  CHECK(infer(h, 0) == C7X_ERR_CALL);
  CHECK(probe.calls == 1 && probe.seen[0] == NULL);
  CHECK_MSG(strstr(message(), "l2_none") && strstr(message(), tidsp_status_str(TIDSP_ERR_L2)),
            "message: %s", message());
  CHECK(unload(h) == C7X_OK);
}

int main(void) {
  fw_state_init(&st, ddr, sizeof ddr, l2, sizeof l2, shared, STAGING, RESULT, -1);
  snprintf(tmp_dir, sizeof tmp_dir, "/tmp/cs_fw_l2_XXXXXX");
  if (!mkdtemp(tmp_dir)) {
    CHECK(!"mkdtemp");
    UNIT_MAIN_END();
  }
  module_image a = build_module("l2_a", 1500, 256, 11);
  module_image big = build_module("l2_big", 3000, 256, 61);
  module_image mid = build_module("l2_mid", 2500, 256, 71);
  module_image huge = build_module("l2_huge", 5000, 256, 31);
  module_image no_arena = build_module("l2_no_arena", 1000, (size_t)DDR_SIZE * 2, 41);
  module_image none = build_module("l2_none", 0, 256, 51);
  int built = a.size && big.size && mid.size && huge.size && no_arena.size && none.size;
  CHECK_MSG(built, "building the test modules with %s failed", getenv("CC") ? getenv("CC") : "cc");
  if (built) {
    CHECK(a.size <= STAGING);
    test_l2_block_at_load_bound_at_infer(&a);
    test_shared_region(&big, &mid, &a);
    test_too_big_for_the_pool(&huge, &a);
    test_failed_load_frees_l2(&no_arena);
    test_no_l2(&none);
  }
  fw_state_shutdown(&st);
  free(a.bytes);
  free(big.bytes);
  free(mid.bytes);
  free(huge.bytes);
  free(no_arena.bytes);
  free(none.bytes);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_dir);
  if (!getenv("CS_KEEP_TMP") && system(cmd) != 0) fprintf(stderr, "could not remove %s\n", tmp_dir);
  UNIT_MAIN_END();
}
