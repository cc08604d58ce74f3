#!/bin/bash
# shellcheck disable=SC2016 # single-quoted snippets run inside the pods
# SPDX-License-Identifier: Apache-2.0
# Real-API-server scenarios: the e2e bed (network-namespace pods with real sshd) with a real kube-apiserver
# v1.20.2 + etcd in place of the fake API server (realapi_lib.sh). Pods are real API objects, the bed plays
# the kubelet through pods/status, the agent authenticates with a bound service-account token and is held to
# the project's own Role. Requests are counted from the server's audit log.
#
# usage: realapi.sh --agent PATH SCENARIO     ("list" prints the scenarios)
# Exit: 0 pass, 1 fail, 77 skip (the real server is not built: tests/realapi/apiserver_build.sh ensure).
set -uo pipefail

E2E_AGENT="${K8S_AGENT:-}"
if [[ "${1:-}" == --agent ]]; then
  E2E_AGENT="$(realpath -m "$2")"
  shift 2
fi
E2E_NAME="${1:-}"
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../integration/e2e/e2e_lib.sh
. "$HERE/../integration/e2e/e2e_lib.sh"
# shellcheck source=realapi_lib.sh
. "$HERE/realapi_lib.sh"

SCENARIOS=(r01_ready_pod r02_late_pod r03_late_sshd r04_failed_reason r05_image_pull_backoff
  r06_bare_pod_deleted r07_statefulset_pod_recreated r08_apiserver_restart r09_watch_forbidden
  r10_stale_resource_version r11_hostfile_selector r12_mpirun r13_apiserver_stopped
  r14_jobset_hostnames_200 deploy_dry_run examples_dry_run inject_dry_run)

# The agent runs in the launcher pod with in-cluster credentials (the bound token), -v for the evidence.
start_agent() {
  local tag="$1"
  shift
  start_job "$tag" "$E2E_AGENT" -v --trace "$BED_DIR/trace.jsonl" "$@"
}

# The agent's requests since the mark that name pod HOST (by path or metadata.name field selector).
host_requests() {
  ra_audit_requests | grep -E "/pods/$1(\?| |$)|metadata.name%3D$1(&| |$)"
}
all_requests() {
  step "agent requests since mark:"
  ra_audit_requests | sed 's/^/    /'
}
# At most MAX requests for HOST, and none of them a quorum LIST (a list without resourceVersion reads
# every pod of the namespace from etcd).
expect_requests_at_most() {
  local host="$1" max="$2" n
  n="$(host_requests "$host" | wc -l)"
  ((n <= max)) || fail "$n API requests for $host, expected at most $max: $(host_requests "$host" | tr '\n' ';')"
  step "$n API request(s) for $host (bound $max)"
}
expect_total_requests_at_most() {
  local n
  n="$(ra_audit_requests | wc -l)"
  ((n <= $1)) || fail "$n API requests, expected at most $1"
  step "$n API request(s) in all (bound $1)"
}
expect_no_quorum_list() {
  local q
  q="$(ra_audit_requests | grep -E '^list ' | grep -v 'resourceVersion=')"
  [[ -z "$q" ]] || fail "quorum LIST (no resourceVersion): $(echo "$q" | tr '\n' ';')"
}

# Waits (bounded) until the agent has a watch open on HOST: the wait is then watch-driven, not a race.
wait_agent_watching() {
  local host="$1" deadline=$((SECONDS + 30))
  until [[ $'\n'"$(host_requests "$host")" == *$'\n'"watch "* ]]; do
    ((SECONDS > deadline)) && fail "the agent never watched $host"
    kill -0 "$JOB_PID" 2>/dev/null || fail "the agent exited before watching $host"
    sleep 0.05
  done
  step "agent watches $host"
}

realapi_begin() {
  ra_require
  [[ -x "$E2E_AGENT" ]] || fail "no agent binary (--agent PATH)"
  step "bed up with $1 worker pods, real kube-apiserver $("$RA_CACHE/bin/kube-apiserver" --version)"
  bed_gc
  bed_up "$1" || fail "bed did not come up"
  step "bed ready: $BED_DIR net $(bed_cidr)"
}

