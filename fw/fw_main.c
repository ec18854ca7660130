/*
 * c7x_fw — the C7x firmware emulator: a separate process that owns the
 * DSP's memory and serves the compute protocol (c7x_protocol.h) over a
 * Unix-domain SOCK_SEQPACKET socket, one message per packet as on the
 * board's RPMsg channel.
 *
 * Supervision (remoteproc recovery): c7x_fw binds the socket, then runs
 * the firmware proper in a child process. A module that crashes or runs
 * past --timeout-ms kills only that child, as a fault stops the DSP; the
 * parent names what happened (signal, the handle and model that were
 * running: the child notes them in a page both share) and starts a fresh
 * child on the same listening socket. Handles die with the child, as they
 * do on the board. --no-supervise runs the firmware in one process.
 *
 * Connections: one thread each, at most FW_MAX_CONNS (one more hears
 * C7X_MSG_REFUSED and why); requests are served one at a time (the DSP
 * runs one thing at a time) under one lock; RESET is decided beside it.
 * Each connection has its own shared region (one memfd: staging window
 * then result window, handed over by SHM_ATTACH with SCM_RIGHTS), so two
 * clients' inputs and outputs never mix. Modules and their handles belong to the firmware and outlive
 * the connection that loaded them (the image is copied at load); a handle
 * is a capability: whoever presents it may use the module.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "exports.h"
#include "fw.h"

#define FW_DEFAULT_SOCKET "/tmp/c7x_fw.sock"

static const char usage[] =
    "usage: c7x_fw [--socket PATH] [--ddr-heap-mib N] [--l2-kib N]\n"
    "              [--staging-mib N] [--result-mib N] [--timeout-ms N]\n"
    "              [--no-supervise] [--list-exports]\n"
    "\n"
    "The C7x firmware emulator: loads DLOAD modules ('cstatic compile\n"
    "--emit=module') and runs them for c7x_compute / libc7x_arm_runtime.\n"
    "\n"
    "  --socket PATH      where to listen (default $C7X_FW_SOCKET, else " FW_DEFAULT_SOCKET ")\n"
    "  --ddr-heap-mib N   the DDR heap for modules and arenas (default 352)\n"
    "  --l2-kib N         the L2 SRAM pool (default 448)\n"
    "  --staging-mib N    the staging window of the shared region (default 468, at most 480)\n"
    "  --result-mib N     the result window (default 32)\n"
    "  --timeout-ms N     an INFER running longer is a fault: the firmware is\n"
    "                     killed and restarted (default 0: no limit)\n"
    "  --no-supervise     run the firmware in this process: a crashing module\n"
    "                     ends it for good\n"
    "  --list-exports     print the export table and exit\n";

static int parse_size(const char *opt, const char *v, unsigned long max, unsigned long *out) {
  char *end;
  errno = 0;
  unsigned long x = v ? strtoul(v, &end, 10) : 0;
  if (!v || errno || *end || x == 0 || x > max) {
    fprintf(stderr, "c7x_fw: error: %s needs a number in [1, %lu]\n", opt, max);
    return -1;
  }
  *out = x;
  return 0;
}

static void *map_anon(size_t size, const char *what) {
  void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    fprintf(stderr, "c7x_fw: error: cannot reserve the %zu-byte %s: %s\n", size, what, strerror(errno));
    return NULL;
  }
  return p;
}

/* Another firmware already answering on path? */
static int in_use(const char *path) {
  int s = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  if (s < 0) return 0;
  struct sockaddr_un a;
  memset(&a, 0, sizeof a);
  a.sun_family = AF_UNIX;
  snprintf(a.sun_path, sizeof a.sun_path, "%s", path);
  int r = connect(s, (struct sockaddr *)&a, sizeof a) == 0;
  close(s);
  return r;
}

static int send_reply(int c, const uint8_t *buf, size_t n, int fd) {
  struct iovec iov = {(void *)buf, n};
  struct msghdr mh;
  union {
    struct cmsghdr align;
    char buf[CMSG_SPACE(sizeof(int))];
  } ctl;
  memset(&mh, 0, sizeof mh);
  mh.msg_iov = &iov;
  mh.msg_iovlen = 1;
  if (fd >= 0) {
    memset(&ctl, 0, sizeof ctl);
    mh.msg_control = ctl.buf;
    mh.msg_controllen = sizeof ctl.buf;
    struct cmsghdr *cm = CMSG_FIRSTHDR(&mh);
    cm->cmsg_level = SOL_SOCKET;
    cm->cmsg_type = SCM_RIGHTS;
    cm->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(cm), &fd, sizeof fd);
  }
  return sendmsg(c, &mh, MSG_NOSIGNAL) == (ssize_t)n ? 0 : -1;
}

