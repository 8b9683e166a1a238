/*
 * baton-holder: keeps one sandbox alive independently of the engine process.
 *
 *   baton-holder SOCKET PROGRAM [ARG...]
 *   baton-holder --pty SOCKET COLS ROWS PROGRAM [ARG...]
 *
 * Forks and executes PROGRAM (the sandbox's bwrap launch, absolute path) with every descriptor it
 * was given, so bwrap's --info-fd/--block-fd/data pipes reach bwrap untouched; then keeps only a
 * listening unix socket at SOCKET and waits. bwrap runs with --die-with-parent, whose parent is
 * now this process rather than the engine: the sandbox lives exactly as long as its holder.
 *
 * Protocol (lines over the socket, which is mode 0600 in a root-only directory):
 *   holder -> client on connect:  "hello <holder pid> <child pid>\n"
 *   client -> holder:             "kill\n"  (SIGKILL to the child; the exit line follows)
 *   holder -> every client:       "exit <code>\n" or "signal <number>\n" when the child ends;
 *                                 the same line is written to SOCKET.exit, then the holder exits.
 * A client that loses the connection without an exit line knows the holder itself died.
 *
 * With --pty it holds one terminal session instead (like dtach or abduco): PROGRAM runs as the
 * session leader on a new pseudo-terminal whose master this process keeps, with the last
 * SCROLLBACK bytes of output in a ring, so a terminal survives the engine with its history.
 * Binary frames both ways, [type:1][length:4, big-endian][payload]:
 *   holder -> client: 'H' "hello <pid> <child pid>" on connect, then 'O' the scrollback, then 'O'
 *                     output as it comes, and 'X' "exit <code>" / "signal <n>" at the end;
 *   client -> holder: 'I' input, 'R' cols and rows (2 bytes each, big-endian), 'P' stop reading
 *                     the terminal (flow control: the program then blocks on write), 'C' read again,
 *                     'Q' send this connection no output (an input-only connection).
 * Input waits in a bounded queue until the terminal takes it (the master is non-blocking, so the
 * holder keeps reading output and serving clients while a program does not read its input). A
 * client whose next input frame does not fit is not read until the queue drains: the client's
 * socket fills and its writes block, which is how the engine learns to stop sending. Flow control
 * ('P'/'C') should therefore come on another connection than bulk input, or it waits behind it.
 *
 * Why C and not a Node process: a holder per sandbox must cost next to nothing while it waits
 * (a static binary like this one holds well under 1 MiB of RSS; Node needs ~40 MiB), and it must
 * be a host file that no sandbox can write (it is built by the engine into a root-only cache).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <sys/ioctl.h>
#include <termios.h>
#include <unistd.h>

#define MAX_CLIENTS 16

static int sigpipe_fds[2] = {-1, -1};

static void on_sigchld(int sig) {
  (void)sig;
  int saved = errno;
  if (write(sigpipe_fds[1], "c", 1) < 0) { /* the pipe is full: a wakeup is already pending */ }
  errno = saved;
}

static void write_all(int fd, const char *s, size_t n) {
  while (n > 0) {
    ssize_t w = write(fd, s, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return;
    }
    s += w;
    n -= (size_t)w;
  }
}

static int pty_main(int argc, char **argv);

/*
 * A SOCKET of "-" is named by BATON_HOLDER_SOCKET instead: a process's arguments are readable by
 * every local user, its environment by its owner only, and the socket's name is the sandbox's (or
 * terminal's) id. The variable is gone before anything else runs.
 */
