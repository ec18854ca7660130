/*
 * The firmware's message framing (fw/service.c) without a socket: every
 * malformed request gets an error response with the request's type | 0x1000
 * and seq, a status and a message; well-formed ones get their body.
 * Module loading is covered by tests/e2e/test_deploy.py.
 */
#include <stdint.h>
#include <string.h>

#include "fw.h"
#include "unit.h"

static uint8_t ddr[1 << 16], l2[4096], shared[8192 + 4096];
static fw_state st;

/* Send type/seq/len + body; return the response length. */
static size_t call(uint32_t type, uint32_t seq, uint32_t len_field, const void *body, size_t body_len,
                   size_t n, uint8_t *resp, c7x_msg_header *h) {
  uint8_t req[C7X_MSG_MAX + 64];
  memset(req, 0, sizeof req);
  c7x_msg_header q = {type, seq, len_field, 0};
  memcpy(req, &q, sizeof q);
  if (body_len) memcpy(req + sizeof q, body, body_len);
  int fd = 7;
  size_t out = fw_handle_message(&st, req, n, resp, &fd);
  memcpy(h, resp, sizeof *h);
  CHECK(out >= sizeof *h && out <= C7X_MSG_MAX);
  CHECK(h->len == out);
  return out;
}

static int message_has(const uint8_t *resp, size_t n, const char *text) {
  if (n <= sizeof(c7x_msg_header) || resp[n - 1] != '\0') return 0;
  return strstr((const char *)resp + sizeof(c7x_msg_header), text) != NULL;
}

/* RESET ends the firmware, and every module with it: only for a sender
 * that presents the handle of each loaded module. Granted is C7X_OK (the
 * transport then kills the firmware); fw_handle_reset decides the same. */
static void reset_with(uint32_t seq, const uint64_t *handles, uint32_t count, int32_t want, const char *text) {
  uint8_t req[C7X_MSG_MAX], resp[C7X_MSG_MAX];
  c7x_reset_req q = {count, 0};
  size_t len = sizeof(c7x_msg_header) + sizeof q + count * sizeof(uint64_t);
  c7x_msg_header hq = {C7X_MSG_RESET, seq, (uint32_t)len, 0};
  memcpy(req, &hq, sizeof hq);
  memcpy(req + sizeof hq, &q, sizeof q);
  memcpy(req + sizeof hq + sizeof q, handles, count * sizeof(uint64_t));
  int fd;
  size_t n = fw_handle_message(&st, req, len, resp, &fd);
  c7x_msg_header h;
  memcpy(&h, resp, sizeof h);
  CHECK_MSG(h.status == want && h.seq == seq, "RESET %u: status %d, want %d", seq, h.status, want);
  if (text) CHECK_MSG(message_has(resp, n, text), "RESET %u: %s", seq, (const char *)resp + sizeof h);
  size_t out = 0;
  int granted = fw_handle_reset(&st, req, len, resp, &out);
  CHECK(granted == (want == C7X_OK));
  if (!granted) {
    memcpy(&h, resp, sizeof h);
    CHECK(out == h.len && h.status == want);
  }
}

static void test_reset(void) {
  const uint64_t a = UINT64_C(0x1234567890abcdef), b = UINT64_C(0xfedcba0987654321), c = a + 1;
  uint64_t none[1] = {0};
  /* Nothing loaded: a bare RESET (no handles) is granted. */
  reset_with(30, none, 0, C7X_OK, NULL);
  uint8_t req[32], resp[C7X_MSG_MAX];
  c7x_msg_header bare = {C7X_MSG_RESET, 31, 16, 0};
  memcpy(req, &bare, sizeof bare);
  size_t out;
  CHECK(fw_handle_reset(&st, req, 16, resp, &out) == 1);
  /* Two modules (white box: slots with handles). */
  st.modules[3].handle = a;
  st.modules[9].handle = b;
  CHECK(fw_handle_reset(&st, req, 16, resp, &out) == 0);
  reset_with(32, none, 0, C7X_ERR_DENIED, "2 of the 2 loaded modules");
  const uint64_t only_a[] = {a}, a_and_c[] = {c, a}, both[] = {b, c, a};
  reset_with(33, only_a, 1, C7X_ERR_DENIED, "1 of the 2 loaded modules are not among the 1 handle presented");
  reset_with(34, a_and_c, 2, C7X_ERR_DENIED, "1 of the 2");
  reset_with(35, both, 3, C7X_OK, NULL);
  /* Malformed bodies: refused as such, never a reset. */
  uint8_t junk[8] = {1, 0, 0, 0};
  c7x_msg_header hq = {C7X_MSG_RESET, 36, 20, 0};
  memcpy(req, &hq, sizeof hq);
  memcpy(req + sizeof hq, junk, 4);
  CHECK(fw_handle_reset(&st, req, 20, resp, &out) == 0);
  memcpy(&hq, resp, sizeof hq);
  CHECK(hq.status == C7X_ERR_OP && hq.seq == 36);
  c7x_reset_req lie = {2, 0}; /* says 2 handles, carries 1 */
  hq = (c7x_msg_header){C7X_MSG_RESET, 37, 32, 0};
  memcpy(req, &hq, sizeof hq);
  memcpy(req + sizeof hq, &lie, sizeof lie);
  memcpy(req + sizeof hq + sizeof lie, &a, sizeof a);
  CHECK(fw_handle_reset(&st, req, 32, resp, &out) == 0);
  memcpy(&hq, resp, sizeof hq);
  CHECK(hq.status == C7X_ERR_OP);
  hq = (c7x_msg_header){C7X_MSG_RESET, 38, 99, 0}; /* length field disagrees */
  memcpy(req, &hq, sizeof hq);
  CHECK(fw_handle_reset(&st, req, 16, resp, &out) == 0);
  memcpy(&hq, resp, sizeof hq);
  CHECK(hq.status == C7X_ERR_SIZE && hq.seq == 38);
  st.modules[3].handle = st.modules[9].handle = 0;
}