/* ---- the firmware (the supervised child) ---------------------------------- */

typedef struct fw_conn {
  int sock, fd;
  uint8_t *shared;
} fw_conn;

static fw_state st;
static pthread_mutex_t serve_lock = PTHREAD_MUTEX_INITIALIZER;
static size_t conn_region; /* staging + result bytes */
static volatile int n_conns;
enum { FW_MAX_CONNS = 32 };

static void *serve(void *arg) {
  fw_conn *cn = arg;
  uint8_t req[C7X_MSG_MAX + 1], resp[C7X_MSG_MAX];
  for (;;) {
    struct iovec iov = {req, sizeof req};
    struct msghdr mh;
    memset(&mh, 0, sizeof mh);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    ssize_t n = recvmsg(cn->sock, &mh, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break; /* the client went away */
    /* RESET is the host's recovery and must work while a runaway module
     * holds the lock: decided without it (fw_handle_reset takes only the
     * module table's lock); granted, the firmware dies now and the
     * supervisor restarts it; refused, the sender hears why at once. */
    c7x_msg_header rh;
    if ((size_t)n >= sizeof rh && (memcpy(&rh, req, sizeof rh), rh.type == C7X_MSG_RESET) &&
        !(mh.msg_flags & MSG_TRUNC)) {
      size_t out = 0;
      if (fw_handle_reset(&st, req, (size_t)n, resp, &out)) {
        if (st.run) st.run->reset_requested = 1;
        kill(getpid(), SIGKILL);
      }
      if (send_reply(cn->sock, resp, out, -1) != 0) break;
      continue;
    }
    /* A truncated packet was longer than the buffer: report it as such. */
    size_t len = (mh.msg_flags & MSG_TRUNC) ? sizeof req : (size_t)n;
    int fd = -1;
    pthread_mutex_lock(&serve_lock);
    st.shared = cn->shared; /* this connection's windows */
    st.shared_fd = cn->fd;
    size_t out = fw_handle_message(&st, req, len, resp, &fd);
    st.shared = NULL;
    st.shared_fd = -1;
    pthread_mutex_unlock(&serve_lock);
    if (send_reply(cn->sock, resp, out, fd) != 0) break;
  }
  close(cn->sock);
  munmap(cn->shared, conn_region);
  close(cn->fd);
  free(cn);
  __atomic_sub_fetch(&n_conns, 1, __ATOMIC_SEQ_CST);
  return NULL;
}

/* A connection the firmware does not serve hears why (C7X_MSG_REFUSED,
 * c7x_protocol.h) before it is closed; why NULL: the connection limit. */
static void refuse(int c, const char *why) {
  uint8_t msg[C7X_MSG_MAX];
  char text[256];
  if (why) snprintf(text, sizeof text, "the firmware refused the connection: %s", why);
  else
    snprintf(text, sizeof text, "the firmware refused the connection: it serves at most %d clients at once and %d "
             "are connected (close one and retry)", FW_MAX_CONNS, __atomic_load_n(&n_conns, __ATOMIC_SEQ_CST));
  fprintf(stderr, "c7x_fw: %s\n", text);
  c7x_msg_header h = {C7X_MSG_REFUSED | C7X_MSG_RESPONSE, 0, 0, C7X_ERR_BUSY};
  size_t len = sizeof h + strlen(text) + 1;
  h.len = (uint32_t)len;
  memcpy(msg, &h, sizeof h);
  memcpy(msg + sizeof h, text, len - sizeof h);
  /* a fresh connection's buffer is empty: never blocks the accept loop */
  send(c, msg, len, MSG_NOSIGNAL | MSG_DONTWAIT);
  close(c);
}

/* A connection's shared region: a sparse memfd, pages appear when used. */
static fw_conn *new_conn(int sock) {
  fw_conn *cn = calloc(1, sizeof *cn);
  if (!cn) return NULL;
  cn->sock = sock;
  cn->fd = memfd_create("c7x_shared_ddr", MFD_CLOEXEC);
  if (cn->fd < 0 || ftruncate(cn->fd, (off_t)conn_region) != 0) {
    fprintf(stderr, "c7x_fw: error: cannot create a %zu-byte shared region: %s\n", conn_region, strerror(errno));
    if (cn->fd >= 0) close(cn->fd);
    free(cn);
    return NULL;
  }
  void *p = mmap(NULL, conn_region, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_NORESERVE, cn->fd, 0);
  if (p == MAP_FAILED) {
    fprintf(stderr, "c7x_fw: error: cannot map a shared region: %s\n", strerror(errno));
    close(cn->fd);
    free(cn);
    return NULL;
  }
  cn->shared = p;
  return cn;
}

static int run_firmware(int ls, size_t ddr_size, size_t l2_size, size_t staging, size_t result,
                        fw_run_state *run) {
  void *ddr = map_anon(ddr_size, "DDR heap"), *l2 = map_anon(l2_size, "L2 SRAM");
  if (!ddr || !l2) return 1;
  conn_region = staging + result;
  fw_state_init(&st, ddr, ddr_size, l2, l2_size, NULL, staging, result, -1);
  st.run = run;
  signal(SIGPIPE, SIG_IGN);
  for (;;) {
    int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      fprintf(stderr, "c7x_fw: error: accept: %s\n", strerror(errno));
      return 1;
    }
    /* Threads change the count as they end: read it atomically too (a
     * plain read races with them; ThreadSanitizer, make sanitize-slow). */
    int open_now = __atomic_load_n(&n_conns, __ATOMIC_SEQ_CST);
    fw_conn *cn = open_now < FW_MAX_CONNS ? new_conn(c) : NULL;
    pthread_t t;
    pthread_attr_t at;
    pthread_attr_init(&at);
    pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
    if (cn) __atomic_add_fetch(&n_conns, 1, __ATOMIC_SEQ_CST);
    if (!cn || pthread_create(&t, &at, serve, cn) != 0) {
      refuse(c, cn ? "cannot start a thread for it" : open_now >= FW_MAX_CONNS ? NULL : "cannot map a shared region for it");
      if (cn) {
        munmap(cn->shared, conn_region);
        close(cn->fd);
        free(cn);
        __atomic_sub_fetch(&n_conns, 1, __ATOMIC_SEQ_CST);
      }
    }
    pthread_attr_destroy(&at);
  }
}

