/**
 * The seccomp policy every sandbox process runs under (x86_64), compiled by libseccomp
 * (runtime/seccomp.ts → seccomp/baton-seccomp.c) into the classic-BPF program bwrap and the exec
 * loader install.
 *
 * Shape: an allowlist, modelled on Docker's default profile (moby/profiles, seccomp/default.json)
 * for a container without added capabilities, because that list has a decade of real workloads
 * behind it (glibc, Python, Node, JVMs, Go, pip/npm, git, compilers) while a denylist silently
 * admits every syscall a future kernel adds. The failure mode of an allowlist, a libc that starts
 * using a new syscall and gets EPERM where it expects ENOSYS for its fallback, is closed the way
 * runc closes it: syscall numbers newer than this policy return ENOSYS.
 *
 *  - allowed: ALLOW below, unconditionally or with the argument rules in CONDITIONAL;
 *  - every other known syscall: EPERM (NOTABLY_BLOCKED names the ones that matter and why);
 *  - clone3: ENOSYS, as Docker does, so glibc falls back to clone(), whose flags can be checked
 *    (clone3 passes them in memory a filter cannot read);
 *  - numbers above LAST_KNOWN_NR (syscalls added after this list was written): ENOSYS;
 *  - the i386 (int 0x80) and x32 ABIs: the process is killed (SIGSYS). Docker filters them with
 *    the same list instead; nothing in a sandbox's userland is 32-bit, and the compat entry points
 *    are where several kernel exploits came in, so they are not reachable at all.
 *
 * Deliberate differences from Docker's list: adjtimex, clock_adjtime and name_to_handle_at (and
 * modify_ldt, which only Wine and DOSEMU use and which has a history of kernel bugs) are blocked;
 * unshare is allowed without namespace flags (Docker blocks it whole; unshare(CLONE_FS|CLONE_FILES)
 * is harmless and some runtimes use it). ptrace and process_vm_readv/writev stay allowed as in
 * Docker on kernels ≥ 4.8 (which re-check seccomp after a tracer rewrites a syscall): debuggers and
 * strace work, and they reach only the sandbox's own processes (same uid, own pid namespace).
 */

