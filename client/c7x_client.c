/*
 * libc7x_arm_runtime: the host side of the compute protocol.
 *
 * One request at a time: send a packet, wait for the packet that answers
 * it (same seq, type | C7X_MSG_RESPONSE, length as its header says). The
 * shared region arrives with SHM_ATTACH, as a file descriptor.
 *
 * Faults: when the firmware dies during a request (the connection closes)
 * the client reconnects to the same socket, where the supervisor has
 * started a new firmware, maps the new shared region at the same address
 * (views handed out earlier stay valid memory) and asks it why
 * (GET_FAULT): that text is the request's error, C7X_ERR_FAULT or
 * C7X_ERR_TIMEOUT. With a client timeout set, a request that runs longer
 * resets the firmware (C7X_MSG_RESET, with the handles this client holds)
 * the same way; when the firmware refuses (other clients' modules are
 * loaded) the request fails with C7X_ERR_TIMEOUT and the reason, and the
 * connection stays: the late response is skipped when it comes.
 */
#define _GNU_SOURCE

#include "c7x_client.h"
#include "cstatic/profile_report.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#define C7X_DEFAULT_SOCKET "/tmp/c7x_fw.sock"

enum { INFO_CACHE = 8 };

/* A module's tensors, as DYN_INFO gave them: inputs are checked against
 * them before anything is written to the staging buffer. */
typedef struct module_info {
  uint64_t handle; /* 0: free */
  int n_in, n_out;
  c7x_tensor_desc in[C7X_MAX_TENSORS];
} module_info;

struct c7x_client {
  char path[108];
  int timeout_ms; /* 0: wait for ever */
  c7x_client_stats stats;
  module_info info[INFO_CACHE];
  unsigned info_next;
  uint64_t held[C7X_RESET_MAX_HANDLES]; /* handles loaded or used here: RESET's proof */
  int n_held;
  int recovering; /* inside reconnect(): a second loss is not recovered */
  int attached;   /* opened: losing the firmware later is a fault */
  int sock;
  uint32_t seq;
  uint8_t *shared;
  size_t shared_len;
  uint8_t *staging, *result;
  size_t staging_size, result_size;
  uint64_t staging_addr, result_addr;
  size_t input_data_offset; /* after the last module image */
  size_t inputs_end;        /* end of create_input allocations */
  char error[C7X_MSG_MAX];
};

static char open_error[512];
static int open_status;

static int set_error(c7x_client *c, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int set_error(c7x_client *c, int status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c ? c->error : open_error, c ? sizeof c->error : sizeof open_error, fmt, ap);
  va_end(ap);
  if (!c) open_status = status;
  return status;
}

const char *c7x_client_open_error(void) { return open_error; }
int c7x_client_open_status(void) { return open_status; }
const char *c7x_client_last_error(const c7x_client *c) { return c ? c->error : open_error; }

static const c7x_status_info statuses[] = {
#define C7X_STATUS_ROW(name, value, text) {value, #name, text},
    C7X_STATUS_LIST(C7X_STATUS_ROW)
#undef C7X_STATUS_ROW
};

const c7x_status_info *c7x_status_table(size_t *n) {
  *n = sizeof statuses / sizeof statuses[0];
  return statuses;
}

const char *c7x_strerror(int status) {
  for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++)
    if (statuses[i].value == status) return statuses[i].text;
  return "unknown status";
}

/* Remember a handle this client loaded or used (RESET presents them). */
static void hold(c7x_client *c, uint64_t handle) {
  for (int i = 0; i < c->n_held; i++)
    if (c->held[i] == handle) return;
  if (c->n_held == C7X_RESET_MAX_HANDLES) { /* forget the oldest */
    memmove(c->held, c->held + 1, (C7X_RESET_MAX_HANDLES - 1) * sizeof c->held[0]);
    c->n_held--;
  }
  c->held[c->n_held++] = handle;
}

static void forget(c7x_client *c, uint64_t handle) {
  for (int i = 0; i < c->n_held; i++)
    if (c->held[i] == handle) {
      memmove(c->held + i, c->held + i + 1, (size_t)(c->n_held - i - 1) * sizeof c->held[0]);
      c->n_held--;
      return;
    }
}

/* The firmware's C7X_MSG_REFUSED on a connection it does not serve: its
 * status, with the client's error set to its reason; else 0. */
static int refused(c7x_client *c, const uint8_t *buf, size_t n) {
  c7x_msg_header h;
  if (n < sizeof h) return 0;
  memcpy(&h, buf, sizeof h);
  if (h.type != (C7X_MSG_REFUSED | C7X_MSG_RESPONSE)) return 0;
  char text[C7X_MSG_MAX];
  size_t len = n - sizeof h < sizeof text - 1 ? n - sizeof h : sizeof text - 1;
  memcpy(text, buf + sizeof h, len);
  text[len] = '\0';
  return set_error(c, h.status < 0 ? h.status : C7X_ERR_BUSY, "%s (firmware at %s)",
                   *text ? text : "the firmware refused the connection", c->path);
}

/* After the connection failed: the refusal's status if the firmware said
 * why first, else 0. A socket closed with our request unread reports
 * ECONNRESET once, ahead of what is queued: read past it. */
static int take_refusal(c7x_client *c) {
  uint8_t buf[C7X_MSG_MAX];
  for (int tries = 0; tries < 3; tries++) {
    ssize_t n = recv(c->sock, buf, sizeof buf, MSG_DONTWAIT);
    if (n > 0) return refused(c, buf, (size_t)n);
    if (n == 0 || (errno != ECONNRESET && errno != EINTR)) return 0;
  }
  return 0;
}