# Ready pod: exactly one API call (the GET), then SSH.
r01_ready_pod() {
  realapi_begin 1
  bed_worker_ready w-0 || fail "w-0 not ready"
  ra_audit_mark
  start_agent a w-0 hostname
  wait_job 30
  expect_rc 0
  expect_output '^w-0$'
  expect_trace_path w-0
  all_requests
  expect_requests_at_most w-0 1
  expect_no_quorum_list
  pass
}

# The pod does not exist when the agent starts; it is created (Running, sshd up) while the agent watches.
r02_late_pod() {
  realapi_begin 1
  bed_sshd_start w-0 || fail "sshd w-0"
  ra_audit_mark
  start_agent a w-0 hostname
  wait_agent_watching w-0
  step "create pod w-0 Running"
  bed_worker_phase w-0 Running || fail "creating w-0"
  wait_job 30
  expect_rc 0
  expect_output '^w-0$'
  expect_trace order w-0 pod_running ssh_ready started
  all_requests
  # The lookup by name (nothing), the watch of the pods a Job would label for hostname w-0 (w-0 could be an
  # Indexed Job's hostname), then, a second after that watch was answered, the watch by name and one list of
  # the namespace from the watch cache (an unlabelled pod with that hostname is found by it).
  expect_total_requests_at_most 4
  expect_no_quorum_list
  pass
}

# Running with its IP but sshd not listening yet: the agent keeps probing, then runs the command.
r03_late_sshd() {
  realapi_begin 1
  bed_worker_phase w-0 Running || fail "w-0"
  ra_audit_mark
  start_agent a w-0 hostname
  # After its first refused probe the agent follows the pod by watch.
  wait_agent_watching w-0
  step "sshd w-0 starts"
  bed_sshd_start w-0 || fail "sshd w-0"
  wait_job 30
  expect_rc 0
  expect_output '^w-0$'
  expect_trace_path w-0
  all_requests
  expect_requests_at_most w-0 2
  expect_no_quorum_list
  pass
}

# Pending, then Failed (Evicted) through the status subresource: exit 255 naming pod, phase and reason.
r04_failed_reason() {
  realapi_begin 1
  bed_worker_phase w-0 Pending || fail "w-0"
  ra_audit_mark
  start_agent a w-0 hostname
  wait_agent_watching w-0
  step "w-0 Failed: Evicted"
  bed_pod_set w-0 '{"phase":"Failed","podIP":null,"reason":"Evicted","message":"The node was low on resource: memory."}' ||
    fail "status patch"
  wait_job 20
  expect_rc 255
  expect_output 'k8s-agent: w-0: .*Failed.*Evicted'
  expect_trace grep w-0 failed Evicted
  all_requests
  expect_requests_at_most w-0 2
  expect_no_quorum_list
  pass
}

r05_image_pull_backoff() {
  realapi_begin 1
  bed_worker_phase w-0 Pending || fail "w-0"
  ra_audit_mark
  start_agent a w-0 hostname
  wait_agent_watching w-0
  step "w-0 waiting: ImagePullBackOff"
  bed_worker_phase w-0 Pending '"waitingReason":"ImagePullBackOff","waitingMessage":"Back-off pulling image \"registry.invalid/mpi:nope\""' ||
    fail "status patch"
  wait_job 20
  expect_rc 255
  expect_output 'k8s-agent: w-0: .*ImagePullBackOff'
  expect_trace grep w-0 failed ImagePullBackOff
  all_requests
  expect_requests_at_most w-0 2
  expect_no_quorum_list
  pass
}