/** Unconditionally allowed syscalls (x86_64 names). */
export const ALLOW: readonly string[] = [
  // files and directories
  "access",
  "chdir",
  "chmod",
  "chown",
  "close",
  "close_range",
  "copy_file_range",
  "creat",
  "dup",
  "dup2",
  "dup3",
  "faccessat",
  "faccessat2",
  "fadvise64",
  "fallocate",
  "fchdir",
  "fchmod",
  "fchmodat",
  "fchmodat2",
  "fchown",
  "fchownat",
  "fcntl",
  "fdatasync",
  "flock",
  "fstat",
  "fstatfs",
  "fsync",
  "ftruncate",
  "futimesat",
  "getcwd",
  "getdents",
  "getdents64",
  "lchown",
  "link",
  "linkat",
  "lseek",
  "lstat",
  "mkdir",
  "mkdirat",
  "mknod",
  "mknodat",
  "newfstatat",
  "open",
  "openat",
  "openat2",
  "pread64",
  "preadv",
  "preadv2",
  "pwrite64",
  "pwritev",
  "pwritev2",
  "read",
  "readahead",
  "readlink",
  "readlinkat",
  "readv",
  "rename",
  "renameat",
  "renameat2",
  "rmdir",
  "sendfile",
  "splice",
  "stat",
  "statfs",
  "statx",
  "symlink",
  "symlinkat",
  "sync",
  "sync_file_range",
  "syncfs",
  "tee",
  "truncate",
  "umask",
  "unlink",
  "unlinkat",
  "utime",
  "utimensat",
  "utimes",
  "vmsplice",
  "write",
  "writev",
  "cachestat",
  "fanotify_mark",
  "inotify_add_watch",
  "inotify_init",
  "inotify_init1",
  "inotify_rm_watch",
  "ioctl",
  "statmount",
  "listmount",
  // extended attributes
  "fgetxattr",
  "flistxattr",
  "fremovexattr",
  "fsetxattr",
  "getxattr",
  "lgetxattr",
  "listxattr",
  "llistxattr",
  "lremovexattr",
  "lsetxattr",
  "removexattr",
  "setxattr",
  "getxattrat",
  "setxattrat",
  "listxattrat",
  "removexattrat",
  // polling, events, legacy AIO (not io_uring)
  "epoll_create",
  "epoll_create1",
  "epoll_ctl",
  "epoll_ctl_old",
  "epoll_pwait",
  "epoll_pwait2",
  "epoll_wait",
  "epoll_wait_old",
  "eventfd",
  "eventfd2",
  "pipe",
  "pipe2",
  "poll",
  "ppoll",
  "pselect6",
  "select",
  "signalfd",
  "signalfd4",
  "timerfd_create",
  "timerfd_gettime",
  "timerfd_settime",
  "io_cancel",
  "io_destroy",
  "io_getevents",
  "io_pgetevents",
  "io_setup",
  "io_submit",
  // memory
  "brk",
  "madvise",
  "map_shadow_stack",
  "membarrier",
  "memfd_create",
  "memfd_secret",
  "mincore",
  "mlock",
  "mlock2",
  "mlockall",
  "mmap",
  "mprotect",
  "mremap",
  "mseal",
  "msync",
  "munlock",
  "munlockall",
  "munmap",
  "pkey_alloc",
  "pkey_free",
  "pkey_mprotect",
  "remap_file_pages",
  // processes, threads, signals
  "arch_prctl",
  "capget",
  "capset",
  "execve",
  "execveat",
  "exit",
  "exit_group",
  "fork",
  "vfork",
  "wait4",
  "waitid",
  "kill",
  "tkill",
  "tgkill",
  "pidfd_open",
  "pidfd_send_signal",
  "process_mrelease",
  "prctl",
  "prlimit64",
  "getrlimit",
  "setrlimit",
  "getrusage",
  "rt_sigaction",
  "rt_sigpending",
  "rt_sigprocmask",
  "rt_sigqueueinfo",
  "rt_sigreturn",
  "rt_sigsuspend",
  "rt_sigtimedwait",
  "rt_tgsigqueueinfo",
  "sigaltstack",
  "pause",
  "restart_syscall",
  "rseq",
  "set_robust_list",
  "get_robust_list",
  "set_tid_address",
  "set_thread_area",
  "get_thread_area",
  "futex",
  "futex_waitv",
  "futex_wake",
  "futex_wait",
  "futex_requeue",
  "seccomp",
  "landlock_add_rule",
  "landlock_create_ruleset",
  "landlock_restrict_self",
  "uretprobe",
  // debugging within the sandbox (see above)
  "ptrace",
  "process_vm_readv",
  "process_vm_writev",
  // identity
  "getegid",
  "geteuid",
  "getgid",
  "getgroups",
  "getpgid",
  "getpgrp",
  "getpid",
  "getppid",
  "getresgid",
  "getresuid",
  "getsid",
  "gettid",
  "getuid",
  "setfsgid",
  "setfsuid",
  "setgid",
  "setgroups",
  "setpgid",
  "setregid",
  "setresgid",
  "setresuid",
  "setreuid",
  "setsid",
  "setuid",
  // scheduling and time (reading the clock; setting it is blocked)
  "getcpu",
  "getpriority",
  "setpriority",
  "ioprio_get",
  "ioprio_set",
  "sched_get_priority_max",
  "sched_get_priority_min",
  "sched_getaffinity",
  "sched_getattr",
  "sched_getparam",
  "sched_getscheduler",
  "sched_rr_get_interval",
  "sched_setaffinity",
  "sched_setattr",
  "sched_setparam",
  "sched_setscheduler",
  "sched_yield",
  "alarm",
  "clock_getres",
  "clock_gettime",
  "clock_nanosleep",
  "getitimer",
  "setitimer",
  "gettimeofday",
  "nanosleep",
  "time",
  "times",
  "timer_create",
  "timer_delete",
  "timer_getoverrun",
  "timer_gettime",
  "timer_settime",
  "sysinfo",
  "uname",
  "getrandom",
  // sockets (socket() itself is in CONDITIONAL)
  "accept",
  "accept4",
  "bind",
  "connect",
  "getpeername",
  "getsockname",
  "getsockopt",
  "listen",
  "recvfrom",
  "recvmmsg",
  "recvmsg",
  "sendmmsg",
  "sendmsg",
  "sendto",
  "setsockopt",
  "shutdown",
  "socketpair",
  // System V and POSIX IPC (private per sandbox: its own IPC namespace)
  "msgctl",
  "msgget",
  "msgrcv",
  "msgsnd",
  "semctl",
  "semget",
  "semop",
  "semtimedop",
  "shmat",
  "shmctl",
  "shmdt",
  "shmget",
  "mq_getsetattr",
  "mq_notify",
  "mq_open",
  "mq_timedreceive",
  "mq_timedsend",
  "mq_unlink",
];

