/*
 * baton-holder: keeps one sandbox alive independently of the engine process.
 *
 *   baton-holder SOCKET PROGRAM [ARG...]
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
#include <sys/un.h>
#include <sys/wait.h>
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

int main(int argc, char **argv) {
  if (argc < 3 || argv[2][0] != '/') {
    fprintf(stderr, "usage: baton-holder SOCKET /ABSOLUTE/PROGRAM [ARG...]\n");
    return 2;
  }
  const char *sock_path = argv[1];
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
    int np = 0;
    pfd[np++] = (struct pollfd){.fd = sigpipe_fds[0], .events = POLLIN};
    pfd[np++] = (struct pollfd){.fd = listener, .events = POLLIN};
    for (int i = 0; i < MAX_CLIENTS; i++)
      if (clients[i] >= 0) pfd[np++] = (struct pollfd){.fd = clients[i], .events = POLLIN};
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
          write_all(c, hello, (size_t)hello_len);
        }
      }
    }
    for (int k = 2; k < np; k++) {
      if (!pfd[k].revents) continue;
      char buf[256];
      ssize_t n = read(pfd[k].fd, buf, sizeof buf - 1);
      if (n > 0) {
        buf[n] = 0;
        if (strstr(buf, "kill\n")) kill(child, SIGKILL);
        continue;
      }
      if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
      for (int i = 0; i < MAX_CLIENTS; i++)
        if (clients[i] == pfd[k].fd) clients[i] = -1;
      close(pfd[k].fd);
    }
  }
}