# A bare pod (no owner) bound to a node is deleted while the agent waits: the real server sends MODIFIED
# with deletionTimestamp and keeps the pod Terminating (no kubelet confirms it). Nothing will recreate it,
# so the agent must fail at once naming the deletion, while the pod is still Terminating.
r06_bare_pod_deleted() {
  realapi_begin 1
  bed_worker_phase w-0 Pending '"nodeName":"node-a"' || fail "w-0"
  ra_audit_mark
  start_agent a w-0 hostname
  wait_agent_watching w-0
  step "delete pod w-0 (graceful: stays Terminating)"
  bed_pod_delete w-0 || fail "delete"
  wait_job 20
  expect_rc 255
  expect_output 'k8s-agent: w-0: .*[Dd]elet'
  [[ "$(bed_pod_get w-0)" == *'"deletionTimestamp"'* ]] || fail "w-0 was not Terminating any more when the agent ended"
  step "the agent gave up while w-0 was still Terminating"
  expect_trace order w-0 failed
  expect_no_quorum_list
  pass
}

# A StatefulSet's pod (controller ownerReference) Running at its old IP without sshd is deleted (MODIFIED
# with deletionTimestamp, then DELETED when the bed's kubelet finalizes it) and recreated with a new UID and
# a new IP, where sshd answers. The agent must wait through the deletion and follow the new pod.
r07_statefulset_pod_recreated() {
  realapi_begin 1
  local owner old_uid new_uid new_ip
  owner='"ownerReferences":[{"apiVersion":"apps/v1","kind":"StatefulSet","name":"workers","uid":"7d5bf0a4-0000-4000-8000-00000000beef","controller":true,"blockOwnerDeletion":true}]'
  bed_worker_phase w-0 Running "\"nodeName\":\"node-a\",$owner" || fail "w-0"
  old_uid="$(bed_pod_get w-0 | "$BED_PY" -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["uid"])')"
  ra_audit_mark
  start_agent a w-0 hostname
  # After its first refused probe the agent follows the pod by watch.
  wait_agent_watching w-0
  step "delete w-0 (Terminating), then finalize (DELETED)"
  bed_pod_delete w-0 || fail "delete"
  [[ "$(bed_pod_get w-0)" == *'"deletionTimestamp"'* ]] || fail "w-0 not Terminating"
  kill -0 "$JOB_PID" 2>/dev/null || fail "the agent gave up on a Terminating StatefulSet pod"
  ra_pod_finalize w-0 || fail "finalize"
  new_ip="$(bed_worker_readdress w-0)"
  step "recreate w-0 Pending, then Running at $new_ip with sshd"
  bed_worker_phase w-0 Pending "\"nodeName\":\"node-b\",$owner" || fail "recreate"
  new_uid="$(bed_pod_get w-0 | "$BED_PY" -c 'import json,sys; print(json.load(sys.stdin)["metadata"]["uid"])')"
  [[ "$new_uid" != "$old_uid" ]] || fail "the recreated pod kept its UID"
  bed_sshd_start w-0 || fail "sshd w-0"
  bed_worker_phase w-0 Running || fail "w-0 Running"
  wait_job 40
  expect_rc 0
  expect_output '^w-0$'
  expect_trace grep w-0 ssh_ready "$new_ip"
  all_requests
  expect_no_quorum_list
  pass
}

# kube-apiserver restarts while the agent waits on a Pending pod: the watch breaks (HTTP/2 stream reset),
# the restarted server's watch cache is empty (the old resourceVersion may be too old) and RBAC may answer
# 403 for a moment. The agent must ride through and run the command once the pod is ready.
r08_apiserver_restart() {
  realapi_begin 1
  bed_worker_phase w-0 Pending || fail "w-0"
  ra_pods touch "$BED_NS" bump || fail "configmap"
  ra_audit_mark
  start_agent a w-0 hostname
  wait_agent_watching w-0
  step "restart kube-apiserver"
  ra_restart_apiserver || fail "kube-apiserver did not come back"
  kill -0 "$JOB_PID" 2>/dev/null || fail "the agent gave up across the restart: $(tail -n 3 "$JOB_OUT")"
  step "w-0 ready"
  bed_sshd_start w-0 || fail "sshd w-0"
  bed_worker_phase w-0 Running || fail "w-0 Running"
  wait_job 60
  expect_rc 0
  expect_output '^w-0$'
  all_requests
  expect_no_quorum_list
  pass
}