/** Namespace flags of clone() (its flags are in the low 32 bits: the kernel ignores the rest). */
const CLONE_NS = {
  CLONE_NEWNS: 0x00020000,
  CLONE_NEWCGROUP: 0x02000000,
  CLONE_NEWUTS: 0x04000000,
  CLONE_NEWIPC: 0x08000000,
  CLONE_NEWUSER: 0x10000000,
  CLONE_NEWPID: 0x20000000,
  CLONE_NEWNET: 0x40000000,
};
export const CLONE_NS_MASK = Object.values(CLONE_NS).reduce((a, b) => a | b, 0);
/** unshare() also takes CLONE_NEWTIME (in clone() that bit belongs to the exit signal). */
export const UNSHARE_NS_MASK = CLONE_NS_MASK | 0x00000080;

/** Address families a sandbox may not open: the kernel crypto API and VM sockets (the path to a hypervisor). */
export const BLOCKED_SOCKET_FAMILIES = { AF_ALG: 38, AF_VSOCK: 40 };
/** socket() families above this do not exist (AF_MAX is 46 on 6.x kernels): EPERM instead of EAFNOSUPPORT. */
const SOCKET_FAMILY_LIMIT = 48;

/** personality() values Docker admits: PER_LINUX, PER_LINUX32, UNAME26 and both, and the query 0xffffffff. */
export const PERSONALITY_ALLOWED = [0x0, 0x8, 0x20000, 0x20008, 0xffffffff];

export interface Rule {
  name: string;
  arg: number;
  /** masked_eq: (arg & mask) == value. eq: arg == value. */
  op: "masked_eq" | "eq";
  mask?: number;
  value: number;
}

/**
 * Splits the allowed values 0..limit-1 (minus `blocked`) into aligned power-of-two blocks, each one
 * masked_eq rule on the low 32 bits. int arguments such as socket()'s family are truncated to 32
 * bits by the kernel while seccomp sees the whole 64-bit register: an "a0 > 40" rule would admit
 * 40 | 1 << 32, which the kernel reads as AF_VSOCK. A mask that ignores the high half cannot be fooled.
 */
export function maskedValueRules(name: string, arg: number, limit: number, blocked: number[]): Rule[] {
  const rules: Rule[] = [];
  let v = 0;
  while (v < limit) {
    if (blocked.includes(v)) {
      v++;
      continue;
    }
    let size = 1;
    // Grow the block while it stays aligned, inside the limit and clear of blocked values.
    while (v % (size * 2) === 0 && v + size * 2 <= limit && !blocked.some((b) => b >= v && b < v + size * 2)) size *= 2;
    rules.push({ name, arg, op: "masked_eq", mask: (0xffffffff & ~(size - 1)) >>> 0, value: v });
    v += size;
  }
  return rules;
}

/** Syscalls allowed only for some arguments; anything else they are called with gets EPERM. */
export const CONDITIONAL: readonly Rule[] = [
  // New namespaces: none (bwrap's --disable-userns also stops nested user namespaces).
  { name: "clone", arg: 0, op: "masked_eq", mask: CLONE_NS_MASK, value: 0 },
  { name: "unshare", arg: 0, op: "masked_eq", mask: UNSHARE_NS_MASK, value: 0 },
  ...maskedValueRules("socket", 0, SOCKET_FAMILY_LIMIT, Object.values(BLOCKED_SOCKET_FAMILIES)),
  ...PERSONALITY_ALLOWED.map((value): Rule => ({ name: "personality", arg: 0, op: "eq", value })),
];

/** Syscalls that answer ENOSYS instead of EPERM, so libc falls back to an older one. */
export const ENOSYS: readonly string[] = ["clone3"];