static const char *socket_path(const char *arg) {
  if (strcmp(arg, "-") != 0) return arg;
  const char *env = getenv("BATON_HOLDER_SOCKET");
  if (!env || env[0] != '/') {
    fprintf(stderr, "baton-holder: BATON_HOLDER_SOCKET is not an absolute path\n");
    exit(2);
  }
  char *copy = strdup(env);
  if (!copy) exit(1);
  unsetenv("BATON_HOLDER_SOCKET");
  return copy;
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "--pty") == 0) return pty_main(argc - 1, argv + 1);
  if (argc < 3 || argv[2][0] != '/') {
    fprintf(stderr, "usage: baton-holder SOCKET|- /ABSOLUTE/PROGRAM [ARG...]\n");
    return 2;
  }
  const char *sock_path = socket_path(argv[1]);
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  if (strlen(sock_path) >= sizeof addr.sun_path) {
    fprintf(stderr, "baton-holder: socket path too long\n");
    return 2;
  }
  strcpy(addr.sun_path, sock_path);

  if (pipe2(sigpipe_fds, O_CLOEXEC | O_NONBLOCK) < 0) return perror("pipe2"), 1;
  int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) return perror("socket"), 1;
  unlink(sock_path);
  mode_t old = umask(0177);
  if (bind(listener, (struct sockaddr *)&addr, sizeof addr) < 0) return perror("bind"), 1;
  umask(old);
  if (listen(listener, 8) < 0) return perror("listen"), 1;

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigchld;
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigaction(SIGCHLD, &sa, NULL);

  pid_t child = fork();
  if (child < 0) return perror("fork"), 1;
  if (child == 0) {
    /* The program gets the descriptors and a clean signal state, as if the engine had run it. */
    signal(SIGCHLD, SIG_DFL);
    execv(argv[2], argv + 2);
    fprintf(stderr, "baton-holder: exec %s: %s\n", argv[2], strerror(errno));
    _exit(127);
  }

  /* Ours to keep: the listener and the wakeup pipe. The engine's pipes belong to bwrap now. */
  signal(SIGPIPE, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  signal(SIGINT, SIG_IGN);
  int devnull = open("/dev/null", O_RDWR);
  if (devnull >= 0) {
    dup2(devnull, 0);
    dup2(devnull, 1);
    dup2(devnull, 2);
  }
  for (int fd = 3; fd < 1024; fd++)
    if (fd != listener && fd != sigpipe_fds[0] && fd != sigpipe_fds[1]) close(fd);

  int clients[MAX_CLIENTS];
  /* Each client's current line (commands are lines, and a line may come in several reads). */
  char line_buf[MAX_CLIENTS][16];
  size_t line_len[MAX_CLIENTS];
  int line_long[MAX_CLIENTS];
  for (int i = 0; i < MAX_CLIENTS; i++) clients[i] = -1;
  char hello[64];
  int hello_len = snprintf(hello, sizeof hello, "hello %d %d\n", (int)getpid(), (int)child);

  for (;;) {
    int status;
    pid_t r = waitpid(child, &status, WNOHANG);
    if (r == child) {
      char line[64];
      int n = WIFSIGNALED(status) ? snprintf(line, sizeof line, "signal %d\n", WTERMSIG(status))
                                  : snprintf(line, sizeof line, "exit %d\n", WEXITSTATUS(status));
      char exit_path[sizeof addr.sun_path + 8];
      snprintf(exit_path, sizeof exit_path, "%s.exit", sock_path);
      int ef = open(exit_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (ef >= 0) {
        write_all(ef, line, (size_t)n);
        close(ef);
      }
      unlink(sock_path);
      for (int i = 0; i < MAX_CLIENTS; i++)
        if (clients[i] >= 0) write_all(clients[i], line, (size_t)n);
      return 0;
    }
    struct pollfd pfd[MAX_CLIENTS + 2];
    int idx[MAX_CLIENTS + 2];
    int np = 0;
    pfd[np] = (struct pollfd){.fd = sigpipe_fds[0], .events = POLLIN};
    idx[np++] = -1;
    pfd[np] = (struct pollfd){.fd = listener, .events = POLLIN};
    idx[np++] = -2;
    for (int i = 0; i < MAX_CLIENTS; i++)
      if (clients[i] >= 0) {
        pfd[np] = (struct pollfd){.fd = clients[i], .events = POLLIN};
        idx[np++] = i;
      }
    if (poll(pfd, (nfds_t)np, -1) < 0 && errno != EINTR) return 1;
    if (pfd[0].revents) {
      char buf[64];
      while (read(sigpipe_fds[0], buf, sizeof buf) > 0) {
      }
    }
    if (pfd[1].revents & POLLIN) {
      int c = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
      if (c >= 0) {
        int slot = -1;
        for (int i = 0; i < MAX_CLIENTS; i++)
          if (clients[i] < 0) {
            slot = i;
            break;
          }
        if (slot < 0) close(c);
        else {
          clients[slot] = c;
          line_len[slot] = 0;
          line_long[slot] = 0;
          write_all(c, hello, (size_t)hello_len);
        }
      }
    }
    for (int k = 2; k < np; k++) {
      if (!pfd[k].revents) continue;
      int i = idx[k];
      char buf[256];
      ssize_t n = read(clients[i], buf, sizeof buf);
      if (n > 0) {
        for (ssize_t j = 0; j < n; j++) {
          if (buf[j] == '\n') {
            if (!line_long[i] && line_len[i] == 4 && memcmp(line_buf[i], "kill", 4) == 0) kill(child, SIGKILL);
            line_len[i] = 0;
            line_long[i] = 0;
          } else if (line_len[i] < sizeof line_buf[i])
            line_buf[i][line_len[i]++] = buf[j];
          else
            line_long[i] = 1; /* not a command we know: ignored up to its newline */
        }
        continue;
      }
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      close(clients[i]);
      clients[i] = -1;
    }
  }
}

/* ---- --pty: one terminal session ---------------------------------------------------------- */

#define SCROLLBACK (64 * 1024)
static char ring[SCROLLBACK];
static size_t ring_start = 0, ring_len = 0;

static void ring_push(const char *p, size_t n) {
  for (size_t i = 0; i < n; i++) {
    size_t at = (ring_start + ring_len) % SCROLLBACK;
    ring[at] = p[i];
    if (ring_len < SCROLLBACK) ring_len++;
    else ring_start = (ring_start + 1) % SCROLLBACK;
  }
}

static int send_frame(int fd, char type, const char *p, size_t n) {
  unsigned char h[5] = {(unsigned char)type, (unsigned char)(n >> 24), (unsigned char)(n >> 16),
                        (unsigned char)(n >> 8), (unsigned char)n};
  size_t total = 5 + n, done = 0;
  while (done < total) {
    ssize_t w;
    if (done < 5) {
      struct iovec v[2] = {{h + done, 5 - done}, {(void *)p, n}};
      w = writev(fd, v, 2);
    } else
      w = write(fd, p + (done - 5), total - done);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    done += (size_t)w;
  }
  return 0;
}

/* Input on its way to the terminal: what the master did not take yet. */
#define INPUT_QUEUE (64 * 1024)
static unsigned char inq[INPUT_QUEUE];
static size_t inq_start = 0, inq_len = 0;

struct client {
  int fd;
  int quiet;   /* sent 'Q': gets no output frames */
  int blocked; /* its next frame is input that does not fit in the queue: not read until it does */
  unsigned char buf[8192];
  size_t len;
};

/* Appends input to the queue; the caller checked that it fits. */
static void inq_push(const unsigned char *p, size_t n) {
  if (inq_start + inq_len + n > INPUT_QUEUE) {
    memmove(inq, inq + inq_start, inq_len);
    inq_start = 0;
  }
  memcpy(inq + inq_start + inq_len, p, n);
  inq_len += n;
}

/*
 * Handles the complete frames in a client's buffer, in order, and stops at input that does not fit
 * in the queue (cl->blocked). Returns -1 for a protocol error (a frame larger than the buffer).
 */
static int client_frames(struct client *cl, int master, int master_eof, int *reading) {
  size_t at = 0;
  int rc = 0;
  cl->blocked = 0;
  while (cl->len - at >= 5) {
    const unsigned char *h = cl->buf + at, *p = h + 5;
    size_t flen = ((size_t)h[1] << 24) | ((size_t)h[2] << 16) | ((size_t)h[3] << 8) | h[4];
    if (flen > sizeof cl->buf - 5) {
      rc = -1;
      break;
    }
    if (cl->len - at < 5 + flen) break;
    if (h[0] == 'I') {
      /* After EIO nothing reads the terminal any more: input is dropped rather than queued. */
      if (!master_eof) {
        if (flen > INPUT_QUEUE - inq_len) {
          cl->blocked = 1;
          break;
        }
        inq_push(p, flen);
      }
    } else if (h[0] == 'R') {
      if (flen == 4) {
        struct winsize w = {.ws_col = (unsigned short)((p[0] << 8) | p[1]),
                            .ws_row = (unsigned short)((p[2] << 8) | p[3])};
        ioctl(master, TIOCSWINSZ, &w);
      }
    } else if (h[0] == 'P')
      *reading = 0;
    else if (h[0] == 'C')
      *reading = 1;
    else if (h[0] == 'Q')
      cl->quiet = 1;
    at += 5 + flen;
  }
  memmove(cl->buf, cl->buf + at, cl->len - at);
  cl->len -= at;
  return rc;
}

static void drop_client(struct client *cl) {
  close(cl->fd);
  cl->fd = -1;
}

/* Output to every client that wants it (and to the scrollback). */
static void output(struct client *clients, const char *p, size_t n) {
  ring_push(p, n);
  for (int i = 0; i < MAX_CLIENTS; i++)
    if (clients[i].fd >= 0 && !clients[i].quiet && send_frame(clients[i].fd, 'O', p, n) < 0) drop_client(&clients[i]);
}

static int pty_main(int argc, char **argv) {
  /* argv: --pty SOCKET COLS ROWS PROGRAM ARGS... */
  if (argc < 5 || argv[4][0] != '/') {
    fprintf(stderr, "usage: baton-holder --pty SOCKET|- COLS ROWS /ABSOLUTE/PROGRAM [ARG...]\n");
    return 2;
  }
  const char *sock_path = socket_path(argv[1]);
  struct winsize ws = {.ws_col = (unsigned short)atoi(argv[2]), .ws_row = (unsigned short)atoi(argv[3])};
  struct sockaddr_un addr;
  memset(&addr, 0, sizeof addr);
  addr.sun_family = AF_UNIX;
  if (strlen(sock_path) >= sizeof addr.sun_path) return 2;
  strcpy(addr.sun_path, sock_path);

  /* Non-blocking: a program that does not read its input must never stop this loop (see inq). */
  int master = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
  if (master < 0 || grantpt(master) < 0 || unlockpt(master) < 0) return perror("posix_openpt"), 1;
  char *slave_name = ptsname(master);
  if (!slave_name) return perror("ptsname"), 1;
  ioctl(master, TIOCSWINSZ, &ws);

  if (pipe2(sigpipe_fds, O_CLOEXEC | O_NONBLOCK) < 0) return perror("pipe2"), 1;
  int listener = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (listener < 0) return perror("socket"), 1;
  unlink(sock_path);
  mode_t old = umask(0177);
  if (bind(listener, (struct sockaddr *)&addr, sizeof addr) < 0) return perror("bind"), 1;
  umask(old);
  if (listen(listener, 8) < 0) return perror("listen"), 1;

  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_sigchld;
  sa.sa_flags = SA_RESTART | SA_NOCLDSTOP;
  sigaction(SIGCHLD, &sa, NULL);

  pid_t child = fork();
  if (child < 0) return perror("fork"), 1;
  if (child == 0) {
    signal(SIGCHLD, SIG_DFL);
    setsid();
    int slave = open(slave_name, O_RDWR);
    if (slave < 0) _exit(126);
    ioctl(slave, TIOCSCTTY, 0);
    dup2(slave, 0);
    dup2(slave, 1);
    dup2(slave, 2);
    for (int fd = 3; fd < 1024; fd++) close(fd);
    execv(argv[4], argv + 4);
    _exit(127);
  }

  signal(SIGPIPE, SIG_IGN);
  signal(SIGHUP, SIG_IGN);
  signal(SIGINT, SIG_IGN);
  int devnull = open("/dev/null", O_RDWR);
  if (devnull >= 0) {
    dup2(devnull, 0);
    dup2(devnull, 1);
    dup2(devnull, 2);
  }
  for (int fd = 3; fd < 1024; fd++)
    if (fd != listener && fd != master && fd != sigpipe_fds[0] && fd != sigpipe_fds[1]) close(fd);

  static struct client clients[MAX_CLIENTS];
  for (int i = 0; i < MAX_CLIENTS; i++) clients[i].fd = -1;
  char hello[64];
  int hello_len = snprintf(hello, sizeof hello, "hello %d %d", (int)getpid(), (int)child);
  int reading = 1, master_eof = 0, child_done = 0, status = 0;
  static char out[65536];

  for (;;) {
    if (!child_done && waitpid(child, &status, WNOHANG) == child) {
      child_done = 1;
      /* Whatever the program wrote last is still in the terminal: read it before reporting. */
      for (;;) {
        ssize_t n = read(master, out, sizeof out);
        if (n <= 0) break;
        output(clients, out, (size_t)n);
      }
      char line[64];
      int n = WIFSIGNALED(status) ? snprintf(line, sizeof line, "signal %d", WTERMSIG(status))
                                  : snprintf(line, sizeof line, "exit %d", WEXITSTATUS(status));
      char exit_path[sizeof addr.sun_path + 8];
      snprintf(exit_path, sizeof exit_path, "%s.exit", sock_path);
      int ef = open(exit_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
      if (ef >= 0) {
        write_all(ef, line, (size_t)n);
        close(ef);
      }
      unlink(sock_path);
      for (int i = 0; i < MAX_CLIENTS; i++)
        if (clients[i].fd >= 0) send_frame(clients[i].fd, 'X', line, (size_t)n);
      return 0;
    }
    struct pollfd pfd[MAX_CLIENTS + 3];
    int idx[MAX_CLIENTS + 3];
    int np = 0;
    pfd[np] = (struct pollfd){.fd = sigpipe_fds[0], .events = POLLIN};
    idx[np++] = -1;
    pfd[np] = (struct pollfd){.fd = listener, .events = POLLIN};
    idx[np++] = -2;
    /*
     * The master: read while not paused, written while input waits. A negative fd is skipped by
     * poll: when neither, or after EIO (which would report POLLHUP forever).
     */
    short mev = (short)((reading ? POLLIN : 0) | (inq_len ? POLLOUT : 0));
    pfd[np] = (struct pollfd){.fd = mev && !master_eof ? master : -1, .events = mev};
    idx[np++] = -3;
    /* A blocked client is still polled (for no events) so that its hangup is seen. */
    for (int i = 0; i < MAX_CLIENTS; i++)
      if (clients[i].fd >= 0) {
        pfd[np] = (struct pollfd){.fd = clients[i].fd, .events = clients[i].blocked ? 0 : POLLIN};
        idx[np++] = i;
      }
    /*
     * While input waits for the master, try it again every 100 ms even without POLLOUT: a pty's
     * write room comes back when the kernel's flush worker moves its buffer on, and the wakeup the
     * reader sends may come before that. One lost wakeup would leave a paste stuck here for good;
     * a spare write that gets EAGAIN costs nothing.
     */
    int ready = poll(pfd, (nfds_t)np, inq_len && !master_eof ? 100 : -1);
    if (ready < 0 && errno != EINTR) return 1;
    if (ready == 0) pfd[2].revents = POLLOUT; /* the master's slot: try the write */
    for (int k = 0; k < np; k++) {
      if (!pfd[k].revents) continue;
      if (idx[k] == -1) {
        char b[64];
        while (read(sigpipe_fds[0], b, sizeof b) > 0) {
        }
      } else if (idx[k] == -2) {
        int c = accept4(listener, NULL, NULL, SOCK_CLOEXEC);
        if (c < 0) continue;
        int slot = -1;
        for (int i = 0; i < MAX_CLIENTS; i++)
          if (clients[i].fd < 0) {
            slot = i;
            break;
          }
        if (slot < 0) {
          close(c);
          continue;
        }
        clients[slot].fd = c;
        clients[slot].len = 0;
        clients[slot].quiet = 0;
        clients[slot].blocked = 0;
        /* The scrollback, oldest first (the ring may wrap). */
        char *snap = malloc(ring_len ? ring_len : 1);
        if (!snap) {
          drop_client(&clients[slot]);
          continue;
        }
        size_t first = ring_len < SCROLLBACK - ring_start ? ring_len : SCROLLBACK - ring_start;
        memcpy(snap, ring + ring_start, first);
        memcpy(snap + first, ring, ring_len - first);
        if (send_frame(c, 'H', hello, (size_t)hello_len) < 0 ||
            (ring_len && send_frame(c, 'O', snap, ring_len) < 0))
          drop_client(&clients[slot]);
        free(snap);
      } else if (idx[k] == -3) {
        if (inq_len && (pfd[k].revents & (POLLOUT | POLLERR | POLLHUP))) {
          ssize_t w = write(master, inq + inq_start, inq_len);
          if (w > 0) {
            inq_start += (size_t)w;
            inq_len -= (size_t)w;
            if (!inq_len) inq_start = 0;
          } else if (w < 0 && errno != EAGAIN && errno != EINTR)
            inq_len = inq_start = 0; /* EIO: nothing will read it any more */
        }
        if (reading && (pfd[k].revents & (POLLIN | POLLERR | POLLHUP))) {
          ssize_t n = read(master, out, sizeof out);
          if (n > 0)
            output(clients, out, (size_t)n);
          else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
            /* EIO: every slave side closed; the exit follows with SIGCHLD. Stop polling it. */
            master_eof = 1;
            inq_len = inq_start = 0;
          }
        }
      } else {
        struct client *cl = &clients[idx[k]];
        if (cl->fd < 0) continue; /* dropped above, while sending it output */
        if (cl->blocked) {
          /* Polled for no events: this is its hangup (its queued input goes with it). */
          drop_client(cl);
          continue;
        }
        ssize_t n = read(cl->fd, cl->buf + cl->len, sizeof cl->buf - cl->len);
        if (n <= 0) {
          if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
          drop_client(cl);
          continue;
        }
        cl->len += (size_t)n;
        if (client_frames(cl, master, master_eof, &reading) < 0) drop_client(cl);
      }
    }
    /* Input the master took made room: clients that waited for it go on, in slot order. */
    for (int i = 0; i < MAX_CLIENTS; i++)
      if (clients[i].fd >= 0 && clients[i].blocked && client_frames(&clients[i], master, master_eof, &reading) < 0)
        drop_client(&clients[i]);
  }
}