# kube-apiserver stopped (SIGSTOP) under the agent's open watch: its TCP stays up and silent. The real
# server speaks HTTP/2, so the agent's PING goes unanswered and the watch ends before the idle limit
# (--watch-idle-timeout 30s here: a PING after 10 s with nothing read, dead 5 s later; 30 s + 15 s by
# default). The server sends no bookmark within 30 s, so the stop comes right after the first PING: the
# PING path then ends the watch 5-15 s before the idle limit would. After SIGCONT the pod turning Running
# is seen and the command runs.
r13_apiserver_stopped() {
  realapi_begin 1
  bed_worker_phase w-0 Pending || fail "w-0"
  ra_audit_mark
  start_job a "$E2E_AGENT" -vv --watch-idle-timeout 30s w-0 hostname
  wait_agent_watching w-0
  wait_for_lines "$JOB_OUT" "sent an HTTP/2 PING" 1 30
  local pid t0 noticed
  pid="$(cat "$BED_DIR/pids/apiserver.pid")"
  step "SIGSTOP kube-apiserver"
  kill -STOP "$pid"
  t0=$(now_ms)
  local deadline=$((t0 + 40000))
  until grep -q "no answer to an HTTP/2 PING" "$JOB_OUT"; do
    (($(now_ms) > deadline)) && { kill -CONT "$pid"; fail "the stopped server was never noticed"; }
    sleep 0.05
  done
  noticed=$(($(now_ms) - t0))
  kill -CONT "$pid"
  step "noticed in ${noticed} ms; SIGCONT"
  grep -q "watch idle for" "$JOB_OUT" && fail "noticed by the idle limit, not the PING"
  bed_sshd_start w-0 || fail "sshd w-0"
  bed_worker_phase w-0 Running || fail "w-0 Running"
  wait_job 60
  expect_rc 0
  expect_output '^w-0$'
  pass
}

# The Role lacks "watch": the agent fails with a clear RBAC message naming the verb and the Role file (after
# at most its short 403 window), never hangs.
r09_watch_forbidden() {
  realapi_begin 1
  sed 's/verbs: \["list", "watch"\]/verbs: ["list"]/' "$BED_REPO_DIR/images/k8s/role.yaml" >"$BED_DIR/role-nowatch.yaml"
  grep -q 'verbs: \["list"\]$' "$BED_DIR/role-nowatch.yaml" || fail "role.yaml changed shape"
  ra_kubectl apply -f "$BED_DIR/role-nowatch.yaml" >/dev/null || fail "applying the Role"
  [[ "$(ra_kubectl auth can-i watch pods --as "$RA_SA_USER")" == no ]] || fail "watch still allowed"
  bed_worker_phase w-0 Pending || fail "w-0"
  ra_audit_mark
  start_agent a w-0 hostname
  wait_job 30
  expect_rc 255
  expect_output 'k8s-agent: w-0: .*forbidden.*watch'
  expect_output 'images/k8s/role\.yaml'
  all_requests
  [[ $'\n'"$(ra_audit_requests)" == *$'\n'"watch 403 "* ]] || fail "no watch was refused with 403"
  pass
}

# The stale-version case: the pod's own resourceVersion is older than the restarted server's watch cache
# (other objects moved the cluster-wide version since). Watching from the GET's version gets 410; the agent
# must still need at most 2 requests for the host and no quorum LIST.
r10_stale_resource_version() {
  realapi_begin 1
  bed_worker_phase w-0 Pending || fail "w-0"
  local i
  for i in 1 2 3; do ra_pods touch "$BED_NS" "bump-$i" || fail "configmap"; done
  step "restart kube-apiserver: its watch cache starts after w-0's last change"
  ra_restart_apiserver || fail "kube-apiserver did not come back"
  ra_audit_mark
  start_agent a w-0 hostname
  wait_agent_watching w-0
  step "w-0 ready"
  bed_sshd_start w-0 || fail "sshd w-0"
  bed_worker_phase w-0 Running || fail "w-0 Running"
  wait_job 30
  expect_rc 0
  expect_output '^w-0$'
  all_requests
  expect_requests_at_most w-0 2
  expect_no_quorum_list
  pass
}