static int reconnect(c7x_client *c, int status, const char *why);
static int attach(c7x_client *c);

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* Send type + body; receive the response body into resp (up to
 * resp_cap bytes, *resp_len set) and an optional file descriptor. */
static int transact(c7x_client *c, uint32_t type, const void *body, size_t body_len, void *resp,
                    size_t resp_cap, size_t *resp_len, int *fd_out) {
  uint8_t msg[C7X_MSG_MAX], in[C7X_MSG_MAX + 1];
  c7x_msg_header h = {type, ++c->seq, (uint32_t)(sizeof h + body_len), 0};
  if (sizeof h + body_len > C7X_MSG_MAX)
    return set_error(c, C7X_ERR_SIZE, "request of %zu bytes exceeds %u", sizeof h + body_len, C7X_MSG_MAX);
  if (c->sock < 0)
    return set_error(c, C7X_ERR_IO, "not connected: the firmware at %s went away and did not come back", c->path);
  memcpy(msg, &h, sizeof h);
  if (body_len) memcpy(msg + sizeof h, body, body_len);
  if (send(c->sock, msg, h.len, MSG_NOSIGNAL) != (ssize_t)h.len) {
    /* The firmware died since the last request (another client's module
     * may have crashed it): report that, and be connected to its
     * successor for the next request. */
    if (errno == EPIPE || errno == ECONNRESET || errno == ENOTCONN) {
      int rs = take_refusal(c);
      if (rs) return rs;
      if (!c->attached || c->recovering)
        return set_error(c, C7X_ERR_IO, "the firmware closed the connection (it crashed, or was reset)");
      return reconnect(c, C7X_ERR_FAULT, NULL);
    }
    return set_error(c, C7X_ERR_IO, "sending to the firmware: %s", strerror(errno));
  }

  ssize_t n;
  int fd = -1;
  c7x_msg_header rh;
  double t0 = now_s();
  for (;;) { /* until the response to this request */
    if (c->timeout_ms > 0) {
      int left = c->timeout_ms - (int)((now_s() - t0) * 1000.0);
      struct pollfd pf = {c->sock, POLLIN, 0};
      int pr = left > 0 ? poll(&pf, 1, left) : 0;
      if (pr < 0 && errno == EINTR) continue;
      if (pr == 0) {
        char why[128];
        snprintf(why, sizeof why, "request timed out after %.3f s (client timeout)", c->timeout_ms / 1000.0);
        if (!c->attached || c->recovering) return set_error(c, C7X_ERR_TIMEOUT, "%s", why);
        return reconnect(c, C7X_ERR_TIMEOUT, why);
      }
    }
    struct iovec iov = {in, sizeof in};
    union {
      struct cmsghdr align;
      char buf[CMSG_SPACE(sizeof(int))];
    } ctl;
    struct msghdr mh;
    memset(&mh, 0, sizeof mh);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = ctl.buf;
    mh.msg_controllen = sizeof ctl.buf;
    n = recvmsg(c->sock, &mh, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == ECONNRESET) {
      int rs = take_refusal(c);
      if (rs) return rs;
    }
    if (n == 0 || (n < 0 && errno == ECONNRESET)) {
      if (!c->attached || c->recovering)
        return set_error(c, C7X_ERR_IO, "the firmware closed the connection (it crashed, or was reset)");
      return reconnect(c, C7X_ERR_FAULT, NULL);
    }
    if (n < 0) return set_error(c, C7X_ERR_IO, "receiving from the firmware: %s", strerror(errno));
    fd = -1;
    for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm))
      if (cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS) memcpy(&fd, CMSG_DATA(cm), sizeof fd);
    if ((size_t)n < sizeof rh || (mh.msg_flags & MSG_TRUNC)) {
      if (fd >= 0) close(fd);
      return set_error(c, C7X_ERR_IO, "malformed response of %zd bytes", n);
    }
    memcpy(&rh, in, sizeof rh);
    int rs = refused(c, in, (size_t)n);
    if (rs) {
      if (fd >= 0) close(fd);
      return rs;
    }
    /* The late answer to a request that timed out here (its RESET was
     * refused): skip it. */
    if ((rh.type & C7X_MSG_RESPONSE) && rh.seq != h.seq && h.seq - rh.seq < (1u << 30)) {
      if (fd >= 0) close(fd);
      continue;
    }
    break;
  }
  if (fd_out) *fd_out = fd;
  else if (fd >= 0) close(fd);
  if (rh.type != (type | C7X_MSG_RESPONSE) || rh.seq != h.seq || rh.len != (uint32_t)n) {
    if (fd_out && fd >= 0) close(fd);
    return set_error(c, C7X_ERR_IO, "response type 0x%x seq %u len %u does not answer request 0x%x seq %u (%zd bytes)",
                     rh.type, rh.seq, rh.len, type, h.seq, n);
  }
  size_t blen = (size_t)n - sizeof rh;
  if (rh.status != C7X_OK) {
    if (fd_out && fd >= 0) close(fd);
    if (blen > 0) {
      in[n < (ssize_t)sizeof in ? n : (ssize_t)sizeof in - 1] = '\0';
      return set_error(c, rh.status, "%s", (const char *)in + sizeof rh);
    }
    return set_error(c, rh.status, "%s", c7x_strerror(rh.status));
  }
  if (blen > resp_cap) blen = resp_cap;
  if (resp && blen) memcpy(resp, in + sizeof rh, blen);
  if (resp_len) *resp_len = blen;
  c->error[0] = '\0';
  return C7X_OK;
}

