#!/usr/bin/env bash
# Installs the Debian packages the engine uses to build real sandboxes, where they are missing:
#   bubblewrap  - namespaces (the sandbox itself)
#   slirp4netns - user-mode NAT for network "open"
#   socat       - the in-sandbox relay to the egress proxy for network "restricted"
#   nftables    - keeps network "open" sandboxes off the host's own addresses and private ranges
#   iproute2    - the blackhole route for the sandbox range; test "fake internet" namespaces
#   gcc, libseccomp-dev - the engine builds its seccomp helper (filter generator and exec loader,
#                 statically linked) against libseccomp at start; without them sandboxes run
#                 without a syscall filter and limits.isolation says so
#   curl, openssl, procps - used inside sandboxes and by the network tests
#   vim         - a full-screen editor inside sandboxes (the terminal e2e test drives it)
#   chromium    - the browser the end-to-end tests drive (Playwright never downloads one here)
#   nginx-light - the load balancer of the two-instance test (two consoles on one PostgreSQL)
set -euo pipefail
need=()
for pkg in bubblewrap slirp4netns socat nftables iproute2 gcc libc6-dev libseccomp-dev curl openssl procps util-linux vim chromium nginx-light; do
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ "${#need[@]}" -eq 0 ]; then
  echo "system packages: all present"
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "missing Debian packages: ${need[*]} - install them as root (apt-get install -y ${need[*]})" >&2
  exit 1
fi
echo "installing: ${need[*]}"
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
