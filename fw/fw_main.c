/*
 * c7x_fw — the C7x firmware emulator: a separate process that owns the
 * DSP's memory and serves the compute protocol (c7x_protocol.h) over a
 * Unix-domain SOCK_SEQPACKET socket, one message per packet as on the
 * board's RPMsg channel.
 *
 * Shared memory: one memfd (the shared DDR carve-out): the staging window
 * then the result window. Clients get its file descriptor by SHM_ATTACH
 * (SCM_RIGHTS) and map it; nothing is named in /dev/shm, and it goes away
 * with the firmware and its last client.
 *
 * Connections are served one at a time, in order; modules and their
 * handles belong to the firmware and outlive the connection that loaded
 * them.
 */
#define _GNU_SOURCE

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "exports.h"
#include "fw.h"

#define FW_DEFAULT_SOCKET "/tmp/c7x_fw.sock"

static volatile sig_atomic_t stop;

static void on_signal(int sig) {
  (void)sig;
  stop = 1;
}

static const char usage[] =
    "usage: c7x_fw [--socket PATH] [--ddr-heap-mib N] [--l2-kib N]\n"
    "              [--staging-mib N] [--result-mib N] [--list-exports]\n"
    "\n"
    "The C7x firmware emulator: loads DLOAD modules ('cstatic compile\n"
    "--emit=module') and runs them for c7x_compute / libc7x_arm_runtime.\n"
    "\n"
    "  --socket PATH      where to listen (default $C7X_FW_SOCKET, else " FW_DEFAULT_SOCKET ")\n"
    "  --ddr-heap-mib N   the DDR heap for modules and arenas (default 352)\n"
    "  --l2-kib N         the L2 SRAM pool (default 448)\n"
    "  --staging-mib N    the staging window of the shared region (default 468, at most 480)\n"
    "  --result-mib N     the result window (default 32)\n"
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

static void serve(fw_state *st, int c) {
  uint8_t req[C7X_MSG_MAX + 1], resp[C7X_MSG_MAX];
  while (!stop) {
    struct iovec iov = {req, sizeof req};
    struct msghdr mh;
    memset(&mh, 0, sizeof mh);
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    ssize_t n = recvmsg(c, &mh, MSG_CMSG_CLOEXEC);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return; /* the client went away */
    /* A truncated packet was longer than the buffer: report it as such. */
    size_t len = (mh.msg_flags & MSG_TRUNC) ? sizeof req : (size_t)n;
    int fd = -1;
    size_t out = fw_handle_message(st, req, len, resp, &fd);
    if (send_reply(c, resp, out, fd) != 0) return;
  }
}

int main(int argc, char **argv) {
  const char *sock_path = getenv("C7X_FW_SOCKET");
  if (!sock_path || !*sock_path) sock_path = FW_DEFAULT_SOCKET;
  unsigned long ddr_mib = 352, l2_kib = 448, staging_mib = C7X_STAGING_SIZE_DEFAULT >> 20,
                result_mib = C7X_RESULT_SIZE_DEFAULT >> 20;
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
  void *ddr = map_anon(ddr_size, "DDR heap"), *l2 = map_anon(l2_size, "L2 SRAM");
  if (!ddr || !l2) return 1;
  int shm_fd = memfd_create("c7x_shared_ddr", MFD_CLOEXEC);
  if (shm_fd < 0 || ftruncate(shm_fd, (off_t)(staging + result)) != 0) {
    fprintf(stderr, "c7x_fw: error: cannot create the %zu-byte shared region: %s\n", staging + result,
            strerror(errno));
    return 1;
  }
  void *shared = mmap(NULL, staging + result, PROT_READ | PROT_WRITE, MAP_SHARED, shm_fd, 0);
  if (shared == MAP_FAILED) {
    fprintf(stderr, "c7x_fw: error: cannot map the shared region: %s\n", strerror(errno));
    return 1;
  }
  static fw_state st;
  fw_state_init(&st, ddr, ddr_size, l2, l2_size, shared, staging, result, shm_fd);

  int ls = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  snprintf(addr.sun_path, sizeof addr.sun_path, "%s", sock_path);
  unlink(sock_path); /* a stale socket of a firmware that is gone */
  if (ls < 0 || bind(ls, (struct sockaddr *)&addr, sizeof addr) != 0 || listen(ls, 8) != 0) {
    fprintf(stderr, "c7x_fw: error: cannot listen on %s: %s\n", sock_path, strerror(errno));
    return 1;
  }
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  signal(SIGPIPE, SIG_IGN);
  fprintf(stderr, "c7x_fw: %s; DDR heap %lu MiB, L2 %lu KiB, staging %lu MiB, result %lu MiB; listening on %s\n",
          fw_build_options(), ddr_mib, l2_kib, staging_mib, result_mib, sock_path);
  fflush(stderr);

  while (!stop) {
    int c = accept4(ls, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR) continue;
      fprintf(stderr, "c7x_fw: error: accept: %s\n", strerror(errno));
      break;
    }
    serve(&st, c);
    close(c);
  }
  close(ls);
  unlink(sock_path);
  fw_state_shutdown(&st);
  return 0;
}