# Hostfile mode with a label selector: a pod relabelled out of the selector arrives as DELETED and must drop
# out of the count; a new matching pod completes it.
r11_hostfile_selector() {
  realapi_begin 4
  bed_worker_phase w-0 Running || fail "w-0"
  bed_worker_phase w-1 Running || fail "w-1"
  bed_worker_phase w-2 Pending || fail "w-2"
  ra_audit_mark
  start_agent a --hostfile --selector role=worker --wait-for-count 3 --timeout 60s
  until [[ $'\n'"$(ra_audit_requests)" == *$'\n'"watch "* ]]; do
    kill -0 "$JOB_PID" 2>/dev/null || fail "hostfile ended early: $(tr '\n' ';' <"$JOB_OUT")"
    sleep 0.05
  done
  step "agent watches the selector; w-1 relabelled out of it"
  bed_pod_set w-1 '{"labels":{"role":"spare"}}' || fail "relabel"
  step "w-2 Running (2 matching: must not be enough)"
  bed_worker_phase w-2 Running || fail "w-2"
  step "w-3 created Running"
  bed_worker_phase w-3 Running || fail "w-3"
  wait_job 40
  expect_rc 0
  local hosts
  hosts="$(grep -E '^w-[0-9]+' "$JOB_OUT" | awk '{print $1}' | tr '\n' ' ')"
  [[ "$hosts" == "w-0 w-2 w-3 " ]] || fail "hostfile lists '$hosts', expected 'w-0 w-2 w-3'"
  all_requests
  # One LIST for the whole hostfile (not one per pod), then the watch.
  local lists
  lists="$(ra_audit_requests | grep -c '^list ')"
  [[ "$lists" == 1 ]] || fail "$lists LISTs for one hostfile, expected 1"
  pass
}

# A real mpirun across two pods whose objects live in the real server: one request per ready host.
r12_mpirun() {
  realapi_begin 2
  HELLO="$(bed_mpi_hello mpicc)" || fail "mpicc failed"
  bed_all_ready || fail "workers not ready"
  ra_audit_mark
  run_mpirun mpi 40 -H w-0,w-1 -np 2 "$HELLO"
  expect_rc 0
  expect_ranks 2
  expect_rank_hosts 1 w-0 w-1
  expect_trace_path w-0 w-1
  all_requests
  expect_requests_at_most w-0 1
  expect_requests_at_most w-1 1
  expect_no_quorum_list
  expect_no_leftovers 5
  pass
}

