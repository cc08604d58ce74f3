#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# End-to-end test bed: Kubernetes pods simulated as network namespaces with real sshd and a fake API server.
#
# Source it (`. tests/bed/bed.sh`) and call bed_up / bed_* / bed_down, or use the CLI:
#   bed.sh up [N]        bring up a bed with N worker pods (all Running + sshd), print its state dir
#   bed.sh down DIR      tear down the bed in DIR
#   bed.sh status [DIR]  show beds (all under /tmp when DIR is omitted)
#   bed.sh exec DIR CMD  run CMD inside the bed's launcher pod
#   bed.sh gc            tear down beds whose owner process is gone
#
# Layout of one bed (id = 4 hex digits, chosen at random):
#   bridge kab<id> holding 10.233.X.1/22 (G1: the root namespace reaches the pods on-link, never via the
#   default route); netns kab<id>-<pod> for launcher (offset 2), apiserver (3), w-0.. (10+i, alternate
#   522+i) in that /22 (bed_addr); eth0 inside, lo up, no default route;
#   /etc/netns/kab<id>-<pod>/{hosts,resolv.conf} (DNS goes nowhere).
#   Every pod process runs in its own UTS + mount namespace: hostname = pod name, tmpfs on /run holding the
#   service-account files at /run/secrets/kubernetes.io/serviceaccount, and the bed's home dir on /root
#   (~/.ssh with key, known_hosts, config; no ~/.bashrc: G2). The host's files are never touched.
# State lives in $BED_DIR (default /tmp/k8s-agent-bed.XXXXXX); `state` there names everything bed_down removes.

BED_SRC_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BED_REPO_DIR="$(cd "$BED_SRC_DIR/../.." && pwd)"
BED_PY=/usr/bin/python3 # Debian's python: the PATH one may be a pyenv without dist-packages.
BED_NS=default           # Kubernetes namespace of all pods.
BED_SUBDOMAIN=workers    # Headless-service name: FQDN w-1.workers.default.svc.cluster.local.
BED_API_PORT=443         # kubernetes.default.svc:443, as in a real cluster.
: "${BED_FAKE_APISERVER:=$BED_REPO_DIR/tests/fake_apiserver/fake_apiserver.py}"
: "${BED_CACHE:=/tmp/k8s-agent-bed-cache}"

bed_log() { [[ "${BED_QUIET:-0}" == 1 ]] || printf '[bed %s] %s\n' "$(date +%H:%M:%S.%3N)" "$*" >&2; }
bed_die() {
  printf '[bed] FATAL: %s\n' "$*" >&2
  return 1
}

# Worker pod name of index I (valid DNS-1123 label, like a StatefulSet pod).
bed_worker_name() { printf 'w-%d' "$1"; }
bed_worker_index() { printf '%d' "${1#w-}"; }
bed_worker_fqdn() { printf '%s.%s.%s.svc.cluster.local' "$1" "$BED_SUBDOMAIN" "$BED_NS"; }
bed_netns() { printf '%s-%s' "$BED_PREFIX" "$1"; }

# The pod network of a bed is one 10.233.X.0/22 (BED_NET = "10.233.X", X a multiple of 4), so that a bed of
# 256 workers and more fits: a /24 held at most ~100 workers, their alternate IPs and the launcher.
# Offsets in it: 1 bridge, 2 launcher, 3 apiserver, 10+i worker w-i (lower half), BED_OFF_ALT+i the IP a
# recreated w-i moves to (upper half, so it never meets a primary), hence at most BED_MAX_WORKERS workers.
BED_PREFIXLEN=22
BED_OFF_WORKER=10
BED_OFF_ALT=522
BED_MAX_WORKERS=500
# bed_addr OFF [VAR]: the address at offset OFF (0..1023) of the bed's /22, 10.233.(X + OFF/256).(OFF%256).
# Prints it, or with VAR assigns it there without a subshell (per-worker loops: a fork costs ~10 ms on the
# 2-core CI VM).
bed_addr() {
  local _ba_off="$1" _ba_x="${BED_NET##*.}" _ba_ip
  if ! [[ "$_ba_off" =~ ^[0-9]+$ ]] || ((_ba_off >= 1 << (32 - BED_PREFIXLEN))); then
    bed_die "offset '$_ba_off' outside the bed's /$BED_PREFIXLEN"
    return 1
  fi
  printf -v _ba_ip '%s.%d.%d' "${BED_NET%.*}" $((_ba_x + _ba_off / 256)) $((_ba_off % 256))
  if [[ -n "${2:-}" ]]; then
    printf -v "$2" '%s' "$_ba_ip"
  else
    printf '%s' "$_ba_ip"
  fi
}
# The bed's pod network as a CIDR, e.g. for log lines.
bed_cidr() { printf '%s.0/%d' "$BED_NET" "$BED_PREFIXLEN"; }
# Primary pod IP of a pod; bed_pod_alt_ip gives the IP a recreated worker gets.
bed_pod_ip() {
  case "$1" in
  launcher) bed_addr 2 ;;
  apiserver) bed_addr 3 ;;
  w-*) bed_addr $((BED_OFF_WORKER + $(bed_worker_index "$1"))) ;;
  *) return 1 ;;
  esac
}
bed_pod_alt_ip() { bed_addr $((BED_OFF_ALT + $(bed_worker_index "$1"))); }
bed_api_url() { printf 'https://%s:%s' "$(bed_pod_ip apiserver)" "$BED_API_PORT"; }