c7x_client *c7x_client_open(void) { return c7x_client_open_path(NULL); }

static int connect_to(const char *path) {
  int sock = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (sock < 0) return -1;
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  if (connect(sock, (struct sockaddr *)&a, sizeof a) != 0) {
    int e = errno;
    close(sock);
    errno = e;
    return -1;
  }
  return sock;
}

/* SHM_ATTACH and map the region; at the old address when it has the old
 * size, so that pointers into it (create_input tensors, run_nocopy views)
 * stay valid memory across a firmware restart. */
static int attach(c7x_client *c) {
  c7x_shm_attach_resp r;
  size_t rl = 0;
  int fd = -1;
  int s = transact(c, C7X_MSG_SHM_ATTACH, NULL, 0, &r, sizeof r, &rl, &fd);
  if (s != C7X_OK) return s;
  if (rl != sizeof r || fd < 0) {
    if (fd >= 0) close(fd);
    return set_error(c, C7X_ERR_IO, "SHM_ATTACH answered without the shared region");
  }
  size_t len = (size_t)(r.staging_size + r.result_size);
  void *p;
  if (c->shared && len == c->shared_len) {
    p = mmap(c->shared, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0);
  } else {
    if (c->shared) munmap(c->shared, c->shared_len);
    c->shared = NULL;
    p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  }
  int e = errno;
  close(fd);
  if (p == MAP_FAILED) return set_error(c, C7X_ERR_IO, "cannot map the shared region: %s", strerror(e));
  c->shared = p;
  c->shared_len = len;
  c->staging = c->shared;
  c->staging_size = (size_t)r.staging_size;
  c->staging_addr = r.staging_addr;
  c->result = c->shared + r.staging_size;
  c->result_size = (size_t)r.result_size;
  c->result_addr = r.result_addr;
  return C7X_OK;
}

/* The firmware died under a request (status C7X_ERR_FAULT), or did not
 * answer in time (C7X_ERR_TIMEOUT; why says so): reset it if it still
 * runs, reconnect to its successor and report what happened. Handles and
 * module images are gone; create_input allocations are forgotten. */
/* The host's recovery from a request that does not end: a RESET, on a
 * fresh connection (ours is busy with the request), presenting every
 * handle this client holds. 1 when the firmware went (our connection
 * closed), 0 when it refused (the reason in refusal). */
static int request_reset(c7x_client *c, char *refusal, size_t n_refusal) {
  int r = connect_to(c->path);
  if (r < 0) return 1; /* nothing answers: the firmware is gone already */
  uint8_t msg[C7X_MSG_MAX];
  c7x_reset_req q = {(uint32_t)c->n_held, 0};
  c7x_msg_header h = {C7X_MSG_RESET, 0, (uint32_t)(sizeof h + sizeof q + (size_t)c->n_held * sizeof(uint64_t)), 0};
  memcpy(msg, &h, sizeof h);
  memcpy(msg + sizeof h, &q, sizeof q);
  memcpy(msg + sizeof h + sizeof q, c->held, (size_t)c->n_held * sizeof(uint64_t));
  send(r, msg, h.len, MSG_NOSIGNAL);
  /* Granted: the firmware dies, both connections close. Refused: the
   * fresh one hears why at once. */
  int gone = 1;
  struct pollfd pf[2] = {{c->sock, 0, 0}, {r, POLLIN, 0}}; /* ours: only its hang-up */
  double t0 = now_s();
  while (now_s() - t0 < 5.0) {
    int pr = poll(pf, 2, 100);
    if (pr < 0 && errno != EINTR) break;
    if (pf[0].revents & (POLLHUP | POLLERR)) break;
    if (pf[1].revents & POLLIN) {
      uint8_t in[C7X_MSG_MAX + 1];
      ssize_t n = recv(r, in, sizeof in - 1, 0);
      c7x_msg_header rh;
      if (n > (ssize_t)sizeof rh) {
        memcpy(&rh, in, sizeof rh);
        if (rh.status != C7X_OK) {
          in[n] = '\0';
          snprintf(refusal, n_refusal, "%s", (const char *)in + sizeof rh);
          gone = 0;
        }
      }
      break;
    }
  }
  close(r);
  return gone;
}

/* The firmware died under a request (status C7X_ERR_FAULT), or did not
 * answer in time (C7X_ERR_TIMEOUT; why says so): reset it if it still
 * runs, reconnect to its successor and report what happened. Handles and
 * module images are gone; create_input allocations are forgotten. When
 * the firmware refuses the reset, nothing is lost: the request fails, the
 * connection stays. */
