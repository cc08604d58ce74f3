# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# A real single-node Kubernetes v1.20.2 for the cluster tier (tests/cluster/README.md): etcd, kube-apiserver
# (TLS, Node+RBAC, service-account signing, audit log), kube-controller-manager, kube-scheduler, kubelet
# (containerd's CRI, cgroupfs, the CNI bridge) and kube-proxy (iptables), from the cache
# tests/realapi/apiserver_build.sh builds, with bookworm's containerd, runc and CNI plugins.
#
# Everything runs in one network namespace of its own (the "node", CL_NETNS): its bridge, its iptables rules
# and its net.* sysctls vanish with it, it has no route out, and its ports collide with nothing. containerd,
# kubelet and kube-proxy also share one private mount namespace (held by node_mounts.sh) where the host
# paths they insist on (/var/lib/kubelet, /var/log/pods, /run/containerd, /var/lib/cni, ...) are bind
# mounts of the state dir. Pods live in a cgroup subtree of their own (kubelet's cgroupRoot). cl_down stops
# everything by pid, netns and cgroup, removes what cl_up made and restores the three global sysctls the
# kubelet changes.
#
# Sourced; set CL_STATE (the state dir) first. Functions: cl_up, cl_down, cl_kubectl ARGS, cl_net CMD
# (in the node's netns), cl_ctr ARGS, cl_secret, cl_overlay, cl_leftovers (what a stopped cluster left).

CL_LIB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
CL_REPO_DIR="$(cd "$CL_LIB_DIR/../.." && pwd)"
CL_KUBE="$("$CL_REPO_DIR/tests/realapi/apiserver_build.sh" path)"
CL_NODE=k8sa-node
CL_POD_CIDR=10.244.0.0/24
CL_NODE_IP=10.244.0.1
CL_SVC_CIDR=10.96.0.0/24
CL_API="https://$CL_NODE_IP:6443"
# The global sysctls kubelet sets (the net.* ones it and kube-proxy set are the node netns's own).
CL_SYSCTLS="vm.overcommit_memory kernel.panic kernel.panic_on_oops"
# Host paths kubelet, containerd and libcni use whatever their flags say: bind mounts in the node's mount ns.
CL_HOST_PATHS="/var/lib/kubelet /var/log/pods /var/log/containers /run/containerd /var/lib/containerd /var/lib/cni"
# The system python (python3 on PATH may be another), for scenarios.sh.
export CL_PY=/usr/bin/python3