# 200 hosts of a JobSet's Indexed Job (Kubeflow Trainer v2's "node" job), named js-node-0-<i>-<random> with
# hostname js-node-0-<i>, subdomain js and the Job controller's labels (1.28+): 200 `--wait-only` agents start
# while the pods are Pending, then the pods turn Running in a 30 s wave. Each host costs the name lookup and
# one watch of the pods labelled for its index (no namespace-wide LIST, no answer larger than its own pod),
# and every agent exits 0. Prints Running -> ssh ready p50/p99 (measured, not asserted). The pods' IPs are the
# bed's 4 workers, each with its real sshd; known_hosts names every host with its worker's key.
R14_HOSTS="${R14_HOSTS:-200}"
R14_WAVE_S="${R14_WAVE_S:-30}"
r14_pod_line() { # r14_pod_line I PHASE
  local ip=null ready=false
  if [[ "$2" == Running ]]; then
    ip="\"$(bed_worker_ip "w-$(($1 % 4))")\""
    ready=true
  fi
  printf 'js-node-0-%d-%05x {"phase":"%s","podIP":%s,"ready":%s,"hostname":"js-node-0-%d","subdomain":"js",%s,%s}\n' \
    "$1" $(($1 * 7919 % 1048576)) "$2" "$ip" "$ready" "$1" \
    '"ownerReferences":[{"apiVersion":"batch/v1","kind":"Job","name":"js-node-0","uid":"0c6f5f8e-1b1e-4d5a-9a54-3a7e0b3b0c01","controller":true}]' \
    "\"labels\":{\"batch.kubernetes.io/job-name\":\"js-node-0\",\"batch.kubernetes.io/job-completion-index\":\"$1\",\"jobset.sigs.k8s.io/jobset-name\":\"js\"}"
}
r14_jobset_hostnames_200() {
  realapi_begin 4
  local i n="$R14_HOSTS" kh="$BED_DIR/ssh/known_hosts_js" ktype kblob deadline
  for ((i = 0; i < 4; i++)); do bed_sshd_start "w-$i" || fail "sshd w-$i"; done
  for ((i = 0; i < n; i++)); do
    read -r ktype kblob _ <"$BED_DIR/sshd/w-$((i % 4))/ssh_host_ed25519_key.pub"
    printf 'js-node-0-%d,js-node-0-%d.js %s %s\n' "$i" "$i" "$ktype" "$kblob"
  done >"$kh"
  step "creating $n Pending pods"
  for ((i = 0; i < n; i++)); do r14_pod_line "$i" Pending; done | ra_pods set-many "$BED_NS" >/dev/null ||
    fail "creating the pods"
  ra_audit_mark
  cp "$HERE/r14_agents.sh" "$BED_DIR/r14_agents.sh"
  : >"$BED_DIR/agents.rc"
  start_job many /bin/sh "$BED_DIR/r14_agents.sh" "$E2E_AGENT" "$kh" "$BED_DIR" "$n"
  deadline=$((SECONDS + 90))
  until (($(ra_audit_requests | grep -c '^watch ') >= n)); do
    ((SECONDS > deadline)) && fail "the agents never all watched: $(ra_audit_requests | cut -d' ' -f1,2 | sort | uniq -c | tr '\n' ';')"
    kill -0 "$JOB_PID" 2>/dev/null || fail "the agents ended before the wave: $(tail -3 "$BED_DIR/agents.err")"
    sleep 0.2
  done
  step "all $n agents watch their pod; the wave: Running over $R14_WAVE_S s"
  for ((i = 0; i < n; i++)); do r14_pod_line "$((i * 37 % n))" Running; done |
    ra_pods set-many "$BED_NS" "$R14_WAVE_S" >"$BED_DIR/running_at" || fail "the wave"
  wait_job 150
  expect_rc 0
  local bad
  bad="$(awk '$2 != 0' "$BED_DIR/agents.rc")"
  [[ -z "$bad" && "$(wc -l <"$BED_DIR/agents.rc")" == "$n" ]] ||
    fail "agents that failed (index rc): $(echo "$bad" | head -5 | tr '\n' ';') $(tail -3 "$BED_DIR/agents.err")"
  ra_audit_requests >"$BED_DIR/requests"
  "$BED_PY" "$HERE/r14_summary.py" "$BED_DIR/requests" "$BED_DIR/running_at" "$BED_DIR/trace.jsonl" "$n" ||
    fail "requests per host or hosts never ready"
  expect_no_quorum_list
  pass
}

# The deploy manifests pass the real server's validation and admission (server-side dry run).
deploy_dry_run() {
  realapi_begin 0
  local out
  # A namespace of its own: nothing there yet, so every object is validated as a create.
  ra_kubectl create namespace mpi >/dev/null || fail "namespace mpi"
  out="$(ra_kubectl apply --dry-run=server -n mpi -k "$BED_REPO_DIR/images/k8s" 2>&1)" ||
    fail "kubectl apply --dry-run=server -k images/k8s: $out"
  printf '    %s\n' "${out//$'\n'/$'\n    '}"
  local kind
  for kind in serviceaccount/mpi-launcher role.rbac.authorization.k8s.io/mpi-launcher-pods \
    rolebinding.rbac.authorization.k8s.io/mpi-launcher-pods statefulset.apps/ job.batch/ service/ configmap/; do
    echo "$out" | grep -q "^$kind.* created (server dry run)" || fail "no server dry run create of $kind"
  done
  pass
}

