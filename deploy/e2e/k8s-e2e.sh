#!/usr/bin/env bash
# k8s-e2e.sh: the Kubernetes kit on a real, one-node cluster on this
# machine, then nothing left behind. Runs as root, offline once the control
# plane is cached:
#   1. build the control plane and CoreDNS from the Go module proxy
#      (cached), the pause image (Go), the gateway's image (Debian's
#      HAProxy, haproxy-image.sh) and import cordon's image (make image);
#   2. start etcd, containerd (CRI), kube-apiserver, controller-manager,
#      scheduler, CoreDNS (the cluster DNS, on the node's address) and a
#      kubelet, on loopback and a bridge of the test's own;
#   3. apply deploy/kubernetes (namespace enforcing PodSecurity
#      "restricted"): two cordon pods become Ready through the `cordon test`
#      startup probe; a pod that is not "restricted" is refused by the
#      namespace;
#   4. `kubectl exec cordon-0 -- cordon test`: contained, by Landlock;
#   5. the gateway (deploy/gateway/haproxy.cfg, Debian's HAProxy on the
#      host, in front of the pods' addresses): sessions of two principals in
#      both protocol eras with a real MCP client (go test
#      -run TestClusterGateway ./deploy/), each sticking to its pod;
#   6. roll the StatefulSet with a call in flight on cordon-0 and a
#      background process in its session (TestClusterRoll): the call
#      completes after cordon-0's drain began, both pods are replaced, and
#      every session log of the old pods verifies and ends with its
#      process/exit events (the background process: session-ended);
#   7. the Helm chart in place of deploy/kubernetes, with its gateway
#      Deployment (gateway.enabled): steps 3-4 again, then step 5's
#      sessions through the in-cluster gateway, which finds the pods by
#      their cluster DNS names;
#   8. tear everything down: no process of the test left, no iptables rule
#      it added, no bridge, network namespace or mount, nothing it made
#      outside its work directory.
# Every check fails the run (set -e, die) when it misses.
set -euo pipefail
cd "$(dirname "$0")/../.."
repo=$(pwd)

K8S_VERSION=${K8S_VERSION:-v1.32.4}
CACHE=${K8S_E2E_CACHE:-$HOME/.cache/cordon-deploy}
BIN=$CACHE/k8s-$K8S_VERSION
WORK=${K8S_E2E_WORK:-/var/tmp/cordon-k8s-e2e}
BRIDGE=cordon-e2e0
POD_CIDR=10.244.77.0/24
NODE=cordon-e2e
IMAGE=ghcr.io/cordonhq/cordon:e2e
PAUSE=localhost/cordon-e2e/pause:1
GATEWAY_IMAGE=localhost/cordon-e2e/haproxy:e2e
COREDNS_VERSION=${COREDNS_VERSION:-v1.12.1}
COREDNS=$CACHE/coredns-$COREDNS_VERSION/coredns
# K8S_E2E_UNTIL=containerd|etcd|control-plane|node stops after that step
# (then tears down): to check the cluster's bring-up alone, without an image.
UNTIL=${K8S_E2E_UNTIL:-}
t0=$(date +%s)

