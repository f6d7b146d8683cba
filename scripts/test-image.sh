#!/usr/bin/env bash
# test-image.sh proves `make image`: two builds give the same digest and
# bytes; then, in Debian's Docker (a dockerd and a containerd of the
# test's own: their data, state, config and sockets under a temporary
# directory, a bridge of its own on a test subnet, no iptables rule; all of
# it stopped and removed at the end, beside any Docker or containerd the
# machine runs), the image under Docker's default seccomp
# profile, as uid 10001, with --cap-drop ALL, no-new-privileges and a
# read-only root:
#   - `cordon test` proves containment, with Landlock selected by itself;
#   - `cordon serve --http` answers MCP over curl: a bash call writes in
#     the workspace, and its write outside the workspace, to a directory
#     uid 10001 may write without the sandbox, is refused (the file does
#     not exist afterwards);
#   - with --backend bwrap, cordon fails closed and blames the container's
#     seccomp profile, not AppArmor.
# Needs root (dockerd) and, the first time, debootstrap's network access.
# The image is loaded with `docker load`: no registry is involved.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
fail() { echo "test-image: $*" >&2; exit 1; }

work=$(mktemp -d -p /var/tmp "cordon image.XXXXXX")
dockerd_pid= containerd_pid= bridge=
stop() { # stop PID: SIGTERM, then SIGKILL after 30 s
  kill "$1" 2>/dev/null
  for _ in $(seq 60); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.5; done
  kill -9 "$1" 2>/dev/null
}
cleanup() {
  set +e
  if [ -n "$dockerd_pid" ]; then
    docker ps -aq 2>/dev/null | xargs -r docker rm -f >/dev/null 2>&1
    stop "$dockerd_pid"
  fi
  [ -z "$containerd_pid" ] || stop "$containerd_pid"
  [ -z "$bridge" ] || ip link delete "$bridge" 2>/dev/null
  if [ -n "$dockerd_pid$containerd_pid" ]; then
    # What dockerd mounted under its directories (netns), which
    # /proc/mounts names with a space as \040.
    grep -F " ${work// /\\040}/" /proc/mounts | cut -d' ' -f2 | sort -r |
      while read -r m; do umount -l "$(printf '%b' "$m")"; done
    # dockerd 20.10 and containerd 1.6 make these whatever their flags say
    # (the trust key, plugin and shim socket directories).
    [ -n "$had_run_docker" ] || rm -rf /run/docker
    [ -n "$had_key" ] || rm -f /etc/docker/key.json
    [ -n "$had_run_containerd" ] || rm -rf /run/containerd
    rmdir /etc/docker 2>/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# 1. Reproducible: two builds, one digest, the same bytes.
a=$(OUT="$work/a" TAG=cordon:image-test ./scripts/image.sh 2>/dev/null)
b=$(OUT="$work/b" TAG=cordon:image-test ./scripts/image.sh 2>/dev/null)
[ "$a" = "$b" ] || fail "two builds differ: $a and $b"
cmp "$work/a/cordon-image.tar" "$work/b/cordon-image.tar" || fail "two builds' tarballs differ"
diff -r "$work/a/oci" "$work/b/oci" >/dev/null || fail "two builds' OCI layouts differ"
echo "test-image: two builds, one digest: $a ($(( $(date +%s) - start )) s)"

# 2. A private dockerd.
command -v dockerd >/dev/null || fail "dockerd not found: apt-get install docker.io"
had_run_docker=$(ls -d /run/docker 2>/dev/null || true) had_key=$(ls /etc/docker/key.json 2>/dev/null || true)
had_run_containerd=$(ls -d /run/containerd 2>/dev/null || true)
export DOCKER_HOST="unix://$work/docker.sock"
mkdir -p "$work/data" "$work/exec" "$work/containerd"
# A containerd of its own: dockerd would otherwise use the machine's, if
# one listens on the default socket. No CRI: only dockerd talks to it.
printf 'version = 2\ndisabled_plugins = ["io.containerd.grpc.v1.cri"]\n' >"$work/containerd.toml"
containerd --config "$work/containerd.toml" --address "$work/containerd.sock" \
  --root "$work/containerd/root" --state "$work/containerd/state" >"$work/containerd.log" 2>&1 &
containerd_pid=$!
bridge=cordonimg$$
bridge=${bridge:0:15}
ip link add name "$bridge" type bridge
ip addr add 198.18.77.1/24 dev "$bridge"
ip link set "$bridge" up
for _ in $(seq 60); do [ -S "$work/containerd.sock" ] && break; sleep 0.5; done
dockerd --data-root "$work/data" --exec-root "$work/exec" --pidfile "$work/docker.pid" \
  -H "$DOCKER_HOST" --containerd "$work/containerd.sock" --bridge "$bridge" --iptables=false --ip6tables=false \
  >"$work/dockerd.log" 2>&1 &
dockerd_pid=$!
for _ in $(seq 120); do docker version >/dev/null 2>&1 && break; kill -0 $dockerd_pid 2>/dev/null || break; sleep 0.5; done
docker version >/dev/null 2>&1 || { tail -n 30 "$work/dockerd.log" >&2; fail "dockerd did not start"; }
docker info --format '{{.SecurityOptions}}' | grep -q 'name=seccomp,profile=default' ||
  fail "this dockerd does not apply its default seccomp profile: $(docker info --format '{{.SecurityOptions}}')"
docker load -i "$work/a/cordon-image.tar" >/dev/null
id=$(docker image inspect --format '{{.Id}}' cordon:image-test)
echo "test-image: dockerd $(docker version --format '{{.Server.Version}}') loaded $id"

ws="$work/workspace" outside="$work/outside"
mkdir -p "$ws" "$outside"
chown 10001:10001 "$ws" "$outside"
confined=(--user 10001:10001 --cap-drop ALL --security-opt no-new-privileges --read-only
  --tmpfs /tmp --tmpfs /home/cordon:uid=10001,gid=10001,mode=0700
  -v "$ws:/workspace" -v "$outside:/outside")
run() { docker run --rm "${confined[@]}" "$@"; }

# The container is what the test says: the default seccomp filter on,
# no capability, and /outside writable by uid 10001 without the sandbox
# (so that only the sandbox can explain a refusal there).
status=$(run --entrypoint /bin/bash cordon:image-test -c 'grep -E "^(Seccomp|CapEff|NoNewPrivs):" /proc/self/status; id -u; echo x >/outside/control && rm /outside/control && echo writable')
grep -qx $'Seccomp:\t2' <<<"$status" || fail "no seccomp filter in the container: $status"
grep -qx $'CapEff:\t0000000000000000' <<<"$status" || fail "capabilities left in the container: $status"
grep -qx 10001 <<<"$status" || fail "not uid 10001: $status"
grep -qx writable <<<"$status" || fail "/outside is not writable by uid 10001 without the sandbox: $status"

# 3. cordon test: Landlock, selected by itself.
out=$(run cordon:image-test test 2>&1) || fail "cordon test failed in the container: $out"
grep -q '^contained: backend landlock' <<<"$out" || fail "cordon test did not select Landlock: $out"
echo "test-image: $(head -n1 <<<"$out")"

# 4. bwrap forced: fails closed, and says why.
if out=$(run cordon:image-test test --backend bwrap 2>&1); then fail "cordon test --backend bwrap passed under the default seccomp profile: $out"; fi
grep -q 'in a container' <<<"$out" && grep -q 'seccomp' <<<"$out" && grep -q 'selects Landlock by itself' <<<"$out" ||
  fail "bwrap's failure is not explained as the container's: $out"
! grep -q 'apparmor_parser' <<<"$out" || fail "bwrap's failure in a container still blames AppArmor: $out"
echo "test-image: --backend bwrap fails closed, blaming the container's seccomp profile"

# 5. cordon serve --http (the image's default command) on a port published
# to the host's loopback, as the README runs it, driven with curl.
token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
docker run -d --name "cordon-image-test-$$" -p "127.0.0.1:$port:8765" -e CORDON_HTTP_TOKEN="$token" "${confined[@]}" \
  cordon:image-test >/dev/null
url="http://127.0.0.1:$port/mcp"
mcp() { # mcp BODY [SESSION]: POST one JSON-RPC message, print the response's JSON
  curl -sS --max-time 60 -D "$work/headers" -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -H 'Accept: application/json, text/event-stream' -H 'MCP-Protocol-Version: 2025-06-18' \
    ${2:+-H "Mcp-Session-Id: $2"} --data "$1" "$url" | sed -n 's/^data: //p; /^{/p'
}
for _ in $(seq 120); do curl -s -o /dev/null "$url" && break; sleep 0.5; done
init=$(mcp '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"test-image","version":"1"}}}') ||
  { docker logs "cordon-image-test-$$" >&2; fail "initialize failed"; }
grep -q '"name":"cordon"' <<<"$init" || { docker logs "cordon-image-test-$$" >&2; fail "initialize answered: $init"; }
session=$(tr -d '\r' <"$work/headers" | sed -n 's/^[Mm]cp-[Ss]ession-[Ii]d: //p')
[ -n "$session" ] || fail "initialize gave no session id"
mcp '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$session" >/dev/null
call=$(mcp '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"bash","arguments":{"command":"echo served > inside.txt && cat inside.txt; echo escaped > /outside/escaped"}}}' "$session")
grep -q 'served' <<<"$call" || fail "the bash call did not answer: $call"
[ "$(cat "$ws/inside.txt" 2>/dev/null)" = served ] || fail "the bash call did not write in the workspace: $call"
[ ! -e "$outside/escaped" ] || fail "a write outside the workspace landed: $outside/escaped"
echo "test-image: serve --http answered MCP: bash wrote in the workspace, its write outside was refused"
docker rm -f "cordon-image-test-$$" >/dev/null
echo "test-image: passed in $(( $(date +%s) - start )) s"