# Every example in images/k8s/examples passes a server dry run, its operators' kinds given by minimal CRDs
# (tests/realapi/example_crds.yaml: the API server checks kind, version, scope and metadata there, and the
# built-in kinds in full).
examples_dry_run() {
  realapi_begin 0
  local out f
  out="$(ra_kubectl apply -f "$BED_REPO_DIR/tests/realapi/example_crds.yaml" 2>&1)" || fail "CRDs: $out"
  out="$(ra_kubectl wait --for condition=established --timeout 60s crd --all 2>&1)" || fail "CRDs not established: $out"
  ra_kubectl create namespace mpi >/dev/null || fail "namespace mpi"
  for f in "$BED_REPO_DIR"/images/k8s/examples/*.yaml; do
    if [[ ${f##*/} == delivery-image-volume.yaml ]]; then
      # Image volumes are Kubernetes 1.31+; this server is 1.20, whose schema has no Volume.image.
      step "${f##*/}: skipped (image volumes need Kubernetes 1.31+; this API server is 1.20)"
      continue
    fi
    out="$(ra_kubectl apply --dry-run=server -n mpi -f "$f" 2>&1)" ||
      fail "kubectl apply --dry-run=server -f ${f##*/}: $out"
    echo "$out" | grep -q "created (server dry run)" || fail "${f##*/}: no server dry run create: $out"
    step "${f##*/}: $(echo "$out" | grep -c 'created (server dry run)') object(s) pass a server dry run"
  done
  pass
}

# k8s-agent inject's output passes a server dry run: every example with the agent's parts (a second
# injection changes nothing there) and the operators' own samples as they write them (tests/inject/testdata),
# each with --rbac, and --sshd where the workers run the image's sshd; the same minimal CRDs.
inject_dry_run() {
  realapi_begin 0
  local out f mode injected kind validate
  out="$(ra_kubectl apply -f "$BED_REPO_DIR/tests/realapi/example_crds.yaml" 2>&1)" || fail "CRDs: $out"
  out="$(ra_kubectl wait --for condition=established --timeout 60s crd --all 2>&1)" || fail "CRDs not established: $out"
  ra_kubectl create namespace mpi >/dev/null || fail "namespace mpi"
  for f in "$BED_REPO_DIR"/images/k8s/examples/*.yaml "$BED_REPO_DIR"/tests/inject/testdata/*.yaml; do
    [[ ${f##*/} == delivery-image-volume.yaml ]] && continue  # Image volumes: 1.31+ (examples_dry_run).
    for mode in --rbac "--rbac --sshd"; do
      injected="$BED_DIR/injected-${f##*/}"
      # shellcheck disable=SC2086 # mode is one or two options
      "$E2E_AGENT" inject $mode "$f" >"$injected" 2>"$BED_DIR/inject.err" ||
        fail "k8s-agent inject $mode ${f##*/}: $(cat "$BED_DIR/inject.err")"
      # The upstream StatefulSet sample sets minReadySeconds, a StatefulSet field from 1.22 that this 1.20
      # server's schema lacks (kubectl's client-side check refuses it; the server would drop it).
      validate=true
      [[ ${f##*/} == statefulset-web.yaml ]] && validate=false
      out="$(ra_kubectl apply --dry-run=server --validate="$validate" -n mpi -f "$injected" 2>&1)" ||
        fail "k8s-agent inject $mode ${f##*/} | kubectl apply --dry-run=server: $out"
      for kind in serviceaccount/mpi-launcher role.rbac.authorization.k8s.io/ rolebinding.rbac.authorization.k8s.io/; do
        grep -q "^$kind.* created (server dry run)" <<<"$out" ||
          fail "${f##*/} ($mode): no server dry run create of $kind: $out"
      done
    done
    step "${f##*/}: injected (--rbac, --rbac --sshd), $(grep -c 'created (server dry run)' <<<"$out") object(s) pass a server dry run$(
      [[ -s "$BED_DIR/inject.err" ]] && printf '; %s warning(s)' "$(wc -l <"$BED_DIR/inject.err")")"
  done
  pass
}

case "$E2E_NAME" in
list) printf '%s\n' "${SCENARIOS[@]}" ;;
*)
  [[ " ${SCENARIOS[*]} " == *" $E2E_NAME "* ]] || {
    echo "unknown scenario '$E2E_NAME' (list: ${SCENARIOS[*]})" >&2
    exit 2
  }
  "$E2E_NAME"
  ;;
esac