int main(void) {
  fw_state_init(&st, ddr, sizeof ddr, l2, sizeof l2, shared, 8192, 4096, 5);
  uint8_t resp[C7X_MSG_MAX];
  c7x_msg_header h;
  size_t n;

  /* PING: 16-byte request, response type | 0x1000, same seq. */
  n = call(C7X_MSG_PING, 41, 16, NULL, 0, 16, resp, &h);
  CHECK(h.type == (C7X_MSG_PING | C7X_MSG_RESPONSE) && h.seq == 41 && h.status == C7X_OK);
  CHECK(n == sizeof h + sizeof(c7x_ping_resp));
  c7x_ping_resp pr;
  memcpy(&pr, resp + sizeof h, sizeof pr);
  CHECK(pr.version == C7X_PROTOCOL_VERSION);

  /* Shorter than a header. */
  n = call(C7X_MSG_PING, 1, 16, NULL, 0, 7, resp, &h);
  CHECK(h.status == C7X_ERR_SIZE && message_has(resp, n, "shorter than"));

  /* Header length disagrees with the packet. */
  n = call(C7X_MSG_PING, 2, 20, NULL, 0, 16, resp, &h);
  CHECK(h.status == C7X_ERR_SIZE && h.seq == 2 && message_has(resp, n, "header says 20"));

  /* More than 512 bytes (the transport passes 513 for a truncated packet). */
  n = call(C7X_MSG_PING, 3, 513, NULL, 0, 513, resp, &h);
  CHECK(h.status == C7X_ERR_SIZE && message_has(resp, n, "512"));

  /* Unknown type, and a response type sent as a request. */
  n = call(0x0077, 4, 16, NULL, 0, 16, resp, &h);
  CHECK(h.status == C7X_ERR_OP && h.type == (0x0077 | C7X_MSG_RESPONSE) && message_has(resp, n, "0x77"));
  n = call(C7X_MSG_PING | C7X_MSG_RESPONSE, 5, 16, NULL, 0, 16, resp, &h);
  CHECK(h.status == C7X_ERR_OP && message_has(resp, n, "response"));

  /* A body where none belongs, and a body of the wrong size. */
  uint8_t junk[64] = {1, 2, 3};
  n = call(C7X_MSG_PING, 6, 20, junk, 4, 20, resp, &h);
  CHECK(h.status == C7X_ERR_SIZE && message_has(resp, n, "body of 4 bytes"));
  n = call(C7X_MSG_DYN_UNLOAD, 7, 20, junk, 4, 20, resp, &h);
  CHECK(h.status == C7X_ERR_SIZE && message_has(resp, n, "expected 16"));

  /* Unknown handles (64 bits on the wire, printed whole). */
  c7x_handle_req hq = {UINT64_C(0x8000000000000063), 0, 0};
  n = call(C7X_MSG_DYN_UNLOAD, 8, 32, &hq, sizeof hq, 32, resp, &h);
  CHECK(h.status == C7X_ERR_HANDLE && message_has(resp, n, "handle 9223372036854775907"));
  n = call(C7X_MSG_DYN_INFO, 9, 32, &hq, sizeof hq, 32, resp, &h);
  CHECK(h.status == C7X_ERR_HANDLE);

  /* INFER: too many inline inputs, a length that disagrees with
   * num_inputs, then an unknown handle. */
  uint8_t ib[C7X_MSG_MAX];
  memset(ib, 0, sizeof ib);
  c7x_infer_req iq = {99, 0, 7, 0, 0};
  CHECK(sizeof iq == 24);
  memcpy(ib, &iq, sizeof iq);
  n = call(C7X_MSG_INFER, 10, 16 + 24, ib, 24, 40, resp, &h);
  CHECK(h.status == C7X_ERR_INVALID && message_has(resp, n, "7 inputs"));
  iq.num_inputs = 1;
  memcpy(ib, &iq, sizeof iq);
  n = call(C7X_MSG_INFER, 11, 16 + 24 + 40, ib, 64, 80, resp, &h);
  CHECK(h.status == C7X_ERR_SIZE && message_has(resp, n, "for 1 inputs"));
  n = call(C7X_MSG_INFER, 12, 16 + 24 + 80, ib, 104, 120, resp, &h);
  CHECK(h.status == C7X_ERR_HANDLE && message_has(resp, n, "handle 99"));

  /* DYN_LOAD: empty, larger than staging, and not an ELF image. */
  c7x_dyn_load_req lq = {0, 0, {0, 0}};
  n = call(C7X_MSG_DYN_LOAD, 13, 32, &lq, sizeof lq, 32, resp, &h);
  CHECK(h.status == C7X_ERR_SIZE);
  lq.elf_size = 8193;
  n = call(C7X_MSG_DYN_LOAD, 14, 32, &lq, sizeof lq, 32, resp, &h);
  CHECK(h.status == C7X_ERR_SIZE && message_has(resp, n, "8193"));
  memcpy(shared, "not an elf at all", 17);
  lq.elf_size = 64;
  n = call(C7X_MSG_DYN_LOAD, 15, 32, &lq, sizeof lq, 32, resp, &h);
  CHECK(h.status == C7X_ERR_LOAD && message_has(resp, n, "not an ELF"));
  /* ELF magic, truncated headers. */
  memcpy(shared, "\x7f" "ELF\x02\x01\x01", 7);
  n = call(C7X_MSG_DYN_LOAD, 16, 32, &lq, sizeof lq, 32, resp, &h);
  CHECK(h.status == C7X_ERR_LOAD);

  /* SHM_ATTACH hands out the region's descriptor and windows. */
  int fd = -1;
  uint8_t req[16];
  c7x_msg_header aq = {C7X_MSG_SHM_ATTACH, 17, 16, 0};
  memcpy(req, &aq, sizeof aq);
  n = fw_handle_message(&st, req, 16, resp, &fd);
  memcpy(&h, resp, sizeof h);
  CHECK(h.status == C7X_OK && fd == 5 && n == sizeof h + sizeof(c7x_shm_attach_resp));
  c7x_shm_attach_resp ar;
  memcpy(&ar, resp + sizeof h, sizeof ar);
  CHECK(ar.staging_addr == C7X_STAGING_ADDR && ar.staging_size == 8192 &&
        ar.result_addr == C7X_RESULT_ADDR && ar.result_size == 4096);

  /* Not served yet: a clear error, not silence. */
  n = call(C7X_MSG_MODEL_LOAD, 18, 32, junk, 16, 32, resp, &h);
  CHECK(h.status == C7X_ERR_OP && message_has(resp, n, "not served"));

  /* GET_STATUS counts what happened above. */
  n = call(C7X_MSG_GET_STATUS, 19, 16, NULL, 0, 16, resp, &h);
  c7x_status_resp sr;
  memcpy(&sr, resp + sizeof h, sizeof sr);
  CHECK(h.status == C7X_OK && sr.completed == 2 && sr.failed == 17 && sr.loaded_modules == 0);
  CHECK(sr.version == 4);
  CHECK(sr.ddr_heap_size == sizeof ddr && sr.ddr_heap_free == sizeof ddr);

  /* GET_FAULT: unsupervised, nothing to tell; with a supervisor's page,
   * its account of the last restart. A body is refused. */
  n = call(C7X_MSG_GET_FAULT, 20, 16, NULL, 0, 16, resp, &h);
  c7x_fault_resp fr;
  memcpy(&fr, resp + sizeof h, sizeof fr);
  CHECK(h.status == C7X_OK && n == sizeof h + sizeof fr + 1 && resp[n - 1] == '\0');
  CHECK(fr.restarts == 0 && fr.kind == C7X_FAULT_NONE && fr.handle == 0);
  static fw_run_state run;
  run.restarts = 2;
  run.last_kind = C7X_FAULT_CRASH;
  run.last_handle = 3;
  strcpy(run.last_fault, "firmware fault while running handle 3: killed by SIGSEGV");
  st.run = &run;
  n = call(C7X_MSG_GET_FAULT, 21, 16, NULL, 0, 16, resp, &h);
  memcpy(&fr, resp + sizeof h, sizeof fr);
  CHECK(h.status == C7X_OK && fr.restarts == 2 && fr.kind == C7X_FAULT_CRASH && fr.handle == 3);
  CHECK(!strcmp((const char *)resp + sizeof h + sizeof fr, run.last_fault) && resp[n - 1] == '\0');
  /* The longest account still fits one message, NUL-terminated. */
  memset(run.last_fault, 'x', sizeof run.last_fault - 1);
  n = call(C7X_MSG_GET_FAULT, 22, 16, NULL, 0, 16, resp, &h);
  CHECK(h.status == C7X_OK && n <= C7X_MSG_MAX && resp[n - 1] == '\0');
  st.run = NULL;
  n = call(C7X_MSG_GET_FAULT, 23, 20, junk, 4, 20, resp, &h);
  CHECK(h.status == C7X_ERR_SIZE);

  test_reset();
  UNIT_MAIN_END();
}
