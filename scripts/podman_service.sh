#!/usr/bin/env bash
# Start podman's Docker-compatible API service for kernel-harness (idempotent).
#
#   eval "$(scripts/podman_service.sh)"     # prints: export DOCKER_HOST=unix:///run/podman/podman.sock
#
# What it does, and why (see docs/containers.md):
#   * writes a containers.conf for this environment: runc (Debian's crun may be missing),
#     cgroup_manager "cgroupfs" (no systemd in CI containers), events_logger "file" (no
#     journald), and default ulimits no higher than the current ones (runc refuses to *raise*
#     a limit: "error setting rlimit type 7: operation not permitted");
#   * starts `podman system service --time=0` on a unix socket in the background with that
#     config (CONTAINERS_CONF: the system config in /etc is left alone);
#   * does nothing when the socket already answers /_ping.
# Environment: PODMAN_SOCK (socket path), KH_PODMAN_DIR (config + log dir),
# KH_PODMAN_STORAGE_DRIVER (e.g. vfs where overlay does not work).
set -euo pipefail

if [ "$(id -u)" = 0 ]; then
    SOCK=${PODMAN_SOCK:-/run/podman/podman.sock}
    DIR=${KH_PODMAN_DIR:-/run/kernel-harness-podman}
else
    SOCK=${PODMAN_SOCK:-${XDG_RUNTIME_DIR:-/tmp/podman-$(id -u)}/podman/podman.sock}
    DIR=${KH_PODMAN_DIR:-${XDG_RUNTIME_DIR:-/tmp/podman-$(id -u)}/kernel-harness-podman}
fi

ping_ok() {
    if command -v curl >/dev/null 2>&1; then
        curl -sf --max-time 3 --unix-socket "$SOCK" http://d/_ping >/dev/null 2>&1
    else
        python3 - "$SOCK" <<'PY' >/dev/null 2>&1
import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(3); s.connect(sys.argv[1])
s.sendall(b"GET /_ping HTTP/1.0\r\nHost: d\r\n\r\n")
sys.exit(0 if b" 200 " in s.recv(256) else 1)
PY
    fi
}

if ping_ok; then
    echo "export DOCKER_HOST=unix://$SOCK"
    exit 0
fi

if ! command -v podman >/dev/null 2>&1; then
    echo "podman_service.sh: podman is not installed (Debian: apt-get install podman runc)" >&2
    exit 3
fi

mkdir -p "$DIR" "$(dirname "$SOCK")"
nofile=$(ulimit -n); nproc=$(ulimit -u)
[ "$nofile" = unlimited ] && nofile=1048576
[ "$nproc" = unlimited ] && nproc=1048576
[ "$nofile" -gt 1024 ] && nofile=1024
[ "$nproc" -gt 4096 ] && nproc=4096
runtime=runc
command -v runc >/dev/null 2>&1 || runtime=crun

cat >"$DIR/containers.conf" <<EOF
# written by kernel-harness scripts/podman_service.sh
[containers]
default_ulimits = ["nofile=$nofile:$nofile", "nproc=$nproc:$nproc"]

[engine]
runtime = "$runtime"
cgroup_manager = "cgroupfs"
events_logger = "file"
EOF

storage_args=()
if [ -n "${KH_PODMAN_STORAGE_DRIVER:-}" ]; then
    storage_args=(--storage-driver "$KH_PODMAN_STORAGE_DRIVER")
fi

rm -f "$SOCK"
# the service and its conmon processes run in the state dir: conmon leaves an empty "oom" file
# in its working directory when a container is OOM-killed (it landed in the repository root
# whenever the tests started the service from there)
cd "$DIR"
CONTAINERS_CONF="$DIR/containers.conf" setsid nohup podman "${storage_args[@]}" system service \
    --time=0 "unix://$SOCK" >"$DIR/service.log" 2>&1 </dev/null &
echo $! >"$DIR/service.pid"

for _ in $(seq 1 50); do
    if ping_ok; then
        echo "export DOCKER_HOST=unix://$SOCK"
        exit 0
    fi
    sleep 0.2
done
echo "podman_service.sh: the service did not answer on $SOCK within 10 s; log: $DIR/service.log" >&2
tail -n 20 "$DIR/service.log" >&2 || true
exit 4
