/*
 * baton-overlay: mounts a template's overlayfs (runtime/layers.ts) so that what is inside the
 * sandbox learns nothing of the host from it, and, for a build, so that the build's root is not
 * the host's.
 *
 *   baton-overlay [--idmap UID] [--upper DIR UPPER WORK] TARGET LOWER...
 *
 * - Every layer is opened here and named to overlayfs as /proc/self/fd/N, so /proc/mounts and
 *   mountinfo inside a sandbox show "lowerdir=/proc/self/fd/4:..." instead of the engine's data
 *   directory (a build once read its layer's host path there, and used it to make the kernel run
 *   a file it had written).
 * - With --idmap, every layer is an idmapped mount (mount_setattr MOUNT_ATTR_IDMAP) in which the
 *   host's ids 0..65535 appear as UID..UID+65535. A build runs as host uid UID (root only in its
 *   own user namespace), and through this overlay owns what the host's root owns: it can install
 *   into /usr and a runtime's prefix, and what it writes lands in the layer owned by the host's
 *   root again (the upper layer is mapped the same way), as before, without a single process of
 *   the build being the host's uid 0.
 * - --upper: DIR holds the layer's UPPER and WORK directories (relative paths; overlayfs needs
 *   both on one mount). Without it the overlay is read-only (two or more lower layers).
 *
 * Why C: Node has no binding for open_tree/mount_setattr, and util-linux's mount learnt idmapped
 * mounts (X-mount.idmap) only in 2.39, after Debian 12's 2.38. Built by the engine from this
 * source into a root-only cache, like the holder and the seccomp helper.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef OPEN_TREE_CLONE
#define OPEN_TREE_CLONE 1
#endif
#ifndef OPEN_TREE_CLOEXEC
#define OPEN_TREE_CLOEXEC O_CLOEXEC
#endif
#ifndef AT_RECURSIVE
#define AT_RECURSIVE 0x8000
#endif
#ifndef MOUNT_ATTR_IDMAP
#define MOUNT_ATTR_IDMAP 0x00100000
#endif

struct baton_mount_attr {
  uint64_t attr_set;
  uint64_t attr_clr;
  uint64_t propagation;
  uint64_t userns_fd;
};

/** How many of the host's ids the idmap covers: every id a Debian userland's files use. */
#define IDMAP_RANGE 65536

static void die(const char *what) {
  fprintf(stderr, "baton-overlay: %s: %s\n", what, strerror(errno));
  exit(1);
}

static void usage(void) {
  fprintf(stderr, "usage: baton-overlay [--idmap UID] [--upper DIR UPPER WORK] TARGET LOWER...\n");
  exit(2);
}

static void write_file(const char *path, const char *text) {
  int fd = open(path, O_WRONLY | O_CLOEXEC);
  if (fd < 0) die(path);
  ssize_t n = write(fd, text, strlen(text));
  if (n != (ssize_t)strlen(text)) die(path);
  close(fd);
}

/**
 * A user namespace mapping inner 0..65535 to host uid..uid+65535 (uids and gids), and inner 65536
 * to the host's 0, held by a
 * child that only waits: its /proc/PID/ns/user is opened, then the child is killed. The namespace
 * lives on in the idmapped mounts that reference it.
 */
static int idmap_userns(unsigned long uid) {
  int ready[2];
  if (pipe2(ready, O_CLOEXEC) < 0) die("pipe");
  pid_t pid = fork();
  if (pid < 0) die("fork");
  if (pid == 0) {
    char c;
    if (unshare(CLONE_NEWUSER) < 0) _exit(1);
    close(ready[1]);
    /* Wait for the parent to read our namespace, then for its kill. */
    if (read(ready[0], &c, 1) < 0) _exit(1);
    pause();
    _exit(0);
  }
  close(ready[0]);
  char path[64], map[64];
  /* The child has unshared once its uid_map exists and is writable; try until it is. */
  /*
   * The second line maps the host's root to an id no file of a Debian userland has, so that the
   * overlay itself (it writes its work directory with the credentials of the engine, host uid 0)
   * can still write through the idmapped upper layer.
   */
  snprintf(map, sizeof map, "0 %lu %d\n%d 0 1\n", uid, IDMAP_RANGE, IDMAP_RANGE);
  int tries = 0;
  for (;;) {
    snprintf(path, sizeof path, "/proc/%d/uid_map", (int)pid);
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd >= 0) {
      ssize_t n = write(fd, map, strlen(map));
      close(fd);
      if (n == (ssize_t)strlen(map)) break;
    }
    if (++tries > 5000) {
      kill(pid, SIGKILL);
      die("writing the idmap's uid_map");
    }
    usleep(200);
  }
  snprintf(path, sizeof path, "/proc/%d/gid_map", (int)pid);
  write_file(path, map);
  snprintf(path, sizeof path, "/proc/%d/ns/user", (int)pid);
  int ns = open(path, O_RDONLY | O_CLOEXEC);
  if (ns < 0) die(path);
  kill(pid, SIGKILL);
  waitpid(pid, NULL, 0);
  close(ready[1]);
  return ns;
}