static int reconnect(c7x_client *c, int status, const char *why) {
  if (status == C7X_ERR_TIMEOUT) {
    char refusal[C7X_MSG_MAX];
    if (!request_reset(c, refusal, sizeof refusal))
      return set_error(c, C7X_ERR_TIMEOUT, "%s; the firmware was not reset: %s", why, refusal);
  }
  c->stats.faults++;
  memset(c->info, 0, sizeof c->info);
  c->n_held = 0;
  c->input_data_offset = 0;
  c->inputs_end = 0;
  close(c->sock);
  c->sock = -1;
  /* The supervisor restarts the firmware at once; allow it 5 s. */
  double t0 = now_s();
  while ((c->sock = connect_to(c->path)) < 0 && now_s() - t0 < 5.0) usleep(10000);
  if (c->sock < 0)
    return set_error(c, status == C7X_ERR_TIMEOUT ? status : C7X_ERR_IO,
                     "%s; the firmware went away and no firmware answers at %s any more (is c7x_fw "
                     "running supervised?)", why ? why : "the firmware closed the connection", c->path);
  int saved = c->timeout_ms;
  c->timeout_ms = 5000; /* the new firmware is idle */
  c->recovering = 1;
  int s = attach(c);
  c7x_fault_resp fr;
  uint8_t buf[C7X_MSG_MAX];
  size_t n = 0;
  if (s == C7X_OK) s = transact(c, C7X_MSG_GET_FAULT, NULL, 0, buf, sizeof buf, &n, NULL);
  c->recovering = 0;
  c->timeout_ms = saved;
  c->stats.reconnects++;
  if (s != C7X_OK) return set_error(c, C7X_ERR_IO, "the firmware went away; reconnecting: %s", c->error);
  if (n < sizeof fr) return set_error(c, C7X_ERR_IO, "GET_FAULT response of %zu bytes", n);
  memcpy(&fr, buf, sizeof fr);
  buf[n < sizeof buf ? n : sizeof buf - 1] = '\0';
  const char *text = (const char *)buf + sizeof fr;
  if (status != C7X_ERR_TIMEOUT && fr.kind == C7X_FAULT_TIMEOUT) status = C7X_ERR_TIMEOUT;
  if (why) return set_error(c, status, "%s; %s", why, *text ? text : "the firmware was reset");
  return set_error(c, status, "%s", *text ? text : "the firmware closed the connection");
}

c7x_client *c7x_client_open_path(const char *path) {
  if (!path) path = getenv("C7X_FW_SOCKET");
  if (!path || !*path) path = C7X_DEFAULT_SOCKET;
  c7x_client *c = calloc(1, sizeof *c);
  if (!c) {
    set_error(NULL, C7X_ERR_NOMEM, "out of memory");
    return NULL;
  }
  if (strlen(path) >= sizeof c->path) {
    set_error(NULL, C7X_ERR_INVALID, "socket path %s is too long", path);
    free(c);
    return NULL;
  }
  snprintf(c->path, sizeof c->path, "%s", path);
  const char *t = getenv("C7X_TIMEOUT_MS");
  if (t && *t) c->timeout_ms = atoi(t);
  c->sock = connect_to(path);
  if (c->sock < 0) {
    set_error(NULL, C7X_ERR_IO, "cannot connect to the firmware at %s: %s (is c7x_fw running? "
              "set C7X_FW_SOCKET)", path, strerror(errno));
    free(c);
    return NULL;
  }
  int s = attach(c);
  uint32_t version = 0;
  if (s == C7X_OK) s = c7x_client_ping(c, &version, NULL);
  if (s == C7X_OK && version != C7X_PROTOCOL_VERSION)
    s = set_error(c, C7X_ERR_IO, "the firmware at %s speaks protocol %u, this client %u (rebuild one of them)", path,
                  version, C7X_PROTOCOL_VERSION);
  if (s != C7X_OK) {
    set_error(NULL, s, "%s", c->error);
    if (c->shared) munmap(c->shared, c->shared_len);
    if (c->sock >= 0) close(c->sock);
    free(c);
    return NULL;
  }
  c->attached = 1;
  return c;
}

void c7x_client_set_timeout(c7x_client *c, int timeout_ms) { c->timeout_ms = timeout_ms > 0 ? timeout_ms : 0; }

void c7x_client_get_stats(const c7x_client *c, c7x_client_stats *s) { *s = c->stats; }

int c7x_client_get_fault(c7x_client *c, uint32_t *restarts, int32_t *kind, char *text, size_t n_text) {
  uint8_t buf[C7X_MSG_MAX];
  size_t n = 0;
  int s = transact(c, C7X_MSG_GET_FAULT, NULL, 0, buf, sizeof buf, &n, NULL);
  if (s != C7X_OK) return s;
  c7x_fault_resp fr;
  if (n < sizeof fr + 1 || buf[n - 1] != '\0') return set_error(c, C7X_ERR_IO, "GET_FAULT response of %zu bytes", n);
  memcpy(&fr, buf, sizeof fr);
  if (restarts) *restarts = fr.restarts;
  if (kind) *kind = fr.kind;
  if (text && n_text) snprintf(text, n_text, "%s", (const char *)buf + sizeof fr);
  return C7X_OK;
}

void c7x_client_close(c7x_client *c) {
  if (!c) return;
  if (c->shared) munmap(c->shared, c->shared_len);
  if (c->sock >= 0) close(c->sock);
  free(c);
}

int c7x_client_ping(c7x_client *c, uint32_t *version, uint64_t *uptime_us) {
  c7x_ping_resp r;
  size_t n = 0;
  int s = transact(c, C7X_MSG_PING, NULL, 0, &r, sizeof r, &n, NULL);
  if (s != C7X_OK) return s;
  if (n != sizeof r) return set_error(c, C7X_ERR_IO, "PING response of %zu bytes", n);
  if (version) *version = r.version;
  if (uptime_us) *uptime_us = r.uptime_us;
  return C7X_OK;
}

