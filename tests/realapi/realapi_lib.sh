# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# The e2e bed (tests/bed/bed.sh) with a real kube-apiserver + etcd in place of the fake API server.
#
# Source it after e2e_lib.sh (or bed.sh). It redefines the bed's API functions, nothing else:
#   bed_start_apiserver   etcd (loopback of the bed's "apiserver" netns) + kube-apiserver on the same
#                         address the fake server had (https://<net>.3:443, the bed's certificate), TLS,
#                         RBAC, a token file with one admin token (the bed's k8s/token), service-account
#                         token signing, audit log (Metadata). Then the project's own ServiceAccount, Role
#                         and RoleBinding (images/k8s) and a bound token from the TokenRequest API
#                         (`kubectl create token mpi-launcher`) as the launcher pod's service-account token.
#   bed_pod_set / bed_pod_delete / bed_pod_replace / bed_pod_get
#                         the same shorthand as the fake's control API, carried out on real Pod objects by
#                         tests/realapi/realapi_pods.py (the bed plays the kubelet through pods/status).
# New: ra_kubectl ARGS (admin), ra_restart_apiserver, ra_pod_finalize NAME, ra_audit_mark / ra_audit_requests. Needs the cache that apiserver_build.sh builds: ra_require skips (77) with
# the reason when it is missing.

RA_SRC_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
RA_PODS="$RA_SRC_DIR/realapi_pods.py"
RA_SA=mpi-launcher
RA_SA_USER="system:serviceaccount:default:$RA_SA"
RA_CACHE="$("$RA_SRC_DIR/apiserver_build.sh" path)"

# Exits 77 with a printed reason unless the built kube-apiserver is in the cache.
ra_require() {
  if ! "$RA_SRC_DIR/apiserver_build.sh" check; then
    echo "SKIP: real kube-apiserver not built ($RA_CACHE missing or incomplete):" \
      "run 'tests/realapi/apiserver_build.sh ensure' as root (10-35 min cold, cached per machine)"
    exit 77
  fi
}

# A binary of the cached Debian 13 root, with that root's loader and libraries.
ra_root_exec() {
  local r="$RA_CACHE/root" bin="$1"
  shift
  "$r/lib64/ld-linux-x86-64.so.2" --library-path "$r/lib/x86_64-linux-gnu:$r/usr/lib/x86_64-linux-gnu" \
    "$r$bin" "$@"
}

ra_kubectl() {
  ra_root_exec /usr/bin/kubectl --kubeconfig "$BED_DIR/realapi/kubeconfig" --request-timeout 20s "$@"
}

ra_pods() {
  "$BED_PY" "$RA_PODS" --server "$(bed_api_url)" --ca "$BED_DIR/k8s/ca.crt" --token-file "$BED_DIR/k8s/token" "$@"
}

# Keys, token file, audit policy, kubeconfig. The bed made the CA, the serving cert and the admin token.
ra_prepare() {
  local d="$BED_DIR/realapi"
  mkdir -p "$d/etcd"
  chmod 700 "$d/etcd"
  openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$d/sa.key" 2>/dev/null &&
    openssl pkey -in "$d/sa.key" -pubout -out "$d/sa.pub" 2>/dev/null || bed_die "service-account key" || return 1
  printf '%s,admin,admin-uid,system:masters\n' "$(cat "$BED_DIR/k8s/token")" >"$d/tokens.csv"
  # One event when a request arrives and one when it completes (a watch completes when it closes).
  cat >"$d/audit-policy.yaml" <<'EOF'
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [ResponseStarted]
rules:
  - level: Metadata
EOF
  cat >"$d/kubeconfig" <<EOF
apiVersion: v1
kind: Config
clusters:
  - name: bed
    cluster: {server: "$(bed_api_url)", certificate-authority: "$BED_DIR/k8s/ca.crt"}
users:
  - name: admin
    user: {tokenFile: "$BED_DIR/k8s/token"}
contexts:
  - name: bed
    context: {cluster: bed, user: admin, namespace: $BED_NS}
current-context: bed
EOF
}

ra_start_etcd() {
  local d="$BED_DIR/realapi" deadline
  ip netns exec "$(bed_netns apiserver)" "$RA_CACHE/root/lib64/ld-linux-x86-64.so.2" \
    --library-path "$RA_CACHE/root/lib/x86_64-linux-gnu:$RA_CACHE/root/usr/lib/x86_64-linux-gnu" \
    "$RA_CACHE/root/usr/bin/etcd" --name bed --data-dir "$d/etcd" \
    --listen-client-urls http://127.0.0.1:2379 --advertise-client-urls http://127.0.0.1:2379 \
    --listen-peer-urls http://127.0.0.1:2380 --initial-advertise-peer-urls http://127.0.0.1:2380 \
    --initial-cluster bed=http://127.0.0.1:2380 --log-level warn >>"$BED_DIR/log/etcd.log" 2>&1 </dev/null &
  echo $! >"$BED_DIR/pids/etcd.pid"
  deadline=$((SECONDS + 30))
  until ip netns exec "$(bed_netns apiserver)" curl -sf --noproxy '*' --max-time 2 \
    http://127.0.0.1:2379/health 2>/dev/null | grep -q '"health":"true"'; do
    if ! kill -0 "$(cat "$BED_DIR/pids/etcd.pid")" 2>/dev/null || ((SECONDS > deadline)); then
      tail -n 20 "$BED_DIR/log/etcd.log" >&2
      bed_die "etcd did not start"
      return 1
    fi
    sleep 0.1
  done
}