# Loads the variables of the bed in DIR (for the CLI and for scripts that did not create the bed).
bed_load() {
  BED_DIR="$1"
  [[ -f "$BED_DIR/state" ]] || bed_die "no bed state in $BED_DIR" || return 1
  # shellcheck disable=SC1091
  . "$BED_DIR/state"
}

# Picks a free, aligned 10.233.X.0/22 (X = 4..248 in steps of 4; 10.233.252-255 is left to tests/realapi's
# service range and host IP): no local address and no route inside it. Prints "10.233.X". Caller holds the
# /tmp lock. Routes are matched by their first three octets as well as by `root`, which also catches a
# narrower one a bed of the older /24 layout made inside the /22.
bed_pick_subnet() {
  local seed=$((16#$BED_ID)) i x octets addrs routes
  addrs="$(ip -o -4 addr show)"
  routes="$(ip -4 route list)"
  for ((i = 0; i < 62; i++)); do
    x=$((((seed + i) % 62 + 1) * 4))
    octets="($x|$((x + 1))|$((x + 2))|$((x + 3)))"
    if grep -qE " 10\.233\.$octets\." <<<"$addrs" || grep -qE "^10\.233\.$octets\." <<<"$routes" ||
      [[ -n "$(ip -4 route list root "10.233.$x.0/$BED_PREFIXLEN")" ]]; then
      continue
    fi
    printf '10.233.%d' "$x"
    return 0
  done
  bed_die "no free 10.233.X.0/$BED_PREFIXLEN"
}

bed_record() { printf '%s=%q\n' "$1" "$2" >>"$BED_DIR/state"; }

# Creates one netns per pod ("POD IP VETHSUFFIX" lines on stdin): veth eth0 on the bridge, lo up, per-pod
# hosts/resolv.conf. Batched (`ip -batch`) because a bed of 16 workers otherwise costs ~100 ip calls.
bed_make_netns() {
  local pod ip sfx ns veth root_batch='' pods=() hosts
  hosts="$(<"$BED_DIR/hosts")"$'\n'
  while read -r pod ip sfx; do
    ns="$BED_PREFIX-$pod"
    veth="kav${BED_ID}$sfx"
    echo "$ns" >>"$BED_DIR/netns.list"
    echo "$veth" >>"$BED_DIR/links.list"
    echo "/etc/netns/$ns" >>"$BED_DIR/etcdirs.list"
    root_batch+="netns add $ns"$'\n'"link add $veth type veth peer name eth0 netns $ns"$'\n'
    root_batch+="link set $veth master $BED_BRIDGE up"$'\n'
    pods+=("$ns $ip")
  done
  printf '%s' "$root_batch" | ip -batch - || bed_die "creating pod namespaces failed" || return 1
  for pod in "${pods[@]}"; do
    read -r ns ip <<<"$pod"
    printf 'addr add %s/%d dev eth0\nlink set eth0 up\nlink set lo up\n' "$ip" "$BED_PREFIXLEN" | ip -n "$ns" -batch - &&
      mkdir -p "/etc/netns/$ns" && printf '%s' "$hosts" >"/etc/netns/$ns/hosts" &&
      printf 'nameserver 127.0.0.1\noptions timeout:1 attempts:1\n' >"/etc/netns/$ns/resolv.conf" ||
      bed_die "configuring $ns failed" || return 1
  done
}

bed_make_certs() {
  local k="$BED_DIR/k8s" api_ip
  api_ip="$(bed_pod_ip apiserver)"
  mkdir -p "$k" "$BED_DIR/sa"
  (
    cd "$k" &&
      openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 \
        -subj /CN=bed-ca -keyout ca.key -out ca.crt &&
      openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -subj /CN=kube-apiserver \
        -keyout server.key -out server.csr &&
      printf 'subjectAltName=IP:%s,IP:127.0.0.1,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local,DNS:localhost\nextendedKeyUsage=serverAuth\n' \
        "$api_ip" >san.ext &&
      openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 -extfile san.ext \
        -out server.crt
  ) >/dev/null 2>&1 || bed_die "certificate generation failed" || return 1
  printf 'bed-token-%s' "$(openssl rand -hex 12)" >"$k/token"
  cp "$k/ca.crt" "$k/token" "$BED_DIR/sa/"
  printf '%s' "$BED_NS" >"$BED_DIR/sa/namespace"
  # Out-of-cluster style config for the agent (K8S_AGENT_CONFIG) and kubectl flags.
  printf 'server=%s\ntoken-file=%s\ncertificate-authority=%s\nnamespace=%s\n' \
    "$(bed_api_url)" "$k/token" "$k/ca.crt" "$BED_NS" >"$BED_DIR/agent.conf"
}

# User key, one host key per worker, known_hosts under every name and IP the agent may check.
bed_make_ssh() {
  local s="$BED_DIR/ssh" i name
  mkdir -p "$s" "$BED_DIR/home/.ssh" "$BED_DIR/home-bare"
  chmod 700 "$s" "$BED_DIR/home/.ssh"
  local keygens=() p
  ssh-keygen -q -t ed25519 -N '' -C k8s-agent-bed -f "$s/id_ed25519" &
  keygens+=($!)
  for ((i = 0; i < BED_WORKERS; i++)); do
    mkdir -p "$BED_DIR/sshd/w-$i"
    ssh-keygen -q -t ed25519 -N '' -C "w-$i" -f "$BED_DIR/sshd/w-$i/ssh_host_ed25519_key" &
    keygens+=($!)
  done
  for p in "${keygens[@]}"; do wait "$p" || bed_die "ssh-keygen failed" || return 1; done
  cp "$s/id_ed25519.pub" "$s/authorized_keys"
  # No subshells in this loop: a fork costs ~10 ms on the 2-core CI VM.
  local ktype kblob fq ip alt
  for ((i = 0; i < BED_WORKERS; i++)); do
    name="w-$i"
    fq="$name.$BED_SUBDOMAIN.$BED_NS.svc.cluster.local"
    bed_addr $((BED_OFF_WORKER + i)) ip && bed_addr $((BED_OFF_ALT + i)) alt || return 1
    read -r ktype kblob _ <"$BED_DIR/sshd/$name/ssh_host_ed25519_key.pub"
    printf '%s,%s.%s,%s.%s.%s.svc,%s,%s,%s %s %s\n' "$name" "$name" "$BED_SUBDOMAIN" "$name" "$BED_SUBDOMAIN" \
      "$BED_NS" "$fq" "$ip" "$alt" "$ktype" "$kblob"
    bed_write_sshd_config "$name"
  done >"$s/known_hosts"
  # The pods' ~/.ssh (like a mounted Secret): default key, known_hosts, config with strict checking.
  cp "$s/id_ed25519" "$s/id_ed25519.pub" "$s/known_hosts" "$BED_DIR/home/.ssh/"
  printf 'Host *\n  User root\n  IdentityFile ~/.ssh/id_ed25519\n  UserKnownHostsFile ~/.ssh/known_hosts\n  StrictHostKeyChecking yes\n  BatchMode yes\n  LogLevel ERROR\n' \
    >"$BED_DIR/home/.ssh/config"
  # For plain ssh -F: absolute paths, plus name -> IP maps so ssh itself can stand in for the agent.
  {
    for ((i = 0; i < BED_WORKERS; i++)); do
      bed_addr $((BED_OFF_WORKER + i)) ip || return 1
      printf 'Host w-%d w-%d.%s.%s.svc.cluster.local\n  HostName %s\n' $i $i "$BED_SUBDOMAIN" "$BED_NS" "$ip"
    done
    printf 'Host *\n  User root\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  GlobalKnownHostsFile /dev/null\n  StrictHostKeyChecking yes\n  BatchMode yes\n  LogLevel ERROR\n' \
      "$s/id_ed25519" "$s/known_hosts"
  } >"$s/ssh_config"
  # The same settings as ssh-style options, accepted by both ssh and k8s-agent.
  printf -- '-i %s -o UserKnownHostsFile=%s -o StrictHostKeyChecking=yes -o BatchMode=yes\n' \
    "$s/id_ed25519" "$s/known_hosts" >"$s/agent_opts"
}

bed_write_sshd_config() {
  local name="$1" d="$BED_DIR/sshd/$1"
  printf '%s\n' 'Port 22' 'ListenAddress 0.0.0.0' "HostKey $d/ssh_host_ed25519_key" "PidFile $d/sshd.pid" \
    'PermitRootLogin prohibit-password' 'PubkeyAuthentication yes' 'PasswordAuthentication no' \
    'KbdInteractiveAuthentication no' 'UsePAM no' 'StrictModes no' \
    "AuthorizedKeysFile $BED_DIR/ssh/authorized_keys" 'UseDNS no' 'PrintMotd no' 'PrintLastLog no' \
    'MaxStartups 200:30:400' 'MaxSessions 200' >"$d/sshd_config"
}

# Shell prologue run inside a pod's fresh UTS + mount namespace: hostname, private /run with the
# service-account files, the bed's home on /root. Positional: $1 pod name, $2 bed dir, $3 home dir.
# shellcheck disable=SC2016
BED_POD_PROLOGUE='set -e
hostname "$1"
mount -t tmpfs -o mode=755,size=16m bedrun /run
mkdir -p /run/sshd /run/secrets/kubernetes.io/serviceaccount
mount --bind "$2/sa" /run/secrets/kubernetes.io/serviceaccount
mount -o remount,bind,ro /run/secrets/kubernetes.io/serviceaccount
mount --bind "$3" /root
cd /
'

# BED_CHROOT=DIR (optional) runs the pod's processes (sshd, launcher commands) inside the root file system DIR,
# like a container image (used for Open MPI 5 from a Debian 13 root: tests/bed/ompi5_root.sh). The same
# per-pod view is built under DIR in the pod's private mount namespace, so nothing is mounted on the host and
# the mounts vanish with the pod's last process: /proc, /sys (the netns' own), /dev, a private tmpfs on /tmp
# and /run, the service-account files, the bed's home on /root, the pod's /etc/hosts and resolv.conf, and
# the bed dir at its own path (the agent, the MPI program and the logs live there). BED_CHROOT_BINDS="SRC=DST
# ..." adds bind mounts (DST inside DIR; no spaces in paths), e.g. a preset file over the image's own.
# shellcheck disable=SC2016
BED_CHROOT_PROLOGUE='set -e
hostname "$1"
mount -t proc bedproc "$R/proc"
mount --rbind /sys "$R/sys"
mount --rbind /dev "$R/dev"
mount -t tmpfs -o mode=1777,size=256m bedtmp "$R/tmp"
mount -t tmpfs -o mode=755,size=16m bedrun "$R/run"
mkdir -p "$R/run/sshd" "$R/run/secrets/kubernetes.io/serviceaccount" "$R$2"
mount --bind "$2/sa" "$R/run/secrets/kubernetes.io/serviceaccount"
mount -o remount,bind,ro "$R/run/secrets/kubernetes.io/serviceaccount"
mount --bind "$3" "$R/root"
mount --bind "$2" "$R$2"
mount --bind /etc/hosts "$R/etc/hosts"
mount --bind /etc/resolv.conf "$R/etc/resolv.conf"
for b in $BINDS; do mount --bind "${b%%=*}" "$R${b#*=}"; done
cd /
'

# The `sh -c` script of a pod process: the prologue for the current mode, then the shell words PRE, then
# `exec CMD` (CMD a shell snippet; $1.. are the prologue's positional parameters), inside BED_CHROOT if set.
# shellcheck disable=SC2016 # the snippets are expanded by the pod's sh
bed_pod_script() {
  if [[ -z "${BED_CHROOT:-}" ]]; then
    printf '%s%s\nexec %s' "$BED_POD_PROLOGUE" "$1" "$2"
  else
    printf 'R=%q\nBINDS=%q\n%s%s\nexec chroot "$R" %s' "$BED_CHROOT" "${BED_CHROOT_BINDS:-}" \
      "$BED_CHROOT_PROLOGUE" "$1" "$2"
  fi
}

bed_start_apiserver() {
  local ns log="$BED_DIR/log/apiserver.log" out="$BED_DIR/log/apiserver.out" deadline
  [[ -f "$BED_FAKE_APISERVER" ]] || bed_die "fake API server missing: $BED_FAKE_APISERVER" || return 1
  ns="$(bed_netns apiserver)"
  ip netns exec "$ns" "$BED_PY" "$BED_FAKE_APISERVER" --bind 0.0.0.0 --port "$BED_API_PORT" \
    --cert "$BED_DIR/k8s/server.crt" --key "$BED_DIR/k8s/server.key" --token-file "$BED_DIR/k8s/token" \
    --log "$log" >>"$out" 2>&1 </dev/null &
  echo $! >"$BED_DIR/pids/apiserver.pid"
  deadline=$((SECONDS + 10))
  until grep -q '^READY' "$out" 2>/dev/null; do
    if ! kill -0 "$(cat "$BED_DIR/pids/apiserver.pid")" 2>/dev/null || ((SECONDS > deadline)); then
      cat "$out" >&2
      bed_die "fake API server did not start"
      return 1
    fi
    sleep 0.02
  done
}

# bed_up N: the whole bed with N worker netns (not yet registered as pods, sshd not started).
# The launcher pod is registered Running. Installs a teardown trap unless BED_NO_TRAP=1.
bed_up() {
  local n="${1:-2}" i name lockfd ip
  [[ $EUID -eq 0 ]] || bed_die "the bed needs root (network namespaces)" || return 1
  [[ "$n" =~ ^[0-9]+$ ]] || bed_die "bed_up: worker count '$n' is not a number" || return 1
  ((n <= BED_MAX_WORKERS)) ||
    bed_die "bed_up: $n workers do not fit the bed's /$BED_PREFIXLEN (at most $BED_MAX_WORKERS)" || return 1
  BED_WORKERS="$n"
  BED_DIR="${BED_DIR:-$(mktemp -d /tmp/k8s-agent-bed.XXXXXX)}"
  mkdir -p "$BED_DIR"/{pids,log,run}
  : >"$BED_DIR/state"
  : >"$BED_DIR/netns.list"
  : >"$BED_DIR/links.list"
  : >"$BED_DIR/etcdirs.list"
  BED_ID="$(openssl rand -hex 2)"
  BED_PREFIX="kab$BED_ID"
  BED_BRIDGE="kab$BED_ID"
  bed_record BED_DIR "$BED_DIR"
  bed_record BED_OWNER_PID "${BED_OWNER:-$$}" # "none": a CLI bed that gc must leave alone
  bed_record BED_ID "$BED_ID"
  bed_record BED_PREFIX "$BED_PREFIX"
  bed_record BED_BRIDGE "$BED_BRIDGE"
  bed_record BED_WORKERS "$BED_WORKERS"
  [[ "${BED_NO_TRAP:-0}" == 1 ]] || bed_install_trap
  # Subnet choice and bridge address under one lock so two beds never pick overlapping subnets.
  exec {lockfd}</tmp
  flock -w 30 "$lockfd" || bed_die "bed lock busy" || return 1
  BED_NET="$(bed_pick_subnet)" || {
    exec {lockfd}<&-
    return 1
  }
  bed_record BED_NET "$BED_NET"
  echo "$BED_BRIDGE" >>"$BED_DIR/links.list"
  # G1: the subnet goes on the bridge before any process starts.
  ip link add "$BED_BRIDGE" type bridge && ip addr add "$(bed_addr 1)/$BED_PREFIXLEN" dev "$BED_BRIDGE" &&
    ip link set "$BED_BRIDGE" up
  local rc=$?
  exec {lockfd}<&-
  ((rc == 0)) || bed_die "bridge $BED_BRIDGE failed" || return 1
  {
    printf '127.0.0.1 localhost\n%s launcher\n%s apiserver\n' "$(bed_pod_ip launcher)" "$(bed_pod_ip apiserver)"
    printf '%s kubernetes kubernetes.default kubernetes.default.svc kubernetes.default.svc.cluster.local\n' \
      "$(bed_pod_ip apiserver)"
  } >"$BED_DIR/hosts"
  bed_make_certs || return 1
  bed_make_ssh || return 1
  {
    echo "launcher $(bed_pod_ip launcher) l"
    echo "apiserver $(bed_pod_ip apiserver) a"
    for ((i = 0; i < n; i++)); do
      bed_addr $((BED_OFF_WORKER + i)) ip || return 1
      echo "w-$i $ip $i"
    done
  } | bed_make_netns || return 1
  for ((i = 0; i < n; i++)); do
    bed_addr $((BED_OFF_WORKER + i)) ip || return 1
    echo "$ip" >"$BED_DIR/run/w-$i.ip"
  done
  bed_start_apiserver || return 1
  bed_pod_set launcher "{\"phase\":\"Running\",\"podIP\":\"$(bed_pod_ip launcher)\",\"hostname\":\"launcher\",\"labels\":{\"role\":\"launcher\"},\"ready\":true}" ||
    return 1
  bed_log "up: $BED_DIR net $(bed_cidr) prefix $BED_PREFIX workers $n"
}

bed_install_trap() {
  trap 'bed_down' EXIT
  trap 'bed_down; trap - INT; kill -INT $$' INT
  trap 'bed_down; trap - TERM; kill -TERM $$' TERM
}

# Control API of the fake apiserver, from the root namespace over the bridge (on-link: G1).
bed_api() {
  local method="$1" path="$2" data="${3:-}" token api_ip
  read -r token <"$BED_DIR/k8s/token" || [[ -n "$token" ]]
  local args=(-sS --fail-with-body --noproxy '*' --max-time 5 --cacert "$BED_DIR/k8s/ca.crt"
    -H "Authorization: Bearer $token" -X "$method")
  [[ -n "$data" ]] && args+=(-H 'Content-Type: application/json' --data "$data")
  bed_addr 3 api_ip || return 1
  curl "${args[@]}" "https://$api_ip:$BED_API_PORT$path"
}
bed_pod_set() { bed_api PUT "/_control/pods/$BED_NS/$1" "$2" >/dev/null; }
bed_pod_delete() { bed_api DELETE "/_control/pods/$BED_NS/$1" >/dev/null; }
bed_pod_replace() { bed_api POST "/_control/replace/$BED_NS/$1" "${2:-}" >/dev/null; }
bed_pod_get() { bed_api GET "/api/v1/namespaces/$BED_NS/pods/$1"; }

# Current IP of worker NAME (it changes when bed_worker_readdress moves it).
bed_worker_ip() {
  local ip
  read -r ip <"$BED_DIR/run/$1.ip" && printf '%s' "$ip"
}

# Registers worker NAME in the API: phase PHASE (Pending: no IP) plus optional extra JSON fields. Workers are
# a StatefulSet's pods (controller ownerReference), which is what lets the agent wait for a recreated one.
bed_worker_phase() {
  local name="$1" phase="$2" extra="${3:-}" ip='null' ready=false addr
  if [[ "$phase" != Pending ]]; then
    read -r addr <"$BED_DIR/run/$name.ip"
    ip="\"$addr\""
  fi
  [[ "$phase" == Running && -f "$(bed_sshd_pidfile "$name")" ]] && ready=true
  bed_pod_set "$name" "{\"phase\":\"$phase\",\"podIP\":$ip,\"hostname\":\"$name\",\"subdomain\":\"$BED_SUBDOMAIN\",\"labels\":{\"role\":\"worker\"},\"owner\":\"StatefulSet/w\",\"ready\":$ready${extra:+,$extra}}"
}

# A fully ready worker: sshd listening, pod Running with its IP.
bed_worker_ready() {
  bed_sshd_start "$1" && bed_worker_phase "$1" Running
}
bed_all_ready() {
  local i
  for ((i = 0; i < BED_WORKERS; i++)); do bed_sshd_spawn "w-$i" || return 1; done
  for ((i = 0; i < BED_WORKERS; i++)); do
    bed_sshd_wait "w-$i" && bed_worker_phase "w-$i" Running || return 1
  done
}
bed_workers_list() {
  local i sep='' out=''
  for ((i = 0; i < BED_WORKERS; i++)); do
    out+="$sep$(bed_worker_name $i)"
    sep=,
  done
  printf '%s' "$out"
}

# Moves worker NAME's netns to its alternate IP (for "recreated with a new IP"); prints the new IP.
bed_worker_readdress() {
  local name="$1" ns old new
  ns="$(bed_netns "$name")"
  old="$(bed_worker_ip "$name")"
  new="$(bed_pod_alt_ip "$name")"
  [[ "$old" == "$new" ]] && new="$(bed_pod_ip "$name")"
  ip -n "$ns" addr del "$old/$BED_PREFIXLEN" dev eth0
  ip -n "$ns" addr add "$new/$BED_PREFIXLEN" dev eth0
  echo "$new" >"$BED_DIR/run/$name.ip"
  printf '%s' "$new"
}

# A worker pod's main process is the bed's sshd, or BED_SSHD_CMD when set: a shell snippet run (exec'd) in
# the pod after the prologue, with $1 pod name, $2 bed dir, $3 home, $4 the bed's sshd_config for the pod,
# e.g. an image's entrypoint. It must write its pid (the pod process's own: exec all the way) to
# BED_SSHD_PIDFILE ("{pod}" stands for the pod name) once it accepts connections; default: the bed's sshd
# and its pid file. Both are read when a worker starts, so a scenario sets them before bed_sshd_start.
bed_sshd_pidfile() {
  local p="$BED_DIR/sshd/{pod}/sshd.pid"
  [[ -n "${BED_SSHD_PIDFILE:-}" ]] && p="$BED_SSHD_PIDFILE"
  printf '%s' "${p//\{pod\}/$1}"
}

# Starts worker NAME's sshd (own UTS+mount ns, hostname = NAME) and waits until it listens.
bed_sshd_start() {
  bed_sshd_spawn "$1" && bed_sshd_wait "$1"
}

bed_sshd_spawn() {
  local name="$1" d="$BED_DIR/sshd/$1" pidfile
  pidfile="$(bed_sshd_pidfile "$name")"
  [[ -f "$pidfile" ]] && kill -0 "$(cat "$pidfile")" 2>/dev/null && return 0
  rm -f "$pidfile"
  # shellcheck disable=SC2016 # expanded by the pod's sh
  ip netns exec "$(bed_netns "$name")" unshare --uts --mount --propagation private \
    sh -c "$(bed_pod_script : "${BED_SSHD_CMD:-/usr/sbin/sshd -D -e -f \"\$4\"}")" sh "$name" "$BED_DIR" "$BED_DIR/home" \
    "$d/sshd_config" >>"$BED_DIR/log/sshd-$name.log" 2>&1 </dev/null &
  echo $! >"$BED_DIR/pids/sshd-$name.pid"
}

# sshd -D writes its PidFile after binding the listener: the file appearing means "accepting".
# A pod that dies fails at once; a live one gets BED_SSHD_START_S (30) seconds: an image entrypoint
# (a shell entrypoint of many processes before sshd) takes several seconds on a loaded machine.
bed_sshd_wait() {
  local name="$1" pid deadline pidfile
  pid="$(cat "$BED_DIR/pids/sshd-$name.pid")"
  pidfile="$(bed_sshd_pidfile "$name")"
  deadline=$((SECONDS + ${BED_SSHD_START_S:-30}))
  until [[ -s "$pidfile" ]]; do
    if ! kill -0 "$pid" 2>/dev/null || ((SECONDS > deadline)); then
      tail -5 "$BED_DIR/log/sshd-$name.log" >&2
      if kill -0 "$pid" 2>/dev/null; then
        bed_die "sshd of $name did not start (no $pidfile after ${BED_SSHD_START_S:-30}s)"
      else
        bed_die "sshd of $name did not start (its pod process exited)"
      fi
      return 1
    fi
    sleep 0.01
  done
}

bed_sshd_stop() {
  local name="$1" f="$BED_DIR/pids/sshd-$1.pid"
  [[ -f "$f" ]] || return 0
  bed_kill_pids "$(cat "$f")"
  rm -f "$f" "$(bed_sshd_pidfile "$name")"
}

# Runs CMD inside the launcher pod: netns, hostname "launcher", in-cluster credentials and env, cwd
# $BED_CWD (default the bed dir, which every pod sees: G10). With BED_EXEC=1 the calling shell execs it,
# and every step execs in place, so the caller's pid becomes CMD's pid.
# BED_LAUNCHER_HOME=bare gives the launcher a home without ~/.ssh (settings must come from options).
bed_exec_launcher() {
  local home="$BED_DIR/home" cmd
  [[ "${BED_LAUNCHER_HOME:-}" == bare ]] && home="$BED_DIR/home-bare"
  # shellcheck disable=SC2016 # expanded by the pod's sh
  cmd=(ip netns exec "$(bed_netns launcher)" unshare --uts --mount --propagation private
    sh -c "$(bed_pod_script 'c="$4"; shift 4' '/bin/sh -c '\''cd "$1"; shift; exec "$@"'\'' sh "$c" "$@"')" sh launcher "$BED_DIR" "$home" "${BED_CWD:-$BED_DIR}" "$@")
  if [[ "${BED_EXEC:-0}" == 1 ]]; then
    KUBERNETES_SERVICE_HOST="$(bed_pod_ip apiserver)" KUBERNETES_SERVICE_PORT="$BED_API_PORT" HOME=/root exec "${cmd[@]}"
  fi
  KUBERNETES_SERVICE_HOST="$(bed_pod_ip apiserver)" KUBERNETES_SERVICE_PORT="$BED_API_PORT" HOME=/root "${cmd[@]}"
}

# Host-side veth of pod NAME (its eth0's peer on the bridge), e.g. to cut the pod off the network.
bed_pod_link() {
  case "$1" in
  launcher) printf 'kav%sl' "$BED_ID" ;;
  apiserver) printf 'kav%sa' "$BED_ID" ;;
  w-*) printf 'kav%s%d' "$BED_ID" "$(bed_worker_index "$1")" ;;
  *) return 1 ;;
  esac
}
# Takes pod NAME's link down or up (STATE): packets to and from the pod are dropped, sockets stay open,
# as when a node drops off the network.
bed_pod_link_set() {
  ip link set "$(bed_pod_link "$1")" "$2"
}