/* ---- the supervisor ----------------------------------------------------- */

static void describe_death(fw_run_state *run, int wstatus, unsigned timeout_ms) {
  uint64_t h = run->running_handle;
  char where[160] = "";
  if (h)
    snprintf(where, sizeof where, " while running handle %llu (model '%.64s')", (unsigned long long)h,
             run->running_model);
  if (run->reset_requested) {
    run->last_kind = C7X_FAULT_RESET;
    snprintf(run->last_fault, sizeof run->last_fault, "firmware reset by a client%s", where);
  } else if (WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGALRM && timeout_ms) {
    run->last_kind = C7X_FAULT_TIMEOUT;
    snprintf(run->last_fault, sizeof run->last_fault,
             "request timed out after %.3f s (c7x_fw --timeout-ms %u)%s; the firmware was restarted",
             timeout_ms / 1000.0, timeout_ms, where);
  } else if (WIFSIGNALED(wstatus)) {
    int sig = WTERMSIG(wstatus);
    run->last_kind = C7X_FAULT_CRASH;
    snprintf(run->last_fault, sizeof run->last_fault, "firmware fault%s: killed by SIG%s (%s); the firmware was restarted",
             where, sigabbrev_np(sig) ? sigabbrev_np(sig) : "?", strsignal(sig));
  } else {
    run->last_kind = C7X_FAULT_EXIT;
    snprintf(run->last_fault, sizeof run->last_fault, "firmware exited with status %d%s; it was restarted",
             WEXITSTATUS(wstatus), where);
  }
  run->last_handle = h;
  run->running_handle = 0;
  run->reset_requested = 0;
  run->restarts++;
}