int c7x_client_get_status(c7x_client *c, c7x_fw_status *st) {
  c7x_status_resp r;
  size_t n = 0;
  int s = transact(c, C7X_MSG_GET_STATUS, NULL, 0, &r, sizeof r, &n, NULL);
  if (s != C7X_OK) return s;
  if (n != sizeof r) return set_error(c, C7X_ERR_IO, "GET_STATUS response of %zu bytes", n);
  st->version = r.version;
  st->loaded_modules = r.loaded_modules;
  st->uptime_us = r.uptime_us;
  st->completed = r.completed;
  st->failed = r.failed;
  st->ddr_heap_size = r.ddr_heap_size;
  st->ddr_heap_free = r.ddr_heap_free;
  st->l2_size = r.l2_size;
  st->l2_free = r.l2_free;
  return C7X_OK;
}

void *c7x_client_get_input_buffer(c7x_client *c, size_t *size) {
  if (size) *size = c->staging_size;
  return c->staging;
}

void *c7x_client_get_output_buffer(c7x_client *c, size_t *size) {
  if (size) *size = c->result_size;
  return c->result;
}

size_t c7x_client_get_input_data_offset(const c7x_client *c) { return c->input_data_offset; }

static size_t align64(size_t v) { return (v + 63) & ~(size_t)63; }

void *c7x_client_create_input(c7x_client *c, size_t nbytes) {
  size_t off = align64(c->inputs_end > c->input_data_offset ? c->inputs_end : c->input_data_offset);
  if (off > c->staging_size || nbytes > c->staging_size - off) {
    set_error(c, C7X_ERR_NOMEM, "create_input: %zu bytes do not fit the staging buffer (%zu of %zu used)",
              nbytes, off, c->staging_size);
    return NULL;
  }
  c->inputs_end = off + nbytes;
  return c->staging + off;
}

void c7x_client_reset_inputs(c7x_client *c) { c->inputs_end = 0; }

int c7x_client_dyn_load_mem(c7x_client *c, const void *image, size_t size, uint64_t *handle) {
  if (size == 0 || size > c->staging_size || size > UINT32_MAX)
    return set_error(c, C7X_ERR_SIZE, "module image of %zu bytes does not fit the %zu-byte staging buffer",
                     size, c->staging_size);
  if (image != c->staging) memcpy(c->staging, image, size);
  c7x_dyn_load_req q = {(uint32_t)size, 0, {0, 0}};
  c7x_dyn_load_resp r;
  size_t n = 0;
  int s = transact(c, C7X_MSG_DYN_LOAD, &q, sizeof q, &r, sizeof r, &n, NULL);
  if (s != C7X_OK) return s;
  if (n != sizeof r) return set_error(c, C7X_ERR_IO, "DYN_LOAD response of %zu bytes", n);
  c->input_data_offset = align64(size);
  c->inputs_end = 0;
  *handle = r.handle;
  hold(c, r.handle);
  return C7X_OK;
}

int c7x_client_dyn_load(c7x_client *c, const char *path, uint64_t *handle) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat sb;
  if (fd < 0 || fstat(fd, &sb) != 0) {
    int e = errno;
    if (fd >= 0) close(fd);
    return set_error(c, C7X_ERR_IO, "cannot read module %s: %s", path, strerror(e));
  }
  size_t size = (size_t)sb.st_size;
  if (size == 0 || size > c->staging_size) {
    close(fd);
    return set_error(c, C7X_ERR_SIZE, "module %s: %zu bytes, the staging buffer holds %zu", path, size,
                     c->staging_size);
  }
  /* Straight into the staging buffer: the image is not copied again. */
  for (size_t done = 0; done < size;) {
    ssize_t r = read(fd, c->staging + done, size - done);
    if (r <= 0) {
      int e = errno;
      close(fd);
      return set_error(c, C7X_ERR_IO, "reading module %s: %s", path, r < 0 ? strerror(e) : "short file");
    }
    done += (size_t)r;
  }
  close(fd);
  return c7x_client_dyn_load_mem(c, c->staging, size, handle);
}

int c7x_client_dyn_unload(c7x_client *c, uint64_t handle) {
  c7x_handle_req q = {handle, 0, 0};
  for (int i = 0; i < INFO_CACHE; i++)
    if (c->info[i].handle == handle) c->info[i].handle = 0;
  int s = transact(c, C7X_MSG_DYN_UNLOAD, &q, sizeof q, NULL, 0, NULL, NULL);
  if (s == C7X_OK || s == C7X_ERR_HANDLE) forget(c, handle);
  return s;
}

static void from_wire(const c7x_wire_tensor *w, void *data, c7x_tensor_desc *d) {
  memset(d, 0, sizeof *d);
  d->data = data;
  d->data_size = (size_t)w->size;
  d->ndim = w->ndim;
  d->dtype_code = w->dtype_code;
  d->dtype_bits = w->dtype_bits;
  for (int i = 0; i < C7X_MAX_NDIM; i++) d->shape[i] = w->shape[i];
}

/* ---- paged requests (DYN_INFO, PROFILE) --------------------------------------- */

/* One page of a paged request, from item `first`: the response in r (n bytes,
 * r has room for C7X_MSG_MAX), its fixed head copied to head. */