/**
 * x86_64 numbers of syscalls newer than the libseccomp Debian 12 ships (2.5.4 knows up to 456):
 * the generator checks them against its own table where it knows the name.
 */
export const NEWER_SYSCALL_NRS: Record<string, number> = {
  uretprobe: 335,
  cachestat: 451,
  fchmodat2: 452,
  map_shadow_stack: 453,
  futex_wake: 454,
  futex_wait: 455,
  futex_requeue: 456,
  statmount: 457,
  listmount: 458,
  lsm_get_self_attr: 459,
  lsm_set_self_attr: 460,
  lsm_list_modules: 461,
  mseal: 462,
  setxattrat: 463,
  getxattrat: 464,
  listxattrat: 465,
  removexattrat: 466,
  open_tree_attr: 467,
  file_getattr: 468,
  file_setattr: 469,
};
/** The newest x86_64 syscall this policy was written against (Linux 6.18: file_setattr). */
export const LAST_KNOWN_NR = 469;
/** Native numbers end below the x32 range (512+); everything from LAST_KNOWN_NR+1 up to here is "newer than the policy". */
const LAST_NATIVE_NR = 511;

/**
 * What the filter is for, named so tests and readers can check it: each of these gets EPERM (they
 * are simply not in ALLOW), grouped by why.
 */
export const NOTABLY_BLOCKED: Record<string, readonly string[]> = {
  "kernel attack surface shared by every sandbox": [
    "io_uring_setup",
    "io_uring_enter",
    "io_uring_register",
    "bpf",
    "perf_event_open",
    "userfaultfd",
  ],
  "kernel keyrings (not namespaced)": ["add_key", "keyctl", "request_key"],
  "mounts and the new mount API": [
    "mount",
    "umount2",
    "pivot_root",
    "move_mount",
    "fsopen",
    "fsconfig",
    "fsmount",
    "fspick",
    "open_tree",
    "open_tree_attr",
    "mount_setattr",
    "chroot",
  ],
  namespaces: ["setns"],
  "kernel modules and kexec": ["init_module", "finit_module", "delete_module", "kexec_load", "kexec_file_load"],
  "host state: power, swap, accounting, clock, hostname": [
    "reboot",
    "swapon",
    "swapoff",
    "acct",
    "settimeofday",
    "clock_settime",
    "adjtimex",
    "clock_adjtime",
    "sethostname",
    "setdomainname",
  ],
  "file handles (bypass path permissions)": ["name_to_handle_at", "open_by_handle_at"],
  "cross-process inspection beyond ptrace": ["kcmp", "pidfd_getfd", "process_madvise"],
  "kernel log, quotas, raw I/O, obsolete interfaces": [
    "syslog",
    "quotactl",
    "quotactl_fd",
    "iopl",
    "ioperm",
    "lookup_dcookie",
    "uselib",
    "ustat",
    "sysfs",
    "_sysctl",
    "create_module",
    "get_kernel_syms",
    "query_module",
    "nfsservctl",
    "vhangup",
    "modify_ldt",
  ],
  "NUMA policy (Docker needs CAP_SYS_NICE)": [
    "mbind",
    "set_mempolicy",
    "get_mempolicy",
    "set_mempolicy_home_node",
    "migrate_pages",
    "move_pages",
  ],
  "LSM self-attributes": ["lsm_get_self_attr", "lsm_set_self_attr", "lsm_list_modules"],
};

/** The policy in the line format baton-seccomp.c reads (see its header). */
export function policyText(): string {
  const lines = [
    "# generated by engine/src/runtime/seccomp-policy.ts",
    "default errno 1",
    "badarch kill_process",
    ...Object.entries(NEWER_SYSCALL_NRS).map(([name, nr]) => `nr ${name} ${nr}`),
    ...ALLOW.map((name) => `allow ${name}`),
    ...CONDITIONAL.map(
      (r) =>
        `allow ${r.name} ${r.arg} ${r.op} ${r.op === "masked_eq" ? `0x${r.mask!.toString(16)} ` : ""}0x${r.value.toString(16)}`,
    ),
    ...ENOSYS.map((name) => `errno 38 ${name}`),
  ];
  for (let nr = LAST_KNOWN_NR + 1; nr <= LAST_NATIVE_NR; nr++) lines.push(`errno 38 @${nr}`);
  return lines.join("\n") + "\n";
}