/** A private clone of the directory tree at `path`, idmapped when `userns` >= 0. */
static int layer(const char *path, int userns) {
  int fd = (int)syscall(SYS_open_tree, AT_FDCWD, path, OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC);
  if (fd < 0) die(path);
  if (userns >= 0) {
    struct baton_mount_attr attr = {.attr_set = MOUNT_ATTR_IDMAP, .userns_fd = (uint64_t)userns};
    if (syscall(SYS_mount_setattr, fd, "", AT_EMPTY_PATH, &attr, sizeof attr) < 0) die("idmapping a layer");
  }
  /* The descriptor is named in the mount options; it must survive until mount(2) returns. */
  int flags = fcntl(fd, F_GETFD);
  if (flags < 0 || fcntl(fd, F_SETFD, flags & ~FD_CLOEXEC) < 0) die("fcntl");
  return fd;
}

static int safe_rel(const char *p) {
  return p[0] && p[0] != '/' && !strstr(p, "..") && !strpbrk(p, ",:\\\n");
}

int main(int argc, char **argv) {
  long idmap = -1;
  const char *upper_dir = NULL, *upper = NULL, *work = NULL;
  int i = 1;
  while (i < argc && strncmp(argv[i], "--", 2) == 0) {
    if (strcmp(argv[i], "--idmap") == 0 && i + 1 < argc) {
      char *end;
      idmap = strtol(argv[i + 1], &end, 10);
      if (*end || idmap <= 0 || idmap > 0x7fffffffL - IDMAP_RANGE) usage();
      i += 2;
    } else if (strcmp(argv[i], "--upper") == 0 && i + 3 < argc) {
      upper_dir = argv[i + 1];
      upper = argv[i + 2];
      work = argv[i + 3];
      if (!safe_rel(upper) || !safe_rel(work)) usage();
      i += 4;
    } else
      usage();
  }
  if (argc - i < 2) usage();
  const char *target = argv[i++];
  int nlower = argc - i;
  if (!upper_dir && nlower < 2) {
    fprintf(stderr, "baton-overlay: a read-only overlay needs two or more lower layers\n");
    return 2;
  }
  int userns = idmap > 0 ? idmap_userns((unsigned long)idmap) : -1;

  size_t cap = 256 + (size_t)nlower * 32 + (upper ? strlen(upper) + strlen(work) : 0);
  char *opts = malloc(cap);
  if (!opts) die("malloc");
  size_t len = (size_t)snprintf(opts, cap, "lowerdir=");
  for (int k = 0; k < nlower; k++) {
    int fd = layer(argv[i + k], userns);
    len += (size_t)snprintf(opts + len, cap - len, "%s/proc/self/fd/%d", k ? ":" : "", fd);
  }
  if (upper_dir) {
    int fd = layer(upper_dir, userns);
    len += (size_t)snprintf(opts + len, cap - len, ",upperdir=/proc/self/fd/%d/%s,workdir=/proc/self/fd/%d/%s", fd,
                            upper, fd, work);
  }
  if (len >= cap) {
    fprintf(stderr, "baton-overlay: options too long\n");
    return 1;
  }
  if (mount("baton-template", target, "overlay", upper_dir ? 0 : MS_RDONLY, opts) < 0) die("mounting the overlay");
  return 0;
}