static double now_s(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  const char *sock_path = getenv("C7X_FW_SOCKET");
  if (!sock_path || !*sock_path) sock_path = FW_DEFAULT_SOCKET;
  unsigned long ddr_mib = 352, l2_kib = 448, staging_mib = C7X_STAGING_SIZE_DEFAULT >> 20,
                result_mib = C7X_RESULT_SIZE_DEFAULT >> 20, timeout_ms = 0;
  int supervise = 1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      fputs(usage, stdout);
      return 0;
    } else if (!strcmp(a, "--list-exports")) {
      size_t n;
      const fw_export *e = fw_exports(&n);
      printf("# c7x_fw %s: %zu exports\n", fw_build_options(), n);
      for (size_t k = 0; k < n; k++) printf("%s %s\n", e[k].group, e[k].name);
      return 0;
    } else if (!strcmp(a, "--socket")) {
      if (!v) {
        fprintf(stderr, "c7x_fw: error: --socket needs a path\n");
        return 2;
      }
      sock_path = v;
      i++;
    } else if (!strcmp(a, "--ddr-heap-mib")) {
      if (parse_size(a, v, 1u << 16, &ddr_mib)) return 2;
      i++;
    } else if (!strcmp(a, "--l2-kib")) {
      if (parse_size(a, v, 1u << 16, &l2_kib)) return 2;
      i++;
    } else if (!strcmp(a, "--staging-mib")) {
      /* The staging window must end before the result window's address. */
      if (parse_size(a, v, (unsigned long)((C7X_RESULT_ADDR - C7X_STAGING_ADDR) >> 20), &staging_mib)) return 2;
      i++;
    } else if (!strcmp(a, "--result-mib")) {
      if (parse_size(a, v, 512, &result_mib)) return 2;
      i++;
    } else if (!strcmp(a, "--timeout-ms")) {
      if (parse_size(a, v, 86400000ul, &timeout_ms)) return 2;
      i++;
    } else if (!strcmp(a, "--no-supervise")) {
      supervise = 0;
    } else {
      fprintf(stderr, "c7x_fw: error: unknown argument %s (try --help)\n", a);
      return 2;
    }
  }
  struct sockaddr_un addr;
  if (strlen(sock_path) >= sizeof addr.sun_path) {
    fprintf(stderr, "c7x_fw: error: socket path %s is longer than %zu bytes\n", sock_path,
            sizeof addr.sun_path - 1);
    return 1;
  }
  if (in_use(sock_path)) {
    fprintf(stderr, "c7x_fw: error: a firmware already serves %s\n", sock_path);
    return 1;
  }
  size_t ddr_size = (size_t)ddr_mib << 20, l2_size = (size_t)l2_kib << 10;
  size_t staging = (size_t)staging_mib << 20, result = (size_t)result_mib << 20;

  int ls = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock_path);
  unlink(sock_path); /* a stale socket of a firmware that is gone */
  if (ls < 0 || bind(ls, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(ls, 16) != 0) {
    fprintf(stderr, "c7x_fw: error: cannot listen on %s: %s\n", sock_path, strerror(errno));
    return 1;
  }
  /* Shared with every firmware child: what ran when one died. */
  fw_run_state *run = mmap(NULL, sizeof *run, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (run == MAP_FAILED) {
    fprintf(stderr, "c7x_fw: error: cannot map the fault page: %s\n", strerror(errno));
    return 1;
  }
  memset(run, 0, sizeof *run);
  run->timeout_ms = (uint32_t)timeout_ms;
  fprintf(stderr, "c7x_fw: %s; DDR heap %lu MiB, L2 %lu KiB, staging %lu MiB, result %lu MiB per client; "
          "timeout %lu ms; %s; listening on %s\n", fw_build_options(), ddr_mib, l2_kib, staging_mib,
          result_mib, timeout_ms, supervise ? "supervised" : "unsupervised", sock_path);
  fflush(stderr);
  if (!supervise) {
    int rc = run_firmware(ls, ddr_size, l2_size, staging, result, run);
    unlink(sock_path);
    return rc;
  }

  /* The supervisor waits for signals only: its firmware's death
   * (SIGCHLD) or its own end (SIGTERM, SIGINT). Blocked and taken with
   * sigtimedwait, none can slip in between a check and a wait. */
  sigset_t wait_set, old_set;
  sigemptyset(&wait_set);
  sigaddset(&wait_set, SIGCHLD);
  sigaddset(&wait_set, SIGTERM);
  sigaddset(&wait_set, SIGINT);
  sigprocmask(SIG_BLOCK, &wait_set, &old_set);
  signal(SIGPIPE, SIG_IGN);
  pid_t parent = getpid();
  double last_start = -1.0;
  int quit = 0;
  while (!quit) {
    /* A firmware that dies at once: do not spin, but still hear SIGTERM. */
    double since = now_s() - last_start;
    if (since < 0.2) {
      struct timespec pause = {0, (long)((0.2 - since) * 1e9)};
      int sig = sigtimedwait(&wait_set, NULL, &pause);
      if (sig == SIGTERM || sig == SIGINT) break;
    }
    last_start = now_s();
    pid_t child = fork();
    if (child < 0) {
      fprintf(stderr, "c7x_fw: error: cannot start the firmware: %s\n", strerror(errno));
      break;
    }
    if (child == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL); /* never outlive the supervisor */
      if (getppid() != parent) _exit(1);
      sigprocmask(SIG_SETMASK, &old_set, NULL);
      _exit(run_firmware(ls, ddr_size, l2_size, staging, result, run));
    }
    int ws = 0;
    for (;;) {
      int sig = sigwaitinfo(&wait_set, NULL);
      if (sig == SIGTERM || sig == SIGINT) {
        kill(child, SIGKILL);
        waitpid(child, &ws, 0);
        quit = 1;
        break;
      }
      if (sig == SIGCHLD && waitpid(child, &ws, WNOHANG) == child) {
        describe_death(run, ws, (unsigned)timeout_ms);
        fprintf(stderr, "c7x_fw: %s (restart %u)\n", run->last_fault, run->restarts);
        fflush(stderr);
        break;
      }
    }
  }
  close(ls);
  unlink(sock_path);
  return 0;
}