cl_log() { printf '[cluster %s] %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
cl_die() {
  cl_log "FAIL: $*"
  return 1
}

# Names derived from the state dir, so cl_down finds them from CL_STATE alone.
cl_names() {
  local id
  id="$(printf '%s' "$CL_STATE" | sha256sum | cut -c1-8)"
  CL_NETNS="k8sa-cl-$id"
  CL_CGROUP="k8sa-cl-$id"
  CL_BRIDGE="k8sa-br0"
}

cl_net() { nsenter --net="/run/netns/$CL_NETNS" -- "$@"; }
# In the node's netns and mount ns (where containerd, kubelet and kube-proxy run).
cl_node() {
  nsenter --net="/run/netns/$CL_NETNS" --mount="/proc/$(cat "$CL_STATE/pids/node_mounts")/ns/mnt" -- "$@"
}
cl_kubectl() { cl_net "$CL_KUBE/bin/kubectl" --kubeconfig "$CL_STATE/pki/admin.conf" --request-timeout 30s "$@"; }
cl_ctr() { ctr --address "$CL_STATE/host/run/containerd/containerd.sock" "$@"; }

# A binary of the cached Debian 13 root (etcd), with that root's loader and libraries.
cl_root_exec() {
  local r="$CL_KUBE/root" bin="$1"
  shift
  "$r/lib64/ld-linux-x86-64.so.2" --library-path "$r/lib/x86_64-linux-gnu:$r/usr/lib/x86_64-linux-gnu" "$r$bin" "$@"
}

# Why this machine cannot run the tier, or nothing.
cl_unavailable() {
  [[ $EUID -eq 0 ]] || { echo "needs root (network and mount namespaces, cgroups)"; return; }
  "$CL_REPO_DIR/tests/realapi/apiserver_build.sh" check ||
    { echo "Kubernetes v1.20.2 not built ($CL_KUBE): run 'tests/realapi/apiserver_build.sh ensure' as root (13-38 min cold)"; return; }
  local t
  for t in containerd containerd-shim-runc-v2 runc ctr iptables iptables-save iptables-restore conntrack nsenter \
    busybox; do
    command -v "$t" >/dev/null || { echo "no $t: scripts/deps.sh installs the cluster tier's packages"; return; }
  done
  [[ -x /usr/lib/cni/bridge && -x /usr/lib/cni/host-local && -x /usr/lib/cni/loopback ]] ||
    { echo "no CNI plugins in /usr/lib/cni (containernetworking-plugins)"; return; }
  [[ -d /sys/fs/cgroup/pids && -d /sys/fs/cgroup/memory ]] || { echo "no cgroup v1 hierarchy at /sys/fs/cgroup"; return; }
}

# cl_cert NAME CN [O] [SAN]: a key and a certificate signed by the tier's CA.
cl_cert() {
  local p="$CL_STATE/pki" name="$1" cn="$2" o="${3:-}" san="${4:-}" subj ext
  subj="/CN=$cn"
  [[ -n "$o" ]] && subj="/O=$o$subj"
  ext="$p/$name.ext"
  if [[ -n "$san" ]]; then
    printf 'subjectAltName=%s\nextendedKeyUsage=serverAuth,clientAuth\n' "$san" >"$ext"
  else
    printf 'extendedKeyUsage=clientAuth\n' >"$ext"
  fi
  openssl req -new -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$p/$name.key" -subj "$subj" \
    -out "$p/$name.csr" 2>/dev/null &&
    openssl x509 -req -in "$p/$name.csr" -CA "$p/ca.crt" -CAkey "$p/ca.key" -CAcreateserial -days 2 \
      -extfile "$ext" -out "$p/$name.crt" 2>/dev/null
}

# cl_kubeconfig NAME: a kubeconfig for the client certificate NAME.
cl_kubeconfig() {
  local p="$CL_STATE/pki"
  cat >"$p/$1.conf" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: k8sa
    cluster: {server: "$CL_API", certificate-authority: "$p/ca.crt"}
users:
  - name: $1
    user: {client-certificate: "$p/$1.crt", client-key: "$p/$1.key"}
contexts:
  - name: k8sa
    context: {cluster: k8sa, user: $1}
current-context: k8sa
EOF
}

cl_pki() {
  local p="$CL_STATE/pki" c
  mkdir -p "$p" && chmod 700 "$p"
  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -keyout "$p/ca.key" -out "$p/ca.crt" \
    -subj /CN=k8sa-cluster-ca -days 2 2>/dev/null || return 1
  cl_cert apiserver kube-apiserver "" \
    "DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,IP:10.96.0.1,IP:$CL_NODE_IP,IP:127.0.0.1" ||
    return 1
  cl_cert admin kubernetes-admin system:masters && cl_cert apiserver-kubelet-client kube-apiserver system:masters &&
    cl_cert kubelet "system:node:$CL_NODE" system:nodes &&
    cl_cert controller-manager system:kube-controller-manager && cl_cert scheduler system:kube-scheduler &&
    cl_cert kube-proxy system:kube-proxy || return 1
  for c in admin kubelet controller-manager scheduler kube-proxy; do cl_kubeconfig "$c"; done
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$p/sa.key" 2>/dev/null &&
    openssl pkey -in "$p/sa.key" -pubout -out "$p/sa.pub" 2>/dev/null
}

# cl_daemon NAME WHERE CMD...: starts CMD in its own session (WHERE: net = the node netns, node = netns and
# mount ns), output to log/NAME.log, pid to pids/NAME. The session outlives the shell that started it (a
# ctest fixture's setup), and holds no fd of it.
cl_daemon() {
  local name="$1" where="$2"
  shift 2
  if [[ "$where" == node ]]; then
    setsid nsenter --net="/run/netns/$CL_NETNS" --mount="/proc/$(cat "$CL_STATE/pids/node_mounts")/ns/mnt" -- \
      "$@" >>"$CL_STATE/log/$name.log" 2>&1 </dev/null &
  else
    setsid nsenter --net="/run/netns/$CL_NETNS" -- "$@" >>"$CL_STATE/log/$name.log" 2>&1 </dev/null &
  fi
  echo $! >"$CL_STATE/pids/$name"
  # Not a job of this shell: cl_down's SIGKILL is no news to report.
  disown $!
}

# cl_wait WHAT SECONDS CMD...: until CMD succeeds; fails naming WHAT (and the logs) past SECONDS or when a
# daemon died.
cl_wait() {
  local what="$1" limit="$2" deadline p
  shift 2
  deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    for p in "$CL_STATE"/pids/*; do
      kill -0 "$(cat "$p")" 2>/dev/null && continue
      tail -n 20 "$CL_STATE/log/$(basename "$p").log" >&2
      cl_die "$(basename "$p") exited while waiting for $what"
      return 1
    done
    if ((SECONDS > deadline)); then
      cl_die "$what not within ${limit} s"
      return 1
    fi
    sleep 0.2
  done
}

cl_api_ready() {
  [[ "$(cl_net curl -s --max-time 3 --cacert "$CL_STATE/pki/ca.crt" --cert "$CL_STATE/pki/admin.crt" \
    --key "$CL_STATE/pki/admin.key" "$CL_API/readyz")" == ok ]]
}
cl_node_ready() {
  [[ "$(cl_kubectl get node "$CL_NODE" -o jsonpath='{.status.conditions[?(@.type=="Ready")].status}')" == True ]]
}
cl_default_sa() { cl_kubectl -n default get serviceaccount default; }
cl_proxy_ready() { cl_net iptables-save -t nat | grep -q 'default/kubernetes:https'; }

# The network: the node netns, its bridge (the node IP, which kubelet needs before it starts), loopback.
cl_network() {
  ip netns add "$CL_NETNS" || return 1
  ip -n "$CL_NETNS" link set lo up &&
    ip -n "$CL_NETNS" link add "$CL_BRIDGE" type bridge &&
    ip -n "$CL_NETNS" addr add "$CL_NODE_IP/24" dev "$CL_BRIDGE" &&
    ip -n "$CL_NETNS" link set "$CL_BRIDGE" up
}

cl_write_configs() {
  local s="$CL_STATE" c="$CL_STATE/config"
  mkdir -p "$c/cni" "$s/cni-ipam"
  # No nameserver: the pods have no DNS add-on and no route out; lookups fail at once, nothing is sent.
  printf '# k8s-agent cluster tier: no DNS\noptions timeout:1 attempts:1\n' >"$c/resolv.conf"
  # Routes: the pod subnet (the bridge) and the Service range through the node; no default route.
  cat >"$c/cni/10-k8sa.conflist" <<EOF
{"cniVersion": "0.4.0", "name": "k8sa", "plugins": [
  {"type": "bridge", "bridge": "$CL_BRIDGE", "isGateway": true, "ipMasq": false, "hairpinMode": true,
   "ipam": {"type": "host-local", "dataDir": "$s/cni-ipam",
            "ranges": [[{"subnet": "$CL_POD_CIDR", "gateway": "$CL_NODE_IP"}]],
            "routes": [{"dst": "$CL_SVC_CIDR"}]}}]}
EOF
  # restrict_oom_score_adj: root here lacks CAP_SYS_RESOURCE, and runc cannot give the sandbox the -998
  # the CRI asks for (every pod would hang in ContainerCreating).
  cat >"$c/containerd.toml" <<EOF
version = 2
root = "/var/lib/containerd"
state = "/run/containerd"
[grpc]
  address = "/run/containerd/containerd.sock"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "k8sa.local/pause:1"
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "$c/cni"
EOF
  cat >"$c/kubelet.yaml" <<EOF
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
address: $CL_NODE_IP
port: 10250
readOnlyPort: 0
healthzBindAddress: 127.0.0.1
healthzPort: 10248
authentication:
  anonymous: {enabled: false}
  webhook: {enabled: true}
  x509: {clientCAFile: "$s/pki/ca.crt"}
authorization: {mode: Webhook}
cgroupDriver: cgroupfs
cgroupRoot: /$CL_CGROUP
failSwapOn: false
nodeStatusUpdateFrequency: 1s
nodeStatusReportFrequency: 10s
resolvConf: $c/resolv.conf
clusterDomain: cluster.local
serializeImagePulls: false
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
evictionHard: {memory.available: "100Mi", nodefs.available: "1%", imagefs.available: "1%"}
oomScoreAdj: 0
EOF
  cat >"$c/kube-proxy.yaml" <<EOF
apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clientConnection: {kubeconfig: "$s/pki/kube-proxy.conf"}
mode: iptables
bindAddress: $CL_NODE_IP
clusterCIDR: $CL_POD_CIDR
hostnameOverride: $CL_NODE
healthzBindAddress: 127.0.0.1:10256
metricsBindAddress: 127.0.0.1:10249
oomScoreAdj: 0
# Zeros: kube-proxy leaves the machine's conntrack sysctls alone.
conntrack: {maxPerCore: 0, min: 0, tcpEstablishedTimeout: 0s, tcpCloseWaitTimeout: 0s}
EOF
  # One event when a request arrives and one when it completes (a watch completes when it closes).
  cat >"$c/audit-policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [ResponseStarted]
rules:
  - level: Metadata
EOF
}

cl_start_control_plane() {
  local s="$CL_STATE" p="$CL_STATE/pki" k="$CL_KUBE/bin"
  mkdir -p "$s/etcd" && chmod 700 "$s/etcd"
  cl_daemon etcd net "$CL_KUBE/root/lib64/ld-linux-x86-64.so.2" \
    --library-path "$CL_KUBE/root/lib/x86_64-linux-gnu:$CL_KUBE/root/usr/lib/x86_64-linux-gnu" \
    "$CL_KUBE/root/usr/bin/etcd" --name k8sa --data-dir "$s/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster k8sa=http://127.0.0.1:2380 --log-level warn
  # Projected, audience-bound service-account tokens (the default from 1.21 on) instead of 1.20's Secrets.
  cl_daemon kube-apiserver net "$k/kube-apiserver" --etcd-servers=http://127.0.0.1:2379 \
    --bind-address=0.0.0.0 --secure-port=6443 --insecure-port=0 --advertise-address="$CL_NODE_IP" \
    --tls-cert-file="$p/apiserver.crt" --tls-private-key-file="$p/apiserver.key" --client-ca-file="$p/ca.crt" \
    --kubelet-client-certificate="$p/apiserver-kubelet-client.crt" \
    --kubelet-client-key="$p/apiserver-kubelet-client.key" --kubelet-preferred-address-types=InternalIP \
    --authorization-mode=Node,RBAC --enable-admission-plugins=NodeRestriction \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$p/sa.pub" --service-account-signing-key-file="$p/sa.key" \
    --feature-gates=BoundServiceAccountTokenVolume=true \
    --service-cluster-ip-range="$CL_SVC_CIDR" --allow-privileged=true --profiling=false \
    --audit-policy-file="$s/config/audit-policy.yaml" --audit-log-path="$s/audit.log" --audit-log-format=json \
    --audit-log-mode=blocking
  cl_wait "etcd" 60 cl_net curl -sf --max-time 2 http://127.0.0.1:2379/health || return 1
  cl_wait "kube-apiserver /readyz" 180 cl_api_ready || return 1
  # Insecure and secure ports off: nothing serves but the API server, the kubelet and kube-proxy's healthz.
  cl_daemon kube-controller-manager net "$k/kube-controller-manager" --kubeconfig="$p/controller-manager.conf" \
    --port=0 --secure-port=0 --leader-elect=false --use-service-account-credentials=true \
    --service-account-private-key-file="$p/sa.key" --root-ca-file="$p/ca.crt" \
    --feature-gates=BoundServiceAccountTokenVolume=true --flex-volume-plugin-dir="$s/flex" \
    --controllers='*,-nodeipam,-cloud-node-lifecycle,-service,-route,-attachdetach,-persistentvolume-binder,-persistentvolume-expander,-pv-protection,-pvc-protection,-csrsigning,-csrapproving,-bootstrapsigner,-tokencleaner' \
    --node-monitor-grace-period=60s --profiling=false
  cl_daemon kube-scheduler net "$k/kube-scheduler" --kubeconfig="$p/scheduler.conf" --port=0 --secure-port=0 \
    --leader-elect=false --profiling=false
}

# The node's private mount ns: bind mounts of the state dir over the host paths (made here if missing, and
# removed again by cl_down if this run made them), held open by node_mounts.sh's sleep.
cl_start_node_mounts() {
  local path
  : >"$CL_STATE/made-paths"
  for path in $CL_HOST_PATHS; do
    mkdir -p "$CL_STATE/host$path"
    [[ -e "$path" ]] || { mkdir -p "$path" && echo "$path" >>"$CL_STATE/made-paths"; }
  done
  # shellcheck disable=SC2086 # one argument per path
  setsid unshare --mount --propagation private -- bash "$CL_LIB_DIR/node_mounts.sh" "$CL_STATE" $CL_HOST_PATHS \
    >>"$CL_STATE/log/node_mounts.log" 2>&1 </dev/null &
  echo $! >"$CL_STATE/pids/node_mounts"
  disown $!
  cl_wait "the node's mount namespace" 30 test -e "$CL_STATE/mounts-ready"
}

cl_cgroups() {
  local c
  for c in /sys/fs/cgroup/*/; do
    [[ -e "$c/cgroup.procs" && "$c" != */unified/ ]] && printf '%s\n' "${c%/}"
  done
}

cl_start_node() {
  local s="$CL_STATE" p="$CL_STATE/pki" k="$CL_KUBE/bin" c
  # kubelet wants its cgroupRoot to exist in every hierarchy.
  for c in $(cl_cgroups); do
    mkdir -p "$c/$CL_CGROUP"
    # cpuset: a child starts empty; kubelet's pods need the CPUs and memory nodes.
    if [[ -e "$c/cpuset.cpus" ]]; then
      cat "$c/cpuset.cpus" >"$c/$CL_CGROUP/cpuset.cpus" && cat "$c/cpuset.mems" >"$c/$CL_CGROUP/cpuset.mems"
    fi
  done
  cl_start_node_mounts || return 1
  cl_daemon containerd node containerd --config "$s/config/containerd.toml"
  cl_wait "containerd" 60 cl_ctr version || return 1
  bash "$CL_LIB_DIR/cluster_images.sh" pause "$s" || return 1
  cl_daemon kubelet node "$k/kubelet" --config="$s/config/kubelet.yaml" --kubeconfig="$p/kubelet.conf" \
    --container-runtime=remote --container-runtime-endpoint=unix:///run/containerd/containerd.sock \
    --node-ip="$CL_NODE_IP" --hostname-override="$CL_NODE" --cert-dir="$s/kubelet-pki" \
    --register-node=true --v=1
  cl_daemon kube-proxy node "$k/kube-proxy" --config="$s/config/kube-proxy.yaml"
}

# Records the global sysctls (restored by cl_down) before anything can change them.
cl_save_sysctls() {
  local k
  for k in $CL_SYSCTLS; do printf '%s=%s\n' "$k" "$(sysctl -n "$k")"; done >"$CL_STATE/sysctls"
}

cl_up() {
  local t0=$SECONDS why
  cl_names
  why="$(cl_unavailable)"
  [[ -z "$why" ]] || { echo "$why"; return 77; }
  [[ ! -e "$CL_STATE/up" ]] || cl_down
  [[ -d "$CL_STATE" ]] || cl_clear_orphans || return 1
  mkdir -p "$CL_STATE"/{log,pids,config} || return 1
  cl_save_sysctls && cl_pki && cl_write_configs && cl_network || return 1
  cl_start_control_plane || return 1
  : >"$CL_STATE/up"
  cl_start_node || return 1
  cl_wait "node $CL_NODE Ready" 180 cl_node_ready || return 1
  cl_log "node Ready $((SECONDS - t0)) s after start"
  printf '%s\n' "$((SECONDS - t0))" >"$CL_STATE/node-ready-seconds"
  cl_wait "the default ServiceAccount" 120 cl_default_sa || return 1
  cl_wait "kube-proxy's rules for the kubernetes Service" 60 cl_proxy_ready || return 1
}

# cl_secret NS DIR: the job's ssh Secret "mpi-ssh" in NS as images/k8s/ssh-secret.example.yaml says to make
# it (fresh keys in DIR), with the known_hosts line images/k8s/examples/stock-image.yaml adds.
cl_secret() {
  local ns="$1" d="$2"
  mkdir -p "$d"
  ssh-keygen -q -t ed25519 -N '' -C mpi-job -f "$d/id_ed25519" &&
    ssh-keygen -q -t ed25519 -N '' -C mpi-workers -f "$d/ssh_host_ed25519_key" || return 1
  printf '*,[*]:2222 %s\n' "$(cut -d' ' -f1,2 "$d/ssh_host_ed25519_key.pub")" >"$d/known_hosts"
  cl_kubectl -n "$ns" create secret generic mpi-ssh --from-file=id_ed25519="$d/id_ed25519" \
    --from-file=id_ed25519.pub="$d/id_ed25519.pub" --from-file=ssh_host_ed25519_key="$d/ssh_host_ed25519_key" \
    --from-file=ssh_host_ed25519_key.pub="$d/ssh_host_ed25519_key.pub" --from-file=known_hosts="$d/known_hosts" \
    >/dev/null
}

# cl_overlay NS DIR [PATCH...]: writes into DIR (and prints DIR) a kustomize overlay of images/k8s for NS:
# the images under the tag cluster_images.sh imported them as (a tag other than latest, so the base's
# default pull policy never pulls), and each PATCH file as a strategic-merge patch.
cl_overlay() {
  local ns="$1" d="$2" rel p
  shift 2
  mkdir -p "$d"
  rel="$(realpath --relative-to="$d" "$CL_REPO_DIR/images/k8s")"
  {
    printf 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nnamespace: %s\n' "$ns"
    printf 'bases:\n  - %s\n' "$rel"
    printf 'images:\n  - {name: k8s-agent-worker, newTag: cluster}\n  - {name: k8s-agent-launcher, newTag: cluster}\n'
    if (($#)); then
      printf 'patchesStrategicMerge:\n'
      for p in "$@"; do
        cp "$p" "$d/"
        printf '  - %s\n' "$(basename "$p")"
      done
    fi
  } >"$d/kustomization.yaml"
  printf '%s\n' "$d"
}

# Kills the pids (SIGKILL: the cluster is thrown away, nothing in it needs a clean shutdown) and waits for them
# to go (they are not our children, so there is nothing to reap).
cl_kill() {
  local p i alive
  [[ $# -gt 0 ]] || return 0
  kill -KILL "$@" 2>/dev/null
  for ((i = 0; i < 200; i++)); do
    alive=0
    for p in "$@"; do
      [[ -e "/proc/$p" && "$(awk '/^State:/ {print $2}' "/proc/$p/status" 2>/dev/null)" != Z ]] && alive=1
    done
    ((alive)) || return 0
    sleep 0.05
  done
}

# The daemons' pids (all, or NAME's) that still run what cl_daemon started: each names the state dir on its
# command line, which tells a live daemon from a recycled pid.
cl_daemon_pids() {
  local f p
  for f in "$CL_STATE"/pids/${1:-*}; do
    [[ -f "$f" ]] || continue
    p="$(cat "$f")"
    tr '\0' ' ' 2>/dev/null <"/proc/$p/cmdline" | grep -qF -- "$CL_STATE" && printf '%s\n' "$p"
  done
}

# Every process in the pods' cgroup subtree (containers, pause).
cl_pod_pids() {
  local c
  for c in $(cl_cgroups); do
    [[ -d "$c/$CL_CGROUP" ]] && find "$c/$CL_CGROUP" -name cgroup.procs -exec cat {} + 2>/dev/null
  done | sort -un
}

cl_kill_netns_pids() {
  local pids
  [[ -e "/run/netns/$CL_NETNS" ]] || return 0
  mapfile -t pids < <(ip netns pids "$CL_NETNS" 2>/dev/null)
  cl_kill "${pids[@]}"
}
cl_remove_netns_and_cgroups() {
  local c
  for c in $(cl_cgroups); do
    [[ -d "$c/$CL_CGROUP" ]] && find "$c/$CL_CGROUP" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  [[ ! -e "/run/netns/$CL_NETNS" ]] || ip netns del "$CL_NETNS"
}

# A run killed and its state dir deleted (a CI clone removed and cloned again at the same path) leaves its
# namespace, daemons and pods' cgroup under the names this path derives (cl_names): no other run can own
# them, so they go before a new node takes those names.
cl_clear_orphans() {
  local pids
  mapfile -t pids < <(cl_pod_pids)
  cl_kill "${pids[@]}"
  cl_kill_netns_pids
  cl_remove_netns_and_cgroups
}

cl_down() {
  local k v pids path
  cl_names
  [[ -d "$CL_STATE" ]] || return 0
  # kubelet first, so nothing restarts what is stopped next; then the pods; then every process of the netns
  # (daemons, shims); then the mount namespace's holder.
  mapfile -t pids < <(cl_daemon_pids kubelet)
  cl_kill "${pids[@]}"
  mapfile -t pids < <(cl_pod_pids)
  cl_kill "${pids[@]}"
  cl_kill_netns_pids
  mapfile -t pids < <(cl_daemon_pids)
  cl_kill "${pids[@]}"
  cl_remove_netns_and_cgroups
  if [[ -f "$CL_STATE/sysctls" ]]; then
    while IFS='=' read -r k v; do sysctl -qw "$k=$v" >/dev/null; done <"$CL_STATE/sysctls"
  fi
  if [[ -f "$CL_STATE/made-paths" ]]; then
    while read -r path; do rmdir "$path" 2>/dev/null; done <"$CL_STATE/made-paths"
  fi
  rm -rf --one-file-system "$CL_STATE"
}

# Whether PID is this shell or runs under it (the check's own processes name the state dir too).
cl_ours() {
  local p="$1"
  while [[ -n "$p" && "$p" != 0 && "$p" != 1 ]]; do
    [[ "$p" == "$$" ]] && return 0
    p="$(awk '/^PPid:/ {print $2}' "/proc/$p/status" 2>/dev/null)"
  done
  return 1
}

# What a torn-down cluster left behind, one line each (nothing when clean): processes started from the state
# dir, mounts under it, its netns, its cgroups, changed sysctls (against the file $1 saved before cl_up).
cl_leftovers() {
  local saved="$1" k v c p
  cl_names
  for p in /proc/[0-9]*; do
    cl_ours "${p#/proc/}" && continue
    if tr '\0' ' ' 2>/dev/null <"$p/cmdline" | grep -qF -- "$CL_STATE"; then
      echo "process ${p#/proc/}: $(tr '\0' ' ' <"$p/cmdline" | cut -c1-120)"
    fi
  done
  grep -F -- "$CL_STATE" /proc/self/mountinfo | sed 's/^/mount: /'
  [[ -e "/run/netns/$CL_NETNS" ]] && echo "netns $CL_NETNS"
  for c in $(cl_cgroups); do [[ -d "$c/$CL_CGROUP" ]] && echo "cgroup $c/$CL_CGROUP"; done
  while IFS='=' read -r k v; do
    [[ "$(sysctl -n "$k")" == "$v" ]] || echo "sysctl $k=$(sysctl -n "$k") (was $v)"
  done <"$saved"
  [[ -e "$CL_STATE" ]] && echo "state dir $CL_STATE"
  for p in $CL_HOST_PATHS; do
    [[ -e "$p" ]] && ! grep -qxF "$p" "$saved.paths" && echo "host path $p"
  done
  return 0
}
