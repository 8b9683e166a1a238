/*
 * baton-seccomp: the engine's seccomp helper (runtime/seccomp.ts builds it with gcc at engine start
 * and caches it; the policy itself lives in runtime/seccomp-policy.ts).
 *
 *   baton-seccomp export OUT < POLICY
 *       Compiles the policy text with libseccomp into a classic-BPF program (seccomp_export_bpf) at
 *       OUT: the form `bwrap --seccomp FD` loads, and `exec` below.
 *
 *   baton-seccomp enter FD PROG [ARG...]
 *       `exec`, after doing what `setpriv --no-new-privs --inh-caps=-all --bounding-set=-all` did in
 *       the exec chain: empties the bounding set (where CAP_SETPCAP allows: a process without it
 *       holds no capability to lose, nsenter -S already dropped them with the uid) and the
 *       inheritable and ambient sets. The engine's exec and PTY path uses it in place of setpriv,
 *       so the filter costs no extra exec.
 *
 *   baton-seccomp nr NAME...
 *       Prints each name's native syscall number as libseccomp knows it (-1: unknown), for tests.
 *
 *   baton-seccomp exec FD PROG [ARG...]
 *       Reads a compiled program from descriptor FD, closes every descriptor above 2 (the program's
 *       and this binary's own), sets no_new_privs, loads the filter and execs PROG. Processes that
 *       nsenter puts into a sandbox are not descendants of its init, so they do not inherit the
 *       filter bwrap gave it: the engine runs this right after nsenter, before anything from the
 *       sandbox's own filesystem runs. Linked statically, so no library or loader of the sandbox's
 *       view (a template's layer may replace /usr/lib) runs before the filter is in place.
 *
 * Policy text, one directive per line ('#' starts a comment):
 *   default errno N | default allow      action for syscalls no rule names
 *   badarch kill_process | badarch errno N   action for the i386 and x32 ABIs (not in the filter)
 *   nr NAME NUMBER                       native number of a syscall newer than this libseccomp
 *   allow NAME [ARG OP A [B]]            OP: eq ne lt le gt ge masked_eq (A = mask, B = value)
 *   errno N NAME [ARG OP A [B]]
 * NAME may be @NUMBER for a raw syscall number.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <seccomp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#define MAX_NR 256

static struct {
  char name[64];
  int nr;
} newer[MAX_NR];
static int n_newer;

static void die(const char *what, const char *detail) {
  fprintf(stderr, "baton-seccomp: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
  exit(2);
}

static int parse_int(const char *s, long long *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 0);
  if (errno || *end) {
    /* values such as 0xffffffffffffffff do not fit a signed long long */
    errno = 0;
    unsigned long long u = strtoull(s, &end, 0);
    if (errno || *end) return -1;
    v = (long long)u;
  }
  *out = v;
  return 0;
}

static int resolve(const char *name) {
  long long raw;
  if (name[0] == '@') {
    if (parse_int(name + 1, &raw) || raw < 0 || raw > 0xffff) die("bad raw syscall number", name);
    return (int)raw;
  }
  int nr = seccomp_syscall_resolve_name_arch(SCMP_ARCH_NATIVE, name);
  for (int i = 0; i < n_newer; i++) {
    if (strcmp(newer[i].name, name) != 0) continue;
    if (nr != __NR_SCMP_ERROR && nr != newer[i].nr) die("policy number disagrees with libseccomp for", name);
    return newer[i].nr;
  }
  /* Unknown here, or a pseudo number (a syscall of another architecture): the policy is wrong. */
  if (nr < 0) die("unknown syscall on this architecture", name);
  return nr;
}

static enum scmp_compare parse_op(const char *op) {
  static const struct {
    const char *name;
    enum scmp_compare op;
  } ops[] = {{"eq", SCMP_CMP_EQ}, {"ne", SCMP_CMP_NE}, {"lt", SCMP_CMP_LT}, {"le", SCMP_CMP_LE},
             {"gt", SCMP_CMP_GT}, {"ge", SCMP_CMP_GE}, {"masked_eq", SCMP_CMP_MASKED_EQ}};
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(ops[i].name, op) == 0) return ops[i].op;
  die("unknown comparison", op);
  return SCMP_CMP_EQ;
}