static int request_page(c7x_client *c, uint32_t type, const char *request, uint64_t handle, uint32_t first,
                        uint8_t *r, size_t *n, void *head, size_t head_size) {
  c7x_handle_req q = {handle, first, 0};
  int s = transact(c, type, &q, sizeof q, r, C7X_MSG_MAX, n, NULL);
  if (s != C7X_OK) return s;
  if (*n < head_size) return set_error(c, C7X_ERR_IO, "%s response of %zu bytes", request, *n);
  memcpy(head, r, head_size);
  return C7X_OK;
}

/* A page is its head and exactly `rows` items, nothing more or less. */
static int check_page(c7x_client *c, const char *request, const char *items, size_t n, size_t head_size,
                      size_t item_size, uint32_t first, uint32_t rows, uint32_t total) {
  if (n != head_size + (size_t)rows * item_size)
    return set_error(c, C7X_ERR_IO, "%s response of %zu bytes for %s %u..%u of %u", request, n, items, first,
                     first + rows, total);
  return C7X_OK;
}

/* DYN_INFO, page by page (at most C7X_INFO_MAX_TENSORS descriptors per
 * response) until every input and output is known. */
int c7x_client_dyn_info(c7x_client *c, uint64_t handle, c7x_tensor_desc *in, int *n_in,
                        c7x_tensor_desc *out, int *n_out) {
  uint32_t first = 0, total = 0, n_inputs = 0;
  do {
    uint8_t r[C7X_MSG_MAX];
    size_t n = 0;
    c7x_dyn_info_resp h;
    int s = request_page(c, C7X_MSG_DYN_INFO, "DYN_INFO", handle, first, r, &n, &h, sizeof h);
    if (s != C7X_OK) return s;
    if (h.num_inputs > C7X_MAX_TENSORS || h.num_outputs > C7X_MAX_TENSORS)
      return set_error(c, C7X_ERR_IO, "DYN_INFO: %u inputs and %u outputs (at most %d each)", h.num_inputs,
                       h.num_outputs, C7X_MAX_TENSORS);
    if (first == 0) {
      if ((int)h.num_inputs > *n_in || (int)h.num_outputs > *n_out)
        return set_error(c, C7X_ERR_SIZE, "module has %u inputs and %u outputs, room for %d and %d",
                         h.num_inputs, h.num_outputs, *n_in, *n_out);
      n_inputs = h.num_inputs;
      total = h.num_inputs + h.num_outputs;
    } else if (h.num_inputs + h.num_outputs != total || h.num_inputs != n_inputs) {
      return set_error(c, C7X_ERR_IO, "DYN_INFO: the module's tensor counts changed between pages");
    }
    uint32_t want = c7x_page_rows(first, total, C7X_INFO_MAX_TENSORS);
    s = check_page(c, "DYN_INFO", "tensors", n, sizeof h, sizeof(c7x_wire_tensor), first, want, total);
    if (s != C7X_OK) return s;
    for (uint32_t i = 0; i < want; i++) {
      c7x_wire_tensor w;
      uint32_t k = first + i;
      memcpy(&w, r + sizeof h + i * sizeof w, sizeof w);
      from_wire(&w, NULL, k < n_inputs ? &in[k] : &out[k - n_inputs]);
    }
    first += want;
  } while (first < total);
  *n_in = (int)n_inputs;
  *n_out = (int)(total - n_inputs);
  hold(c, handle); /* it answered: a module this client can name */
  return C7X_OK;
}

/* The module's inputs, from the cache or DYN_INFO. */
static int module_inputs(c7x_client *c, uint64_t handle, const module_info **out) {
  for (int i = 0; i < INFO_CACHE; i++)
    if (c->info[i].handle == handle && handle) {
      *out = &c->info[i];
      return C7X_OK;
    }
  module_info m;
  memset(&m, 0, sizeof m);
  c7x_tensor_desc outs[C7X_MAX_TENSORS];
  m.n_in = C7X_MAX_TENSORS;
  m.n_out = C7X_MAX_TENSORS;
  int s = c7x_client_dyn_info(c, handle, m.in, &m.n_in, outs, &m.n_out);
  if (s != C7X_OK) return s;
  m.handle = handle;
  module_info *slot = &c->info[c->info_next++ % INFO_CACHE];
  *slot = m;
  *out = slot;
  return C7X_OK;
}

static const char *dtype_str(char *b, size_t n, int32_t code, int32_t bits) {
  snprintf(b, n, "%s%d", code == 2 ? "float" : code == 1 ? "uint" : code == 0 ? "int" : "code?", (int)bits);
  return b;
}

/* Count, dtype and size of every input, before anything is written. */
static int check_inputs(c7x_client *c, uint64_t handle, const c7x_tensor_desc *inputs, int n_in) {
  const module_info *m;
  int s = module_inputs(c, handle, &m);
  if (s != C7X_OK) return s;
  if (n_in != m->n_in)
    return set_error(c, C7X_ERR_TENSOR, "INFER: module %llu takes %d input%s, got %d", (unsigned long long)handle, m->n_in,
                     m->n_in == 1 ? "" : "s", n_in);
  for (int i = 0; i < n_in; i++) {
    const c7x_tensor_desc *d = &inputs[i], *w = &m->in[i];
    char a[16], b[16];
    if (d->dtype_code != w->dtype_code || d->dtype_bits != w->dtype_bits)
      return set_error(c, C7X_ERR_TENSOR, "INFER: input %d: dtype %s, module %llu takes %s", i,
                       dtype_str(a, sizeof a, d->dtype_code, d->dtype_bits), (unsigned long long)handle,
                       dtype_str(b, sizeof b, w->dtype_code, w->dtype_bits));
    if (d->data_size != w->data_size)
      return set_error(c, C7X_ERR_TENSOR, "INFER: input %d: %zu bytes, module %llu takes %zu (%s)", i,
                       d->data_size, (unsigned long long)handle, w->data_size, dtype_str(b, sizeof b, w->dtype_code, w->dtype_bits));
  }
  return C7X_OK;
}