# Runs CMD inside worker NAME's network namespace (no sshd involved), e.g. for probes.
bed_exec_worker() {
  local name="$1"
  shift
  ip netns exec "$(bed_netns "$name")" "$@"
}

# Pids of every process inside the bed's namespaces, excluding the bed's own daemons when $1 = user.
bed_netns_pids() {
  local ns
  while read -r ns; do
    # A stale bed may have lost some of its namespaces already.
    [[ -n "$ns" ]] && { ip netns pids "$ns" 2>/dev/null || true; }
  done <"$BED_DIR/netns.list"
}

# Lists "ns pid comm" of processes in worker/launcher pods other than sshd listeners and the apiserver:
# what must be gone after a job (orted, k8s-agent, ranks, ssh sessions).
bed_leftovers() {
  local ns pid comm daemons=" "
  for f in "$BED_DIR"/pids/*.pid; do [[ -f "$f" ]] && daemons+="$(cat "$f") "; done
  while read -r ns; do
    [[ -n "$ns" ]] || continue
    for pid in $(ip netns pids "$ns" 2>/dev/null); do
      [[ "$daemons" == *" $pid "* ]] && continue
      comm="$(cat "/proc/$pid/comm" 2>/dev/null)" || continue
      # A zombie sshd session child awaiting reaping is not a live leftover (G11).
      [[ "$(awk '/^State:/{print $2}' "/proc/$pid/status" 2>/dev/null)" == Z ]] && continue
      printf '%s %s %s\n' "${ns#"$BED_PREFIX"-}" "$pid" "$comm"
    done
  done <"$BED_DIR/netns.list"
}

# Waits up to SECONDS for bed_leftovers to become empty; prints what is left on failure.
bed_wait_no_leftovers() {
  local limit="${1:-5}" deadline left
  deadline=$(($(date +%s%N) / 1000000 + limit * 1000))
  while true; do
    left="$(bed_leftovers)"
    [[ -z "$left" ]] && return 0
    (($(date +%s%N) / 1000000 > deadline)) && break
    sleep 0.05
  done
  printf '%s\n' "$left"
  return 1
}

# TERM, then KILL after up to 2 s, for the given pids.
bed_kill_pids() {
  local pids=() p i
  for p in "$@"; do kill -0 "$p" 2>/dev/null && pids+=("$p"); done
  ((${#pids[@]})) || return 0
  kill -TERM "${pids[@]}" 2>/dev/null
  for ((i = 0; i < 100; i++)); do
    local alive=0
    for p in "${pids[@]}"; do
      if kill -0 "$p" 2>/dev/null && [[ "$(awk '/^State:/{print $2}' "/proc/$p/status" 2>/dev/null)" != Z ]]; then
        alive=1
      fi
    done
    ((alive)) || break
    sleep 0.02
  done
  kill -KILL "${pids[@]}" 2>/dev/null || true
  # Reap our own children so no zombie keeps a namespace busy.
  # || true: wait returns the child's own status (143 after TERM), which must not end a set -e caller.
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  return 0
}

# Tears down everything this bed made. Idempotent; safe from a trap.
bed_down() {
  local f pids=() ns link d
  [[ -n "${BED_DIR:-}" && -f "$BED_DIR/state" ]] || return 0
  trap - EXIT INT TERM
  for f in "$BED_DIR"/pids/*.pid; do [[ -f "$f" ]] && pids+=("$(cat "$f")"); done
  # shellcheck disable=SC2207
  pids+=($(bed_netns_pids)) # G11: anything else still inside our namespaces
  bed_kill_pids "${pids[@]}"
  # shellcheck disable=SC2207
  pids=($(bed_netns_pids))
  if ((${#pids[@]})); then kill -KILL "${pids[@]}" 2>/dev/null || true; fi
  # Each step tolerates what is already gone: a stale bed (bed_gc) may be half torn down.
  while read -r ns; do [[ -n "$ns" ]] && { ip netns del "$ns" 2>/dev/null || true; }; done <"$BED_DIR/netns.list"
  while read -r link; do
    [[ -n "$link" ]] && ip link show "$link" >/dev/null 2>&1 && { ip link del "$link" 2>/dev/null || true; }
  done <"$BED_DIR/links.list"
  while read -r d; do [[ "$d" == /etc/netns/"$BED_PREFIX"-* ]] && rm -rf "$d"; done <"$BED_DIR/etcdirs.list"
  rmdir /etc/netns 2>/dev/null || true
  if [[ "${BED_KEEP:-0}" == 1 ]]; then
    bed_log "down; kept $BED_DIR (BED_KEEP=1)"
    mv "$BED_DIR/state" "$BED_DIR/state.down"
  else
    rm -rf "$BED_DIR"
  fi
  BED_DIR=
  return 0
}

# Human-readable bed status.
bed_status() {
  local name
  echo "bed $BED_DIR: net $(bed_cidr) bridge $BED_BRIDGE workers $BED_WORKERS owner $BED_OWNER_PID"
  while read -r ns; do
    [[ -n "$ns" ]] || continue
    printf '  %-24s %-16s pids: %s\n' "$ns" "$(ip -n "$ns" -4 -o addr show dev eth0 2>/dev/null | awk '{print $4}')" \
      "$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')"
  done <"$BED_DIR/netns.list"
  for name in launcher $(bed_workers_list | tr , ' '); do
    bed_pod_get "$name" 2>/dev/null | "$BED_PY" -c 'import json,sys
try: p=json.load(sys.stdin)
except Exception: sys.exit(0)
s=p.get("status",{}); print("  pod %-10s %-9s %s" % (p["metadata"]["name"], s.get("phase"), s.get("podIP")))' || true
  done
}

# Compiles tests/bed/mpi_hello.c with COMPILER (mpicc / mpicc.mpich) into the cache; prints the binary path.
bed_mpi_hello() {
  local cc="${1:-mpicc}" src="$BED_SRC_DIR/mpi_hello.c" key out
  key="$(sha256sum <"$src" | cut -c1-12)"
  out="$BED_CACHE/mpi_hello.$cc.$key"
  if [[ ! -x "$out" ]]; then
    mkdir -p "$BED_CACHE"
    "$cc" -O2 -o "$out.tmp.$$" "$src" || bed_die "$cc failed" || return 1
    mv "$out.tmp.$$" "$out"
  fi
  printf '%s' "$out"
}

# A copy of the k8s-agent binary AGENT that runs inside a foreign root file system (BED_CHROOT), under
# $BED_DIR/portable-agent (visible in every chroot pod at the same path). The default build is static but for
# glibc, so the binary itself is copied and runs on the root's glibc. A build linked against more of this
# host's libraries (the sanitizer build: libasan, libubsan) gets them and the host's dynamic loader copied
# too, and a /bin/sh wrapper execs the loader with --library-path. Prints the path to run.
bed_portable_agent() {
  local agent="$1" d="$BED_DIR/portable-agent" line lib loader=''
  mkdir -p "$d/lib" || return 1
  if ! ldd "$agent" | awk '{print $1}' | grep -qvE '^(linux-vdso\.so\.1|libc\.so\.6|libm\.so\.6|/lib64/ld-linux-x86-64\.so\.2)$'; then
    cp "$agent" "$d/k8s-agent" || return 1
    printf '%s' "$d/k8s-agent"
    return 0
  fi
  cp "$agent" "$d/k8s-agent.bin" || return 1
  while read -r line; do
    case "$line" in
    *' => /'*)
      lib="${line#* => }"
      lib="${lib%% (*}"
      cp -L "$lib" "$d/lib/" || return 1
      ;;
    /*)
      loader="${line%% (*}"
      cp -L "$loader" "$d/lib/" || return 1
      loader="$d/lib/$(basename "$loader")"
      ;;
    esac
  done < <(ldd "$agent")
  [[ -n "$loader" ]] || bed_die "no dynamic loader in ldd $agent" || return 1
  printf '#!/bin/sh\n# k8s-agent with its own (host) loader and libraries.\nexec %s --library-path %s --argv0 k8s-agent %s "$@"\n' \
    "$loader" "$d/lib" "$d/k8s-agent.bin" >"$d/k8s-agent"
  chmod 755 "$d/k8s-agent"
  printf '%s' "$d/k8s-agent"
}

# Tears down beds whose owning script died without cleaning up (e.g. killed by a test timeout).
# Beds made by `bed.sh up` (owner "none") are left alone.
bed_gc() {
  local d
  for d in /tmp/k8s-agent-bed.*/; do
    [[ -f "$d/state" ]] || continue
    (
      bed_load "${d%/}" && [[ "$BED_OWNER_PID" != none ]] && ! kill -0 "$BED_OWNER_PID" 2>/dev/null &&
        bed_log "gc: removing stale bed $BED_DIR" && bed_down
    )
  done
  return 0
}

bed_main() {
  local verb="${1:-}"
  shift || true
  case "$verb" in
  up)
    BED_NO_TRAP=1
    BED_OWNER=none
    set -e
    trap 'bed_down' ERR
    bed_up "${1:-2}"
    bed_all_ready
    trap - ERR
    echo "$BED_DIR"
    ;;
  down) bed_load "$1" && bed_down ;;
  status)
    if [[ -n "${1:-}" ]]; then
      bed_load "$1" && bed_status
    else
      for d in /tmp/k8s-agent-bed.*/; do [[ -f "$d/state" ]] && (bed_load "${d%/}" && bed_status); done
    fi
    ;;
  exec)
    bed_load "$1" && shift && bed_exec_launcher "$@"
    ;;
  gc) bed_gc ;;
  *)
    echo "usage: bed.sh up [N] | down DIR | status [DIR] | exec DIR CMD... | gc" >&2
    return 2
    ;;
  esac
}

if [[ "${BASH_SOURCE[0]}" == "$0" ]]; then
  bed_main "$@"
fi