static int export_filter(const char *out) {
  char line[512];
  char *lines[4096];
  int n = 0;
  uint32_t def = SCMP_ACT_ERRNO(EPERM), badarch = SCMP_ACT_KILL_PROCESS;
  long long v;

  /* First pass: header directives, so rules can be added in one go afterwards. */
  while (fgets(line, sizeof line, stdin)) {
    char *hash = strchr(line, '#');
    if (hash) *hash = 0;
    char *tok[8];
    int nt = 0;
    for (char *t = strtok(line, " \t\r\n"); t && nt < 8; t = strtok(NULL, " \t\r\n")) tok[nt++] = t;
    if (nt == 0) continue;
    if (strcmp(tok[0], "default") == 0 && nt == 2 && strcmp(tok[1], "allow") == 0) def = SCMP_ACT_ALLOW;
    else if (strcmp(tok[0], "default") == 0 && nt == 3 && strcmp(tok[1], "errno") == 0 && !parse_int(tok[2], &v)) def = SCMP_ACT_ERRNO((uint16_t)v);
    else if (strcmp(tok[0], "badarch") == 0 && nt == 2 && strcmp(tok[1], "kill_process") == 0) badarch = SCMP_ACT_KILL_PROCESS;
    else if (strcmp(tok[0], "badarch") == 0 && nt == 3 && strcmp(tok[1], "errno") == 0 && !parse_int(tok[2], &v)) badarch = SCMP_ACT_ERRNO((uint16_t)v);
    else if (strcmp(tok[0], "nr") == 0 && nt == 3 && !parse_int(tok[2], &v)) {
      if (n_newer == MAX_NR || strlen(tok[1]) >= sizeof newer[0].name) die("too many or too long nr lines", tok[1]);
      strcpy(newer[n_newer].name, tok[1]);
      newer[n_newer++].nr = (int)v;
    } else if (strcmp(tok[0], "allow") == 0 || strcmp(tok[0], "errno") == 0) {
      if (n == (int)(sizeof lines / sizeof lines[0])) die("too many rules", NULL);
      /* Re-joined and kept for the second pass. */
      char buf[512] = "";
      for (int i = 0; i < nt; i++) {
        strcat(buf, tok[i]);
        strcat(buf, " ");
      }
      lines[n++] = strdup(buf);
    } else die("bad policy line starting with", tok[0]);
  }

  scmp_filter_ctx ctx = seccomp_init(def);
  if (!ctx) die("seccomp_init failed", NULL);
  if (seccomp_attr_set(ctx, SCMP_FLTATR_ACT_BADARCH, badarch)) die("cannot set the bad-arch action", NULL);
  /* The exported program is loaded by bwrap and by `exec`, which set no_new_privs themselves. */
  if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_NNP, 0)) die("cannot clear CTL_NNP", NULL);
  /* A binary tree of syscall numbers rather than a linear chain: O(log n) per syscall. */
  if (seccomp_attr_set(ctx, SCMP_FLTATR_CTL_OPTIMIZE, 2)) die("cannot enable the binary-tree optimisation", NULL);

  for (int i = 0; i < n; i++) {
    char *tok[8] = {0};
    int nt = 0;
    for (char *t = strtok(lines[i], " "); t && nt < 8; t = strtok(NULL, " ")) tok[nt++] = t;
    if (nt < 2) die("bad rule", tok[0]);
    int at = 1;
    uint32_t action = SCMP_ACT_ALLOW;
    if (strcmp(tok[0], "errno") == 0) {
      if (nt < 3 || parse_int(tok[1], &v)) die("bad errno rule", tok[0]);
      action = SCMP_ACT_ERRNO((uint16_t)v);
      at = 2;
    }
    int nr = resolve(tok[at]);
    struct scmp_arg_cmp cmp[1];
    unsigned ncmp = 0;
    if (nt > at + 1) {
      long long arg, a, b = 0;
      if (nt < at + 4 || parse_int(tok[at + 1], &arg) || arg < 0 || arg > 5 || parse_int(tok[at + 3], &a)) die("bad condition for", tok[at]);
      enum scmp_compare op = parse_op(tok[at + 2]);
      if (op == SCMP_CMP_MASKED_EQ && (nt != at + 5 || parse_int(tok[at + 4], &b))) die("masked_eq wants a mask and a value for", tok[at]);
      if (op != SCMP_CMP_MASKED_EQ && nt != at + 4) die("too many values for", tok[at]);
      cmp[0] = (struct scmp_arg_cmp){.arg = (unsigned)arg, .op = op, .datum_a = (scmp_datum_t)a, .datum_b = (scmp_datum_t)b};
      ncmp = 1;
    }
    int rc = seccomp_rule_add_exact_array(ctx, action, nr, ncmp, cmp);
    if (rc) die("libseccomp refused the rule for", tok[at]);
  }

  int fd = open(out, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0) die("cannot create", out);
  if (seccomp_export_bpf(ctx, fd)) die("seccomp_export_bpf failed", NULL);
  if (fsync(fd) || close(fd)) die("cannot write", out);
  seccomp_release(ctx);
  return 0;
}