int c7x_client_infer(c7x_client *c, uint64_t handle, uint32_t model_id,
                     const c7x_tensor_desc *inputs, int n_in, c7x_tensor_desc *outputs,
                     int *n_out, uint64_t *cycles) {
  return c7x_client_infer_flags(c, handle, model_id, inputs, n_in, outputs, n_out, cycles, 0);
}

int c7x_client_infer_flags(c7x_client *c, uint64_t handle, uint32_t model_id,
                           const c7x_tensor_desc *inputs, int n_in, c7x_tensor_desc *outputs,
                           int *n_out, uint64_t *cycles, uint32_t flags) {
  if (n_in < 0 || n_in > C7X_MAX_TENSORS)
    return set_error(c, C7X_ERR_INVALID, "%d inputs: at most %d", n_in, C7X_MAX_TENSORS);
  if (!inputs && n_in) return set_error(c, C7X_ERR_INVALID, "INFER: no input descriptors");
  int cs = check_inputs(c, handle, inputs, n_in);
  if (cs != C7X_OK) return cs;
  /* Up to C7X_INFER_MAX_INLINE_INPUTS descriptors travel in the INFER
   * message; more go to the staging buffer (after the inputs) and the
   * request is INFER_LARGE. */
  c7x_wire_tensor wire[C7X_MAX_TENSORS];
  c7x_infer_req q = {handle, model_id, (uint32_t)n_in, flags, 0};
  /* Copies go after the create_input allocations. */
  size_t scratch = align64(c->inputs_end > c->input_data_offset ? c->inputs_end : c->input_data_offset);
  for (int i = 0; i < n_in; i++) {
    const c7x_tensor_desc *d = &inputs[i];
    if (d->ndim < 0 || d->ndim > C7X_MAX_NDIM)
      return set_error(c, C7X_ERR_INVALID, "input %d: ndim %d outside [0, %d]", i, d->ndim, C7X_MAX_NDIM);
    const uint8_t *p = (const uint8_t *)d->data;
    size_t off;
    if (!p) return set_error(c, C7X_ERR_INVALID, "input %d: no data", i);
    if (p >= c->staging && p < c->staging + c->staging_size &&
        d->data_size <= (size_t)(c->staging + c->staging_size - p)) {
      off = (size_t)(p - c->staging); /* zero copy */
      c->stats.inputs_zero_copy++;
    } else {
      if (scratch > c->staging_size || d->data_size > c->staging_size - scratch)
        return set_error(c, C7X_ERR_NOMEM, "input %d: %zu bytes do not fit the staging buffer", i, d->data_size);
      memcpy(c->staging + scratch, p, d->data_size);
      c->stats.inputs_copied++;
      c->stats.bytes_copied += d->data_size;
      off = scratch;
      scratch = align64(scratch + d->data_size);
    }
    c7x_wire_tensor w;
    memset(&w, 0, sizeof w);
    w.data_addr = c->staging_addr + off;
    w.size = d->data_size;
    w.ndim = d->ndim;
    w.dtype_code = d->dtype_code;
    w.dtype_bits = d->dtype_bits;
    for (int k = 0; k < d->ndim; k++) w.shape[k] = d->shape[k];
    wire[i] = w;
  }
  uint8_t body[C7X_MSG_MAX], r[C7X_MSG_MAX];
  size_t n = 0, descs_bytes = (size_t)n_in * sizeof(c7x_wire_tensor);
  int s;
  if (n_in <= C7X_INFER_MAX_INLINE_INPUTS) {
    memcpy(body, &q, sizeof q);
    memcpy(body + sizeof q, wire, descs_bytes);
    s = transact(c, C7X_MSG_INFER, body, sizeof q + descs_bytes, r, sizeof r, &n, NULL);
  } else {
    if (scratch > c->staging_size || descs_bytes > c->staging_size - scratch)
      return set_error(c, C7X_ERR_NOMEM, "INFER: %d input descriptors do not fit the staging buffer", n_in);
    memcpy(c->staging + scratch, wire, descs_bytes);
    c7x_infer_large_req lq;
    memset(&lq, 0, sizeof lq);
    lq.infer = q;
    lq.descs_addr = c->staging_addr + scratch;
    lq.descs_size = (uint32_t)descs_bytes;
    s = transact(c, C7X_MSG_INFER_LARGE, &lq, sizeof lq, r, sizeof r, &n, NULL);
  }
  if (s != C7X_OK) return s;
  c7x_infer_resp h;
  if (n < sizeof h) return set_error(c, C7X_ERR_IO, "INFER response of %zu bytes", n);
  memcpy(&h, r, sizeof h);
  const uint8_t *descs = r + sizeof h;
  if (h.descs_addr) { /* out of band, in the result buffer */
    if (h.descs_addr < c->result_addr || h.descs_addr - c->result_addr > c->result_size ||
        h.descs_size > c->result_size - (h.descs_addr - c->result_addr) ||
        h.descs_size != h.num_outputs * sizeof(c7x_wire_tensor))
      return set_error(c, C7X_ERR_IO, "INFER: output descriptors outside the result buffer");
    descs = c->result + (h.descs_addr - c->result_addr);
  } else if (n != sizeof h + h.num_outputs * sizeof(c7x_wire_tensor)) {
    return set_error(c, C7X_ERR_IO, "INFER response of %zu bytes for %u outputs", n, h.num_outputs);
  }
  if ((int)h.num_outputs > *n_out)
    return set_error(c, C7X_ERR_SIZE, "model has %u outputs, room for %d", h.num_outputs, *n_out);
  for (uint32_t j = 0; j < h.num_outputs; j++) {
    c7x_wire_tensor w;
    memcpy(&w, descs + j * sizeof w, sizeof w);
    if (w.data_addr < c->result_addr || w.data_addr - c->result_addr > c->result_size ||
        w.size > c->result_size - (w.data_addr - c->result_addr))
      return set_error(c, C7X_ERR_IO, "INFER: output %u outside the result buffer", j);
    from_wire(&w, c->result + (w.data_addr - c->result_addr), &outputs[j]);
  }
  *n_out = (int)h.num_outputs;
  if (cycles) *cycles = h.cycles;
  c->stats.infers++;
  return C7X_OK;
}