step() { echo; echo "== [$(( $(date +%s) - t0 )) s] $*"; }
until_here() { if [ "$UNTIL" = "$1" ]; then echo "K8S_E2E_UNTIL=$1: stopping here"; exit 0; fi; }
die() { echo "k8s-e2e: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || die "run as root (the kubelet and containerd need it)"
[ "$(uname -s)" = Linux ] || die "Linux only"

pids=()
start_bg() { # name, command...: started in the background, logged, stopped at the end
  local name=$1; shift
  "$@" >"$WORK/log/$name.log" 2>&1 &
  pids+=("$!")
  echo "$name started (pid $!), log $WORK/log/$name.log"
}

# iptables state that the cluster may add: the kubelet's KUBE-* chains and
# anything naming the test's bridge or pod range. Other rules (a Docker on
# the same machine) are left alone and not counted.
ours() { { iptables-save 2>/dev/null || true; } | sed -e '/^#/d' -e 's/\[[0-9]*:[0-9]*\]//' |
  awk -v b="$BRIDGE" -v c="$POD_CIDR" '/^\*/{t=$0; next} /KUBE-|CNI-/ || index($0, b) || index($0, c) {print t " " $0}' | sort; }
remove_iptables() { # undo what ours() shows now and did not show before
  comm -13 <(echo "$iptables_before") <(ours) | while read -r table rule; do
    table=${table#\*}
    case $rule in
      -A\ *) eval "iptables -t $table -D ${rule#-A }" 2>/dev/null ;;
    esac
  done
  comm -13 <(echo "$iptables_before") <(ours) | while read -r table rule; do
    table=${table#\*}
    case $rule in
      :*) chain=${rule#:}; chain=${chain%% *}; iptables -t "$table" -F "$chain" 2>/dev/null; iptables -t "$table" -X "$chain" 2>/dev/null ;;
    esac
  done
}

# What the kubelet, containerd and CNI make outside $WORK whatever they are
# told: removed at the end when the test made them (they did not exist
# before), and a failure if they remain. cgroup v1 or v2.
host_paths() {
  for p in /var/lib/kubelet /var/log/containers /var/log/pods /var/lib/cni /run/containerd /run/netns; do
    [ -e "$p" ] && echo "$p"
  done
  ls -d /sys/fs/cgroup/kubepods /sys/fs/cgroup/*/kubepods 2>/dev/null || true
}
host_paths_before=
remove_host_paths() {
  for p in $(host_paths); do
    case " $host_paths_before " in *" $p "*) continue ;; esac
    case $p in
      /sys/fs/cgroup/*) find "$p" -depth -type d -exec rmdir {} \; 2>/dev/null ;;
      # Another containerd's shims may use /run/containerd/s, another
      # network namespace /run/netns: only empty directories go.
      /run/containerd | /run/netns) find "$p" -depth -type d -exec rmdir {} \; 2>/dev/null ;;
      *) rm -rf "$p" ;;
    esac
  done
  for p in $(host_paths); do
    case " $host_paths_before " in *" $p "*) continue ;; esac
    echo "left behind: $p"; failed=1
  done
}

iptables_before=
teardown() {
  set +e
  step "teardown"
  if [ -x "$BIN/kubectl" ] && [ -f "$WORK/admin.kubeconfig" ]; then
    "$BIN/kubectl" --kubeconfig "$WORK/admin.kubeconfig" delete namespace cordon --wait=true --timeout=90s >/dev/null 2>&1
  fi
  [ -n "${gateway_pid:-}" ] && kill "$gateway_pid" 2>/dev/null
  [ -n "${podlog_pid:-}" ] && kill "$podlog_pid" 2>/dev/null
  # What the kubelet did not stop: every task of the test's containerd.
  if [ -S "$WORK/containerd.sock" ]; then
    for task in $(command ctr --address "$WORK/containerd.sock" -n k8s.io tasks ls -q 2>/dev/null); do
      command ctr --address "$WORK/containerd.sock" -n k8s.io tasks kill -s SIGKILL "$task" 2>/dev/null
    done
  fi
  # Newest first: the kubelet before containerd, the control plane before etcd.
  for ((i=${#pids[@]}-1; i>=0; i--)); do
    kill "${pids[$i]}" 2>/dev/null
    for _ in $(seq 1 100); do kill -0 "${pids[$i]}" 2>/dev/null || break; sleep 0.1; done
    kill -9 "${pids[$i]}" 2>/dev/null
  done
  for p in $(pgrep -f "containerd-shim.*$WORK" || true); do kill -9 "$p" 2>/dev/null; done
  ip link del "$BRIDGE" 2>/dev/null
  for ns in $(ip netns list 2>/dev/null | awk '/^cni-/{print $1}'); do ip netns del "$ns" 2>/dev/null; done
  grep " $WORK" /proc/mounts | awk '{print $2}' | sort -r | while read -r m; do umount -l "$m" 2>/dev/null; done
  [ "${host_paths_saved:-}" = 1 ] && remove_host_paths
  if [ -n "$iptables_before" ] || [ "${iptables_saved:-}" = 1 ]; then
    remove_iptables
    leftover=$(comm -13 <(echo "$iptables_before") <(ours))
    if [ -n "$leftover" ]; then echo "iptables rules left behind:"; echo "$leftover"; failed=1; fi
  fi
  left=$(pgrep -f "$WORK" || true)
  # A pod's processes do not name $WORK: find them by their cgroup.
  for f in /proc/[0-9]*/cgroup; do
    grep -q kubepods "$f" 2>/dev/null && left="$left ${f//[^0-9]/}"
  done
  left=$(echo $left)
  if [ -n "$left" ]; then echo "processes left behind:"; ps -o pid,args -p ${left// /,}; failed=1; fi
  if ip link show "$BRIDGE" >/dev/null 2>&1; then echo "bridge $BRIDGE left behind"; failed=1; fi
  if grep -q " $WORK" /proc/mounts; then echo "mounts left behind:"; grep " $WORK" /proc/mounts; failed=1; fi
  if ip netns list 2>/dev/null | grep -q '^cni-'; then echo "network namespaces left behind:"; ip netns list; failed=1; fi
  rm -rf "$WORK"
  echo "k8s-e2e took $(( $(date +%s) - t0 )) s"
  [ -z "${failed:-}" ] || exit 1
}
trap teardown EXIT

step "prerequisites (Debian packages)"
need=()
command -v etcd >/dev/null || need+=(etcd-server)
command -v containerd >/dev/null || need+=(containerd)
[ -x /usr/lib/cni/bridge ] || need+=(containernetworking-plugins)
command -v iptables-save >/dev/null || need+=(iptables)
command -v haproxy >/dev/null || need+=(haproxy)
command -v openssl >/dev/null || need+=(openssl)
if [ ${#need[@]} -gt 0 ]; then apt-get update -qq && apt-get install -y -qq "${need[@]}"; fi
# Debian starts the packaged services where systemd runs: this test runs
# its own, on its own sockets and directories.
iptables_before=$(ours); iptables_saved=1
host_paths_before=$(echo $(host_paths)); host_paths_saved=1
[ -z "$host_paths_before" ] || echo "present before the test (left alone): $host_paths_before"

rm -rf "$WORK"; mkdir -p "$WORK"/{log,pki,etcd,containerd,containerd-state,cni,kubelet,pv,images}

if [ -z "$UNTIL" ] || [ "$UNTIL" = control-plane ] || [ "$UNTIL" = node ]; then
  step "control plane $K8S_VERSION (Go module proxy, cached in $BIN)"
  "$repo/deploy/e2e/build-control-plane.sh" "$BIN"
  step "CoreDNS $COREDNS_VERSION (Go module proxy, cached in $COREDNS)"
  if [ ! -x "$COREDNS" ]; then
    CGO_ENABLED=0 GOBIN=$(dirname "$COREDNS") go install -trimpath github.com/coredns/coredns@"$COREDNS_VERSION"
  fi
  "$COREDNS" -version
fi
kubectl() { "$BIN/kubectl" --kubeconfig "$WORK/admin.kubeconfig" "$@"; }

step "images: pause (built in Go), the gateway (Debian's HAProxy) and cordon (make image)"
mkdir -p "$WORK/images/pause-root"
CGO_ENABLED=0 go build -trimpath -o "$WORK/images/pause-root/pause" ./deploy/e2e/pause
tar --sort=name --numeric-owner --owner=0 --group=0 --mtime=@0 -C "$WORK/images/pause-root" -cf "$WORK/images/pause-layer.tar" .
ENTRYPOINT='["/pause"]' "$repo/deploy/e2e/oci-image.sh" "$WORK/images/pause-layer.tar" "$PAUSE" "$WORK/images/pause.tar"
[ -n "$UNTIL" ] || "$repo/deploy/e2e/haproxy-image.sh" "$GATEWAY_IMAGE" "$WORK/images/haproxy.tar"
image_tar=${CORDON_IMAGE_TAR:-$repo/dist/image/cordon-image.tar}
if [ -z "$UNTIL" ]; then
  # Built each time (reproducible, seconds once the base is cached): the
  # image is this checkout's.
  [ -n "${CORDON_IMAGE_TAR:-}" ] || make -C "$repo" image
  [ -f "$image_tar" ] || die "no image at $image_tar (make image)"
fi

step "containerd (CRI) on $WORK/containerd.sock"
cat >"$WORK/cni/10-cordon-e2e.conflist" <<CNI
{"cniVersion": "1.0.0", "name": "cordon-e2e", "plugins": [
  {"type": "bridge", "bridge": "$BRIDGE", "isGateway": true, "ipMasq": false,
   "ipam": {"type": "host-local", "ranges": [[{"subnet": "$POD_CIDR"}]], "dataDir": "$WORK/cni-ipam"}},
  {"type": "loopback"}]}
CNI
cat >"$WORK/containerd.toml" <<TOML
version = 2
root = "$WORK/containerd"
state = "$WORK/containerd-state"
[grpc]
  address = "$WORK/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "$PAUSE"
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$WORK/cni"
  [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
    runtime_type = "io.containerd.runc.v2"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
      Root = "$WORK/runc"
TOML
start_bg containerd containerd --config "$WORK/containerd.toml"
for _ in $(seq 1 100); do [ -S "$WORK/containerd.sock" ] && break; sleep 0.2; done
ctr() { command ctr --address "$WORK/containerd.sock" -n k8s.io "$@"; }
ctr images import "$WORK/images/pause.tar"
[ ! -f "$WORK/images/haproxy.tar" ] || ctr images import "$WORK/images/haproxy.tar"
if [ -f "$image_tar" ]; then
  imported=$(ctr images import "$image_tar" | awk '/^unpacking /{print $2}' | head -n1)
  [ -n "$imported" ] || imported=$(ctr images ls -q | grep -v -e pause -e sha256 | head -n1)
  ctr images tag --force "$imported" "$IMAGE"
  echo "cordon image: $imported, tagged $IMAGE"
fi
until_here containerd

step "etcd"
start_bg etcd etcd --data-dir "$WORK/etcd" --listen-client-urls http://127.0.0.1:23790 \
  --advertise-client-urls http://127.0.0.1:23790 --listen-peer-urls http://127.0.0.1:23800 \
  --initial-advertise-peer-urls http://127.0.0.1:23800 --initial-cluster default=http://127.0.0.1:23800
for _ in $(seq 1 100); do etcdctl_ok=$(curl -fsS http://127.0.0.1:23790/health 2>/dev/null || true); [ -n "$etcdctl_ok" ] && break; sleep 0.2; done
echo "etcd: ${etcdctl_ok:-not healthy}"
until_here etcd

step "kube-apiserver, kube-controller-manager, kube-scheduler"
openssl genrsa -out "$WORK/pki/sa.key" 2048 2>/dev/null
openssl rsa -in "$WORK/pki/sa.key" -pubout -out "$WORK/pki/sa.pub" 2>/dev/null
admin_token=$(head -c 24 /dev/urandom | od -An -tx1 | tr -d ' \n')
echo "$admin_token,admin,admin,system:masters" >"$WORK/tokens.csv"
cat >"$WORK/admin.kubeconfig" <<KC
apiVersion: v1
kind: Config
clusters: [{name: e2e, cluster: {server: "https://127.0.0.1:16443", insecure-skip-tls-verify: true}}]
users: [{name: admin, user: {token: "$admin_token"}}]
contexts: [{name: e2e, context: {cluster: e2e, user: admin}}]
current-context: e2e
KC
start_bg kube-apiserver "$BIN/kube-apiserver" --etcd-servers http://127.0.0.1:23790 \
  --bind-address 127.0.0.1 --secure-port 16443 --advertise-address 127.0.0.1 --cert-dir "$WORK/pki" \
  --token-auth-file "$WORK/tokens.csv" --authorization-mode Node,RBAC \
  --service-cluster-ip-range 10.96.77.0/24 --allow-privileged=false \
  --service-account-issuer https://kubernetes.default.svc --service-account-key-file "$WORK/pki/sa.pub" \
  --service-account-signing-key-file "$WORK/pki/sa.key" --kubelet-preferred-address-types InternalIP
for _ in $(seq 1 300); do kubectl get --raw /readyz >/dev/null 2>&1 && break; sleep 0.5; done
kubectl get --raw /readyz >/dev/null || die "kube-apiserver is not ready (log: $WORK/log/kube-apiserver.log)"
kubectl version
start_bg kube-controller-manager "$BIN/kube-controller-manager" --kubeconfig "$WORK/admin.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port 16444 --service-account-private-key-file "$WORK/pki/sa.key" \
  --root-ca-file "$WORK/pki/apiserver.crt" --use-service-account-credentials=false --leader-elect=false
start_bg kube-scheduler "$BIN/kube-scheduler" --kubeconfig "$WORK/admin.kubeconfig" \
  --bind-address 127.0.0.1 --secure-port 16445 --leader-elect=false
until_here control-plane

step "kubelet (node $NODE)"
# The node's address is on the test's own bridge (the kubelet refuses a
# loopback node IP): the CNI bridge plugin finds the bridge made and
# addressed here, and the API server reaches the kubelet through it.
NODE_IP=${POD_CIDR%.0/24}.1
ip link add "$BRIDGE" type bridge 2>/dev/null || true
ip addr replace "$NODE_IP/24" dev "$BRIDGE"
ip link set "$BRIDGE" up
# The cluster DNS: CoreDNS's kubernetes plugin on the node's address (no
# kube-proxy here, so no Service address for it), the kubelet's
# clusterDNS. The in-cluster gateway finds the pods by these names.
cat >"$WORK/Corefile" <<DNS
cluster.local:53 in-addr.arpa:53 ip6.arpa:53 {
    bind $NODE_IP
    errors
    log
    kubernetes cluster.local in-addr.arpa ip6.arpa {
        kubeconfig $WORK/admin.kubeconfig e2e
        pods insecure
    }
}
DNS
start_bg coredns "$COREDNS" -conf "$WORK/Corefile"
cat >"$WORK/kubelet.yaml" <<KL
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $NODE_IP
port: 16250
readOnlyPort: 0
healthzPort: 0
authentication: {anonymous: {enabled: true}, webhook: {enabled: false}}
authorization: {mode: AlwaysAllow}
cgroupDriver: cgroupfs
containerRuntimeEndpoint: unix://$WORK/containerd.sock
failSwapOn: false
makeIPTablesUtilChains: false
resolvConf: /etc/resolv.conf
podCIDR: $POD_CIDR
clusterDNS: [$NODE_IP]
clusterDomain: cluster.local
podLogsDir: $WORK/pod-logs
evictionHard: {memory.available: "1Mi", nodefs.available: "1%", imagefs.available: "1%"}
KL
start_bg kubelet "$BIN/kubelet" --config "$WORK/kubelet.yaml" --kubeconfig "$WORK/admin.kubeconfig" \
  --root-dir "$WORK/kubelet" --cert-dir "$WORK/pki/kubelet" --hostname-override "$NODE" --node-ip "$NODE_IP"
for _ in $(seq 1 240); do kubectl get node "$NODE" 2>/dev/null | grep -qw Ready && break; sleep 0.5; done
kubectl get node "$NODE" | grep -qw Ready || die "the node is not Ready (log: $WORK/log/kubelet.log)"
kubectl get nodes -o wide
until_here node

step "deploy: namespace (PodSecurity restricted), Secret, volumes, deploy/kubernetes"
alice=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
bob=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
server_token=$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')
sha() { printf %s "$1" | sha256sum | cut -d' ' -f1; }
# No dynamic provisioner here: a fresh hostPath volume per claim, owned by
# the image's user (the kubelet applies fsGroup to neither).
make_volumes() {
  for pod in cordon-0 cordon-1; do
    for claim in workspace state; do
      dir=$WORK/pv/$claim-$pod; rm -rf "$dir"; mkdir -p "$dir"; chown 10001:10001 "$dir"; chmod 0750 "$dir"
      size=1Gi; [ "$claim" = workspace ] && size=10Gi
      kubectl apply -f - <<PV
apiVersion: v1
kind: PersistentVolume
metadata: {name: e2e-$claim-$pod}
spec:
  capacity: {storage: $size}
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
  storageClassName: ""
  claimRef: {namespace: cordon, name: $claim-$pod}
  hostPath: {path: $dir, type: Directory}
PV
    done
  done
}
pods_ready() { # what: both pods Ready (the startup probe is `cordon test`)
  if ! kubectl -n cordon wait --for=condition=Ready pod/cordon-0 pod/cordon-1 --timeout=10m; then
    kubectl -n cordon describe pods; die "$1: the cordon pods did not become Ready"
  fi
  kubectl -n cordon get pods -o wide
}
prove_containment() { # what
  local out
  out=$(kubectl -n cordon exec cordon-0 -c cordon -- cordon test) || { echo "$out"; die "$1: cordon test failed in cordon-0"; }
  echo "$out"
  echo "$out" | grep -q '^contained: backend landlock' || die "$1: cordon test in cordon-0 did not confine with Landlock"
  echo "$1: cordon-0 is contained, by Landlock"
  for pod in cordon-0 cordon-1; do
    kubectl -n cordon exec "$pod" -c cordon -- sh -c "echo replica=$pod > /workspace/replica.txt"
  done
}
gateway_sessions() { # what: the host's HAProxy on deploy/gateway/haproxy.cfg, then a real MCP client
  if [ -n "${gateway_pid:-}" ]; then kill "$gateway_pid"; wait "$gateway_pid" 2>/dev/null || true; fi
  ip0=$(kubectl -n cordon get pod cordon-0 -o jsonpath='{.status.podIP}')
  ip1=$(kubectl -n cordon get pod cordon-1 -o jsonpath='{.status.podIP}')
  printf '%s cordon-0\n' "$(sha "$alice")" >"$WORK/principals.map"
  GATEWAY_BIND=127.0.0.1:18080 CORDON_0=$ip0:8765 CORDON_1=$ip1:8765 CORDON_PRINCIPALS_MAP=$WORK/principals.map \
    haproxy -db -f deploy/gateway/haproxy.cfg >>"$WORK/log/haproxy.log" 2>&1 &
  gateway_pid=$!
  for _ in $(seq 1 100); do curl -s -o /dev/null http://127.0.0.1:18080/ && break; sleep 0.2; done
  export CORDON_E2E_GATEWAY=http://127.0.0.1:18080/mcp CORDON_E2E_TOKENS="alice=$alice,bob=$bob"
  go test -count=1 -v -run '^TestClusterGateway$' ./deploy/ || die "$1: sessions through the gateway failed"
}

kubectl apply -f deploy/kubernetes/namespace.yaml
printf 'alice sha256:%s\nbob sha256:%s\n' "$(sha "$alice")" "$(sha "$bob")" >"$WORK/http-tokens"
kubectl -n cordon create secret generic cordon-tokens --from-literal=token="$server_token" \
  --from-file=http-tokens="$WORK/http-tokens"
make_volumes
kubectl kustomize deploy/kubernetes | sed "s|image: ghcr.io/cordonhq/cordon:latest|image: $IMAGE|" | kubectl apply -f -
pods_ready deploy/kubernetes
echo "a pod that is not \"restricted\" must be refused by the namespace:"
refused=$(kubectl -n cordon run loose --image="$IMAGE" --restart=Never -- sleep 1 2>&1) &&
  die "the namespace admitted a pod that is not restricted"
echo "$refused"
echo "$refused" | grep -q 'violates PodSecurity "restricted' || die "the pod was refused, but not by PodSecurity: $refused"

step "containment in a pod: kubectl exec cordon-0 -- cordon test"
prove_containment deploy/kubernetes

step "gateway: deploy/gateway/haproxy.cfg in front of the pods; sessions of two principals, both eras"
gateway_sessions deploy/kubernetes

step "roll the StatefulSet with a call in flight on cordon-0: drain, then every log ends with its process/exit events and verifies"
uids_before=$(kubectl -n cordon get pod cordon-0 cordon-1 -o jsonpath='{.items[*].metadata.uid}')
ws0=$WORK/pv/workspace-cordon-0
# The old pod's own log, through its drain to its exit.
kubectl -n cordon logs -f cordon-0 -c cordon >"$WORK/log/cordon-0-roll.log" 2>&1 &
podlog_pid=$!
# The roll: once the call is running (it touched roll-started), restart
# the StatefulSet (cordon-1 goes first, then cordon-0, one at a time as the
# PodDisruptionBudget allows); once cordon-0's drain has begun (/readyz 503,
# after the preStop pause and SIGTERM), let the call finish (drain-began).
cat >"$WORK/roll.sh" <<ROLL
set -eu
for _ in \$(seq 1 300); do [ -e "$ws0/roll-started" ] && break; sleep 0.2; done
[ -e "$ws0/roll-started" ] || { echo "the call never started"; exit 1; }
"$BIN/kubectl" --kubeconfig "$WORK/admin.kubeconfig" -n cordon rollout restart statefulset/cordon
for _ in \$(seq 1 900); do
  code=\$(curl -s -o /dev/null -w '%{http_code}' "http://$ip0:8765/readyz" || true)
  [ "\$code" = 503 ] && break; sleep 0.2
done
[ "\$code" = 503 ] || { echo "cordon-0 never began to drain (/readyz \$code)"; exit 1; }
echo "cordon-0 is draining (/readyz 503) with the call in flight"
touch "$ws0/drain-began"
ROLL
CORDON_E2E_ROLL="sh $WORK/roll.sh" go test -count=1 -v -run '^TestClusterRoll$' ./deploy/ ||
  die "the roll: the call in flight did not complete through the drain"
kubectl -n cordon rollout status statefulset/cordon --timeout=10m
pods_ready "the roll"
uids_after=$(kubectl -n cordon get pod cordon-0 cordon-1 -o jsonpath='{.items[*].metadata.uid}')
for u in $uids_before; do
  case " $uids_after " in *" $u "*) die "the roll left a pod unreplaced (uid $u)" ;; esac
done
echo "both pods replaced: $uids_before -> $uids_after"
for _ in $(seq 1 150); do kill -0 "$podlog_pid" 2>/dev/null || break; sleep 0.2; done
kill "$podlog_pid" 2>/dev/null || true
echo "the old cordon-0's own log, its end:"; tail -n 3 "$WORK/log/cordon-0-roll.log"
grep -q '"message":"draining' "$WORK/log/cordon-0-roll.log" || die "the old cordon-0 never logged its drain"
# Every session log on the pods' state volumes (the old pods', kept by
# their claims): each background process's process/start has its process/exit and
# the log ends with them; the roll's background process ended with its
# session; cordon log --verify checks every hash chain.
python3 - "$WORK/pv/state-cordon-0/sessions" "$WORK/pv/state-cordon-1/sessions" <<'PY' || die "the session logs are incomplete"
import json, os, sys
logs = sorted(os.path.join(d, f) for d in sys.argv[1:] for f in os.listdir(d) if f.endswith(".jsonl"))
bad, roll = [], None
for d in sys.argv[1:]:
    if not any(f.endswith(".jsonl") for f in os.listdir(d)):
        bad.append("no session logs in " + d)
for f in logs:
    ev = [json.loads(l) for l in open(f) if l.strip()]
    started = {e["data"]["process_id"]: e for e in ev if e["type"] == "process/start"}
    exits = {e["data"]["process_id"]: e for e in ev if e["type"] == "process/exit"}
    for pid in started:
        if pid not in exits:
            bad.append(f"{f}: process {pid} has no process/exit")
    if started:
        last_exit = max(e["seq"] for e in exits.values()) if exits else -1
        after = [e["type"] for e in ev if e["seq"] > last_exit and e["type"] != "process/exit"]
        if after:
            bad.append(f"{f}: events after the last process/exit: {after}")
    if any("roll-background" in json.dumps(e["data"]) for e in started.values()):
        roll = (f, [e["data"] for e in exits.values()])
    print(f"{os.path.basename(os.path.dirname(os.path.dirname(f)))}/{os.path.basename(f)}: {len(ev)} events, {len(started)} process/start, {len(exits)} process/exit")
if roll is None:
    bad.append("no session log holds the roll's background process")
else:
    f, ex = roll
    print(f"roll session {f}: " + "; ".join(json.dumps(x, sort_keys=True) for x in ex))
    if not any(x.get("reason") == "session-ended" for x in ex):
        bad.append(f"{f}: the background process did not end with its session: {ex}")
for b in bad:
    print("MISSING:", b)
sys.exit(1 if bad else 0)
PY
for pod in cordon-0 cordon-1; do
  n=0
  for f in "$WORK/pv/state-$pod/sessions"/*.jsonl; do
    s=$(basename "$f" .jsonl)
    kubectl -n cordon exec "$pod" -c cordon -- cordon log "$s" --verify || die "$pod: cordon log $s --verify failed"
    n=$((n + 1))
  done
  echo "$pod: $n session logs verify"
done

step "the Helm chart: deploy/kubernetes removed, deploy/helm/cordon installed in its place"
HELM=${HELM:-$CACHE/helm-${HELM_VERSION:-v3.22.1}/helm}
[ -x "$HELM" ] || make -C "$repo" helm HELM_CACHE="$CACHE"
kubectl delete namespace cordon --wait=true --timeout=3m
kubectl delete pv e2e-workspace-cordon-0 e2e-state-cordon-0 e2e-workspace-cordon-1 e2e-state-cordon-1 --wait=true
make_volumes
kubectl apply -f deploy/kubernetes/namespace.yaml
# The host's HAProxy of the steps above is not needed any more: the
# chart's own gateway Deployment serves this time.
if [ -n "${gateway_pid:-}" ]; then kill "$gateway_pid"; wait "$gateway_pid" 2>/dev/null || true; gateway_pid=; fi
"$HELM" --kubeconfig "$WORK/admin.kubeconfig" install cordon deploy/helm/cordon --namespace cordon \
  --set image.tag=e2e --set gateway.enabled=true \
  --set gateway.image.repository="${GATEWAY_IMAGE%:*}" --set gateway.image.tag="${GATEWAY_IMAGE##*:}" \
  --set "auth.principals[0].name=alice" --set "auth.principals[0].sha256=$(sha "$alice")" --set "auth.principals[0].replica=0" \
  --set "auth.principals[1].name=bob" --set "auth.principals[1].sha256=$(sha "$bob")"
"$HELM" --kubeconfig "$WORK/admin.kubeconfig" status cordon --namespace cordon | head -n 6
pods_ready deploy/helm
prove_containment deploy/helm

step "the chart's gateway Deployment (in the cluster, pods found by cluster DNS): sessions of two principals, both eras"
if ! kubectl -n cordon rollout status deployment/cordon-gateway --timeout=5m; then
  kubectl -n cordon describe pods -l app.kubernetes.io/component=gateway; die "deploy/helm: the gateway did not become ready"
fi
kubectl -n cordon get pods -l app.kubernetes.io/component=gateway -o wide
gw=$(kubectl -n cordon get pods -l app.kubernetes.io/component=gateway -o jsonpath='{.items[0].metadata.name}')
gw_ip=$(kubectl -n cordon get pod "$gw" -o jsonpath='{.status.podIP}')
# The names the chart gives the gateway, resolved in its pod through the
# cluster DNS (CoreDNS), as HAProxy resolves them.
for pod in cordon-0 cordon-1; do
  name=$pod.cordon-headless.cordon.svc.cluster.local
  kubectl -n cordon exec "$gw" -- getent hosts "$name" ||
    die "deploy/helm: $name does not resolve in the gateway's pod (log: $WORK/log/coredns.log)"
done
# HAProxy resolves a server's name at start and then every second: each
# replica's backend is up once a request for its sessions gets the pod's
# own answer (cordon's 404 for an unknown session) and not HAProxy's 503.
for pod in cordon-0 cordon-1; do
  for _ in $(seq 1 150); do
    code=$(curl -s -o /dev/null -w '%{http_code}' -H "Mcp-Session-Id: $pod.none" -H "Authorization: Bearer $alice" \
      -H 'Content-Type: application/json' -H 'Accept: application/json, text/event-stream' \
      -d '{"jsonrpc":"2.0","id":1,"method":"ping"}' "http://$gw_ip:8080/mcp" || true)
    [ "$code" != 503 ] && [ "$code" != 000 ] && break; sleep 0.2
  done
  echo "gateway -> $pod: HTTP $code"
  [ "$code" != 503 ] && [ "$code" != 000 ] || { kubectl -n cordon logs "$gw"; die "deploy/helm: the gateway cannot reach $pod"; }
done
export CORDON_E2E_GATEWAY=http://$gw_ip:8080/mcp CORDON_E2E_TOKENS="alice=$alice,bob=$bob"
go test -count=1 -v -run '^TestClusterGateway$' ./deploy/ || { kubectl -n cordon logs "$gw" | tail -n 40; die "deploy/helm: sessions through the in-cluster gateway failed"; }
echo "the in-cluster gateway's log, its end:"; kubectl -n cordon logs "$gw" | tail -n 4

step "done: every step passed"