# kube-apiserver in the bed's apiserver netns, on the address and port the fake server used.
ra_start_kube_apiserver() {
  local d="$BED_DIR/realapi" k="$BED_DIR/k8s" deadline
  ip netns exec "$(bed_netns apiserver)" "$RA_CACHE/bin/kube-apiserver" \
    --etcd-servers=http://127.0.0.1:2379 --bind-address=0.0.0.0 --secure-port="$BED_API_PORT" \
    --insecure-port=0 --advertise-address="$(bed_pod_ip apiserver)" --endpoint-reconciler-type=none \
    --tls-cert-file="$k/server.crt" --tls-private-key-file="$k/server.key" --client-ca-file="$k/ca.crt" \
    --token-auth-file="$d/tokens.csv" --authorization-mode=RBAC \
    --service-account-issuer=https://kubernetes.default.svc.cluster.local \
    --service-account-key-file="$d/sa.pub" --service-account-signing-key-file="$d/sa.key" \
    --service-cluster-ip-range=10.233.254.0/24 --profiling=false \
    --audit-policy-file="$d/audit-policy.yaml" --audit-log-path="$d/audit.log" --audit-log-format=json \
    --audit-log-mode=blocking >>"$BED_DIR/log/apiserver.out" 2>&1 </dev/null &
  echo $! >"$BED_DIR/pids/apiserver.pid"
  deadline=$((SECONDS + 120))
  until [[ "$(curl -s --noproxy '*' --max-time 3 --cacert "$k/ca.crt" -o /dev/null -w '%{http_code}' \
    -H "Authorization: Bearer $(cat "$k/token")" "$(bed_api_url)/readyz")" == 200 ]]; do
    if ! kill -0 "$(cat "$BED_DIR/pids/apiserver.pid")" 2>/dev/null || ((SECONDS > deadline)); then
      tail -n 30 "$BED_DIR/log/apiserver.out" >&2
      bed_die "kube-apiserver did not become ready"
      return 1
    fi
    sleep 0.1
  done
}

# Replaces bed.sh's: etcd + kube-apiserver, the project's RBAC objects, the launcher's bound token.
bed_start_apiserver() {
  ra_prepare || return 1
  ra_start_etcd || return 1
  ra_start_kube_apiserver || return 1
  ra_bootstrap
}

ra_bootstrap() {
  local img="$BED_REPO_DIR/images/k8s" token
  local deadline=$((SECONDS + 60))
  # /readyz can answer before the bootstrap controller has made namespace "default"; a ServiceAccount
  # created before then is refused with NotFound.
  until ra_kubectl get namespace default >/dev/null 2>>"$BED_DIR/log/kubectl.log"; do
    ((SECONDS < deadline)) || bed_die "namespace default never appeared" || return 1
    sleep 0.2
  done
  # No controller-manager: the "default" ServiceAccount that admission looks up is ours to make.
  ra_kubectl create serviceaccount default >>"$BED_DIR/log/kubectl.log" 2>&1 ||
    ra_kubectl get serviceaccount default >/dev/null || bed_die "ServiceAccount default" || return 1
  ra_kubectl apply -f "$img/serviceaccount.yaml" -f "$img/role.yaml" -f "$img/rolebinding.yaml" \
    >>"$BED_DIR/log/kubectl.log" 2>&1 || bed_die "applying images/k8s RBAC failed" || return 1
  token="$(ra_kubectl create token "$RA_SA" --duration 2h 2>>"$BED_DIR/log/kubectl.log")" &&
    [[ -n "$token" ]] || bed_die "TokenRequest for $RA_SA failed" || return 1
  # The launcher pod's mounted service-account token and the out-of-cluster agent.conf both use it; the
  # admin token stays in k8s/token for the bed itself.
  printf '%s' "$token" >"$BED_DIR/sa/token"
  sed -i "s|^token-file=.*|token-file=$BED_DIR/sa/token|" "$BED_DIR/agent.conf"
}

# Stops kube-apiserver (etcd keeps the objects) and starts it again; waits for /readyz.
ra_restart_apiserver() {
  bed_kill_pids "$(cat "$BED_DIR/pids/apiserver.pid")"
  ra_start_kube_apiserver
}

bed_pod_set() { ra_pods set "$BED_NS" "$1" "$2"; }
bed_pod_delete() { ra_pods delete "$BED_NS" "$1"; }
ra_pod_finalize() { ra_pods finalize "$BED_NS" "$1"; }
bed_pod_get() { ra_pods get "$BED_NS" "$1"; }
# Deleted (DELETED), then created again under the same name: a new UID, labels/hostname/subdomain kept.
bed_pod_replace() {
  local old
  old="$(bed_pod_get "$1")" || return 1
  ra_pods finalize "$BED_NS" "$1" || return 1
  ra_pods set "$BED_NS" "$1" "$("$BED_PY" -c 'import json, sys
p = json.load(sys.stdin); s = p["spec"]
print(json.dumps({"labels": p["metadata"].get("labels") or {}, "hostname": s.get("hostname"),
                  "subdomain": s.get("subdomain"), "phase": "Pending", "podIP": None}))' <<<"$old")"
}

# Audit log: ra_audit_mark remembers its length; ra_audit_requests prints the agent's requests since then
# as "verb code uri" lines.
ra_audit_mark() { RA_AUDIT_MARK="$(wc -l <"$BED_DIR/realapi/audit.log")"; }
ra_audit_json() {
  "$BED_PY" "$RA_PODS" audit "$BED_DIR/realapi/audit.log" --since-line "${RA_AUDIT_MARK:-0}" --user "$RA_SA_USER"
}
ra_audit_requests() {
  ra_audit_json | "$BED_PY" -c 'import json, sys
for r in json.load(sys.stdin)["requests"]:
    print(r["verb"], r["code"], r["uri"])'
}