/* ---- per-layer profile ------------------------------------------------------ */

int c7x_client_profile(c7x_client *c, uint64_t handle, c7x_profile *info, c7x_profile_row *layers,
                       int *n_layers) {
  if (!info || !n_layers || *n_layers < 0 || (*n_layers > 0 && !layers))
    return set_error(c, C7X_ERR_INVALID, "PROFILE: no room given for the answer");
  /* Pages of rows; another client's INFER between two pages would mix two
   * inferences, so a changed total restarts the walk (a few times). */
  for (int attempt = 0; attempt < 4; attempt++) {
    uint32_t first = 0, want_rows = 0;
    int changed = 0;
    c7x_profile_resp head;
    memset(&head, 0, sizeof head);
    do {
      uint8_t r[C7X_MSG_MAX];
      size_t n = 0;
      c7x_profile_resp h;
      int s = request_page(c, C7X_MSG_PROFILE, "PROFILE", handle, first, r, &n, &h, sizeof h);
      if (s != C7X_OK) return s;
      if (first == 0) {
        head = h;
        want_rows = h.num_layers < (uint32_t)*n_layers ? h.num_layers : (uint32_t)*n_layers;
      } else if (h.num_layers != head.num_layers || h.runs != head.runs || h.infer_cycles != head.infer_cycles) {
        changed = 1;
        break;
      }
      uint32_t rows = c7x_page_rows(first, h.num_layers, C7X_PROFILE_MAX_ROWS);
      s = check_page(c, "PROFILE", "layers", n, sizeof h, sizeof(c7x_profile_row), first, rows, h.num_layers);
      if (s != C7X_OK) return s;
      for (uint32_t i = 0; i < rows && first + i < want_rows; i++) {
        memcpy(&layers[first + i], r + sizeof h + i * sizeof(c7x_profile_row), sizeof(c7x_profile_row));
        layers[first + i].name[C7X_PROFILE_NAME_MAX - 1] = '\0';
        layers[first + i].module[C7X_PROFILE_MODULE_MAX - 1] = '\0';
        layers[first + i].output[C7X_PROFILE_OUTPUT_MAX - 1] = '\0';
        layers[first + i].kernel[C7X_PROFILE_KERNEL_MAX - 1] = '\0';
      }
      first += rows;
    } while (first < want_rows);
    if (changed) continue;
    info->num_layers = head.num_layers;
    info->runs = head.runs;
    info->clock_hz = head.clock_hz;
    info->infer_cycles = head.infer_cycles;
    memcpy(info->clock_unit, head.clock_unit, sizeof info->clock_unit);
    info->clock_unit[sizeof info->clock_unit - 1] = '\0';
    *n_layers = (int)want_rows;
    hold(c, handle);
    return C7X_OK;
  }
  return set_error(c, C7X_ERR_BUSY, "PROFILE: handle %llu kept running other inferences while its profile was read",
                   (unsigned long long)handle);
}

size_t c7x_profile_format(const c7x_profile *info, const c7x_profile_row *layers, int n_layers, int csv,
                          char *buf, size_t size) {
  if (n_layers < 0) n_layers = 0;
  tidsp_profile_row *rows = calloc((size_t)(n_layers ? n_layers : 1), sizeof *rows);
  if (!rows) {
    if (size) buf[0] = '\0';
    return 0;
  }
  double ms_per_unit = info->clock_hz ? 1e3 / (double)info->clock_hz : 0.0;
  int cycles = strcmp(info->clock_unit, "cycles") == 0;
  for (int i = 0; i < n_layers; i++) {
    rows[i].name = layers[i].name;
    rows[i].module = layers[i].module;
    rows[i].output = layers[i].output;
    rows[i].kernel = layers[i].kernel;
    rows[i].macs = layers[i].macs;
    rows[i].ms = (double)layers[i].cycles * ms_per_unit;
    rows[i].cycles = cycles ? layers[i].cycles : 0;
  }
  size_t need = csv ? tidsp_profile_format_csv(buf, size, rows, n_layers, cycles)
                    : tidsp_profile_format_table(buf, size, rows, n_layers, (double)info->infer_cycles * ms_per_unit,
                                                 cycles);
  free(rows);
  return need;
}