/* What setpriv --inh-caps=-all --bounding-set=-all did for the exec chain. */
static void drop_capabilities(void) {
  for (int cap = 0; cap < 64; cap++) {
    if (prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) == 0) continue;
    if (errno == EINVAL) break; /* past the kernel's last capability */
    if (errno == EPERM && cap == 0) break; /* no CAP_SETPCAP: nothing to drop with it */
    die("cannot drop the bounding set", strerror(errno));
  }
  if (prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0) && errno != EINVAL) die("cannot clear ambient capabilities", strerror(errno));
  struct __user_cap_header_struct hdr = {.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  struct __user_cap_data_struct data[2];
  if (syscall(SYS_capget, &hdr, data)) die("capget", strerror(errno));
  data[0].inheritable = data[1].inheritable = 0;
  if (syscall(SYS_capset, &hdr, data)) die("cannot clear inheritable capabilities", strerror(errno));
}

static int exec_filtered(int argc, char **argv, int drop) {
  long long fd;
  if (argc < 4 || parse_int(argv[2], &fd) || fd < 3) die("usage: baton-seccomp exec|enter FD PROG [ARG...]", NULL);
  /* Nothing about this process is worth inspecting before the filter is in. */
  prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
  static struct sock_filter insns[BPF_MAXINSNS + 1];
  size_t len = 0;
  for (;;) {
    ssize_t r = read((int)fd, (char *)insns + len, sizeof insns - len);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) die("cannot read the filter", strerror(errno));
    if (r == 0) break;
    len += (size_t)r;
    if (len == sizeof insns) die("filter too long", NULL);
  }
  if (len == 0 || len % sizeof insns[0]) die("not a compiled seccomp filter", NULL);
  /* The filter's and this binary's descriptors must not reach the sandbox. */
  if (syscall(SYS_close_range, 3U, ~0U, 0U)) {
    for (int i = 3; i < 65536; i++) close(i);
  }
  if (drop) drop_capabilities();
  struct sock_fprog prog = {.len = (unsigned short)(len / sizeof insns[0]), .filter = insns};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)) die("no_new_privs", strerror(errno));
  if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog)) die("cannot load the seccomp filter", strerror(errno));
  execvp(argv[3], argv + 3);
  fprintf(stderr, "baton-seccomp: exec %s: %s\n", argv[3], strerror(errno));
  return 127;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "export") == 0) return export_filter(argv[2]);
  if (argc >= 2 && strcmp(argv[1], "exec") == 0) return exec_filtered(argc, argv, 0);
  if (argc >= 2 && strcmp(argv[1], "enter") == 0) return exec_filtered(argc, argv, 1);
  if (argc >= 2 && strcmp(argv[1], "nr") == 0) {
    for (int i = 2; i < argc; i++) printf("%s %d\n", argv[i], seccomp_syscall_resolve_name_arch(SCMP_ARCH_NATIVE, argv[i]));
    return 0;
  }
  fprintf(stderr, "usage: baton-seccomp export OUT < POLICY | baton-seccomp exec|enter FD PROG [ARG...] | baton-seccomp nr NAME...\n");
  return 2;
}
