# shellcheck shell=bash
# SPDX-License-Identifier: Apache-2.0
# The cluster tier's scenarios: real pods, real kubelet statuses, the agent in a launcher pod with the token
# the kubelet projected. Each runs in a Kubernetes namespace of its own (deleted at the end, not waited for:
# kubelet 1.20's deletes take 4-60 s) and asserts what the agent did: its exit, its output and trace, and
# its requests in the API server's audit log. Sourced by cluster.sh (cl_* from cluster_lib.sh; fail and
# skip from tests/lib/testlib.sh, fail showing cs_dump).
#
#   c01_kustomize_job     kubectl apply -k images/k8s + the Secret: the launcher Job's mpirun runs a rank on
#                         every StatefulSet worker
#   c02_launcher_first    the launcher runs while the workers do not exist yet, then are ContainerCreating;
#                         the launch report (text and SVG) from the real pods' timestamps
#   c03_worker_recreated  a worker deleted while the agent waits is recreated by the StatefulSet controller
#                         with a new IP and UID: the agent follows it
#   c04_job_retry         a Job pod with spec.hostname fails once; the agent uses the live replacement, which
#                         has the same hostname, never the Failed pod
#   c05_fail_fast         ErrImageNeverPull and a crash-looping worker fail at once with the real reason;
#                         a pod whose sidecar crash-loops while sshd answers still launches
#   c06_tree_spawn        4 workers, Open MPI 4 tree spawn at radix 1 with '='-bearing plm_rsh_args: agents
#                         in the workers, with their own projected tokens, launch the rest
#   c07_stock_image       workers and launcher from an unchanged image with Open MPI 5 and no OpenSSH: the
#                         delivery image's init container gives them the agent and the sshd
#   c08_ompi5_tree_stock  the same example with 4 workers under Open MPI 5 tree spawn (radix 2, then 1):
#                         PRRTE cuts its plm_ssh_args at '=', the workers' agents complete them
#   c09_mpijob_ompi5_tree the MPIJob stock example as mpi-operator v2beta1 sets it up, Open MPI 5 tree spawn
#   c10_any_uid           the stock example as OpenShift's restricted-v2 runs it: uid 1000680000 with no passwd
#                         entry, group 0, no capabilities; then the error on an image whose passwd is 0644
#   c11_overlapping_replacement  a terminating Job pod (still Running, sshd answering) and its replacement with
#                         the same hostname: the agent passes over the dying pod and runs on the replacement
#   c12_injected_mpijob   an MPIJob as mpi-operator's samples write it, through k8s-agent inject --rbac --sshd
#                         and the operator's controller, on the stock image: a rank on each worker
#   c13_trainer_mpi       images/k8s/examples/trainer-v2.yaml as Kubeflow Trainer v2's MPI runtime and JobSet
#                         set it up: ranks on the node pods, found by the Indexed Jobs' labels; then a stock
#                         image runtime under Open MPI 5 with PR #4029's PRTE env, tree spawn at radix 1

CS_IMG="$CL_REPO_DIR/images/k8s"
CS_BED_PODS="$CL_REPO_DIR/tests/realapi/realapi_pods.py"

cs_step() { printf '[%s %s] %s\n' "$CS_NAME" "$(date +%H:%M:%S)" "$*"; }
cs_k() { cl_kubectl -n "$CS_NS" "$@"; }

# What a failing scenario shows: its pods, events and every container's log.
cs_dump() {
  local pod
  echo "--- pods"
  cs_k get pods -o wide 2>&1
  echo "--- events"
  cs_k get events --sort-by=.lastTimestamp 2>&1 | tail -n 30
  for pod in $(cs_k get pods -o name 2>/dev/null); do
    echo "--- logs $pod"
    cs_k logs "$pod" --all-containers --tail 40 2>&1
  done
}
# fail's evidence.
on_fail() { cs_dump; }

# cs_until WHAT SECONDS CMD...: polls CMD (the cluster's state, every 0.25 s) until it succeeds.
cs_until() {
  local what="$1" limit="$2" deadline
  shift 2
  deadline=$((SECONDS + limit))
  until "$@" >/dev/null 2>&1; do
    ((SECONDS < deadline)) || fail "$what: not within ${limit} s"
    sleep 0.25
  done
}

cs_jsonpath() { cs_k get "$1" -o "jsonpath=$2" 2>/dev/null; }
cs_job_finished() { [[ -n "$(cs_jsonpath "job/$1" '{.status.succeeded}{.status.failed}')" ]]; }
cs_has_ip() { [[ -n "$(cs_jsonpath "pod/$1" '{.status.podIP}')" ]]; }
cs_pod_running() { [[ "$(cs_jsonpath "pod/$1" '{.status.phase}')" == Running ]]; }

cs_secret() { cl_secret "$CS_NS" "$CS_WORK/keys" || fail "creating the Secret mpi-ssh"; }

# The base's ServiceAccount, Role and RoleBinding only (the scenarios that bring their own workloads).
cs_rbac() {
  cs_k apply -f "$CS_IMG/serviceaccount.yaml" -f "$CS_IMG/role.yaml" -f "$CS_IMG/rolebinding.yaml" >/dev/null ||
    fail "applying the base's RBAC"
}

cs_overlay() { cl_overlay "$CS_NS" "$CS_WORK/overlay"; }

# The agent's requests (audit log, user system:serviceaccount:NS:mpi-launcher) as "verb code source uri".
cs_agent_requests() {
  "$CL_PY" "$CS_BED_PODS" audit "$CL_STATE/audit.log" --user "system:serviceaccount:$CS_NS:mpi-launcher" |
    "$CL_PY" -c 'import json, sys
for r in json.load(sys.stdin)["requests"]:
    print(r["verb"], r["code"], r["source"], r["uri"])'
}

cs_agent_watching() { cs_agent_requests | grep -q '^watch '; }

# A launcher Job running CMD (a shell line) in the launcher image with the job's keys, the agent's env.
cs_launcher_job() {
  local name="$1" cmd="$2" selector="$3"
  cat <<EOF | cs_k apply -f - >/dev/null || fail "creating Job $name"
apiVersion: batch/v1
kind: Job
metadata: {name: $name}
spec:
  backoffLimit: 0
  template:
    metadata: {labels: {app.kubernetes.io/name: $name}}
    spec:
      serviceAccountName: mpi-launcher
      restartPolicy: Never
      securityContext: {runAsUser: 1000, runAsGroup: 1000, runAsNonRoot: true, fsGroup: 1000}
      containers:
        - name: launcher
          image: k8s-agent-launcher:cluster
          env:
            - {name: K8S_AGENT_NAMESPACE, value: $CS_NS}
            - {name: K8S_AGENT_SELECTOR, value: "$selector"}
            - {name: K8S_AGENT_TIMEOUT, value: 10m}
            - {name: OMPI_MCA_plm_rsh_agent, value: k8s-agent}
          args: ["bash", "-c", $(printf '%s' "$cmd" | "$CL_PY" -c 'import json, sys; print(json.dumps(sys.stdin.read()))')]
          volumeMounts: [{name: ssh-secret, mountPath: /etc/ssh-secret, readOnly: true}]
      volumes: [{name: ssh-secret, secret: {secretName: mpi-ssh, defaultMode: 0440}}]
EOF
}

# cs_wait_job NAME SECONDS: until the Job finished; prints its pod's log to CS_WORK/NAME.log; fails unless
# it succeeded (cs_wait_job_any: either way).
cs_wait_job_any() {
  cs_until "Job $1 to finish" "$2" cs_job_finished "$1"
  cs_k logs "job/$1" >"$CS_WORK/$1.log" 2>&1
}
cs_wait_job() {
  cs_wait_job_any "$@"
  [[ "$(cs_jsonpath "job/$1" '{.status.succeeded}')" == 1 ]] || {
    cat "$CS_WORK/$1.log"
    fail "Job $1 failed"
  }
}

# A StatefulSet of N workers from the base's manifest, with PATCH applied by kubectl patch afterwards.
cs_workers() {
  local replicas="$1"
  { cs_k apply -f "$CS_IMG/service.yaml" >/dev/null &&
    sed -e 's|image: k8s-agent-worker:[^ ]*|image: k8s-agent-worker:cluster|' \
      -e "s|replicas: 2|replicas: $replicas|" "$CS_IMG/worker-statefulset.yaml" >"$CS_WORK/workers.yaml" &&
    grep -q "replicas: $replicas" "$CS_WORK/workers.yaml" && grep -q ':cluster' "$CS_WORK/workers.yaml"; } ||
    fail "the worker StatefulSet's manifest changed: $CS_IMG/worker-statefulset.yaml"
}

cs_run() {
  CS_NAME="$1"
  CS_NS="$(printf '%s' "$1" | tr '_' '-')"
  CS_WORK="$CL_STATE/work/$1"
  declare -F "$1" >/dev/null || { echo "unknown scenario $1" >&2; exit 2; }
  rm -rf "$CS_WORK"
  mkdir -p "$CS_WORK"
  cl_kubectl delete namespace "$CS_NS" --ignore-not-found --wait=true >/dev/null 2>&1
  cl_kubectl create namespace "$CS_NS" >/dev/null || fail "creating namespace $CS_NS"
  cs_until "ServiceAccount default in $CS_NS" 60 cs_k get serviceaccount default
  "$1"
  cl_kubectl delete namespace "$CS_NS" --wait=false >/dev/null 2>&1
  echo "ok: $CS_NAME"
}

c01_kustomize_job() {
  local overlay n
  cs_secret
  overlay="$(cs_overlay)"
  cs_step "kubectl apply -k (base images/k8s, tag cluster)"
  cs_k apply -k "$overlay" >"$CS_WORK/apply.log" 2>&1 || { cat "$CS_WORK/apply.log"; fail "kubectl apply -k"; }
  cs_wait_job mpi-launcher 240
  cat "$CS_WORK/mpi-launcher.log"
  for n in 0 1; do grep -qx "mpi-worker-$n" "$CS_WORK/mpi-launcher.log" || fail "no rank ran on mpi-worker-$n"; done
  # The token: projected by the kubelet (a serviceAccountToken volume source), not a Secret.
  [[ -n "$(cs_jsonpath "pod/$(cs_jsonpath pods '{.items[?(@.metadata.labels.app\.kubernetes\.io/name=="mpi-launcher")].metadata.name}')" \
    '{.spec.volumes[*].projected.sources[*].serviceAccountToken.path}')" ]] ||
    fail "the launcher pod has no projected service-account token"
  cs_agent_requests >"$CS_WORK/requests"
  grep -q '^list 200 ' "$CS_WORK/requests" || { cat "$CS_WORK/requests"; fail "no LIST of pods by the agent in the audit log"; }
  grep -v ' 200 ' "$CS_WORK/requests" && fail "the agent had requests refused (above)"
  cs_step "agent's requests: $(awk '{print $1}' "$CS_WORK/requests" | sort | uniq -c | tr -s ' \n' ' ')"
}

# mpirun over the two workers with the agents' trace, then --report (text, and the SVG's size) in the log.
# shellcheck disable=SC2016 # expanded by the launcher pod's shell
CS_MPIRUN_REPORT='export K8S_AGENT_TRACE=/tmp/trace.jsonl
mpirun -H mpi-worker-0,mpi-worker-1 -n 2 hostname
rc=$?
echo "== report"
k8s-agent --report --svg /tmp/launch.svg /tmp/trace.jsonl
echo "== svg $(wc -c </tmp/launch.svg) bytes, $(grep -c "<svg" /tmp/launch.svg) svg elements"
exit $rc'

c02_launcher_first() {
  local n
  cs_secret
  cs_rbac
  cs_launcher_job launcher "$CS_MPIRUN_REPORT" app.kubernetes.io/name=mpi-worker
  cs_until "the launcher pod Running" 120 cs_pod_running "$(cs_jsonpath pods '{.items[0].metadata.name}')"
  # The agent is waiting on pods that do not exist yet: its LIST came back empty, and it watches.
  cs_until "the agent's watch on the missing workers" 60 cs_agent_watching
  cs_step "launcher Running, agents waiting; now the workers"
  cs_workers 2
  cs_k apply -f "$CS_WORK/workers.yaml" >/dev/null || fail "creating the workers"
  cs_wait_job launcher 240
  cat "$CS_WORK/launcher.log"
  for n in 0 1; do grep -qx "mpi-worker-$n" "$CS_WORK/launcher.log" || fail "no rank ran on mpi-worker-$n"; done
  # Real kubelet statuses: the report's scheduling and container phases come from the pods' own timestamps.
  { grep -q 'scheduling' "$CS_WORK/launcher.log" && grep -q 'container' "$CS_WORK/launcher.log"; } ||
    fail "the report has no scheduling and container phases"
  grep -q 'waited: ContainerCreating' "$CS_WORK/launcher.log" ||
    fail "the agents never saw a worker ContainerCreating (the trace's waiting reasons)"
  grep -qE '^== svg [0-9]+ bytes, 1 svg elements' "$CS_WORK/launcher.log" || fail "no SVG chart"
}

# A one-line agent run in a launcher Job: k8s-agent -v HOST CMD..., its log in CS_WORK/NAME.log.
cs_agent_job() {
  local name="$1" selector="$2"
  shift 2
  cs_launcher_job "$name" "k8s-agent -v $*" "$selector"
}

c03_worker_recreated() {
  local old_uid old_ip new_uid new_ip
  cs_secret
  cs_rbac
  cs_workers 1
  # The worker is held in its init container (Pending, with an IP) until the scenario deletes it; OnDelete,
  # so the controller makes the replacement from the new template only when the old pod is gone.
  cs_k patch --local -f "$CS_WORK/workers.yaml" --type=json -o yaml -p '[
    {"op": "add", "path": "/spec/updateStrategy", "value": {"type": "OnDelete"}},
    {"op": "add", "path": "/spec/template/spec/terminationGracePeriodSeconds", "value": 2},
    {"op": "add", "path": "/spec/template/spec/initContainers", "value": [
      {"name": "gate", "image": "k8s-agent-worker:cluster", "command": ["sleep", "3600"]}]}]' \
    >"$CS_WORK/gated.yaml" || fail "kubectl patch --local"
  cs_k apply -f "$CS_WORK/gated.yaml" >/dev/null || fail "creating the workers"
  cs_until "mpi-worker-0 in its init container with an IP" 120 cs_has_ip mpi-worker-0
  old_uid="$(cs_jsonpath pod/mpi-worker-0 '{.metadata.uid}')"
  old_ip="$(cs_jsonpath pod/mpi-worker-0 '{.status.podIP}')"
  cs_agent_job agent app.kubernetes.io/name=mpi-worker mpi-worker-0 hostname
  cs_until "the agent's watch on mpi-worker-0" 120 cs_agent_watching
  cs_step "agent waiting on mpi-worker-0 ($old_ip, $(cs_jsonpath pod/mpi-worker-0 '{.status.phase}')); deleting it"
  cs_k patch statefulset mpi-worker --type=json -p '[{"op": "remove", "path": "/spec/template/spec/initContainers"}]' \
    >/dev/null || fail "patching the StatefulSet"
  cs_k delete pod mpi-worker-0 --wait=false >/dev/null || fail "deleting mpi-worker-0"
  cs_wait_job agent 240
  cat "$CS_WORK/agent.log"
  grep -qx mpi-worker-0 "$CS_WORK/agent.log" || fail "the command did not run on mpi-worker-0"
  new_uid="$(cs_jsonpath pod/mpi-worker-0 '{.metadata.uid}')"
  new_ip="$(cs_jsonpath pod/mpi-worker-0 '{.status.podIP}')"
  [[ -n "$new_uid" && "$new_uid" != "$old_uid" ]] || fail "mpi-worker-0 was not recreated (uid $new_uid)"
  [[ "$new_ip" != "$old_ip" ]] || fail "the replacement has the old IP $old_ip: nothing to follow"
  cs_step "followed: $old_ip (uid ${old_uid:0:8}) -> $new_ip (uid ${new_uid:0:8})"
}

c04_job_retry() {
  local failed
  cs_secret
  cs_rbac
  mkdir -p "$CS_WORK/marker"
  chmod 777 "$CS_WORK/marker"
  # The first attempt exits 1 (the marker on the node's disk tells the retry); the retry runs the worker.
  cat <<EOF | cs_k apply -f - >/dev/null || fail "creating the workers' Job"
apiVersion: v1
kind: Service
metadata: {name: w}
spec: {clusterIP: None, selector: {job-name: w}, ports: [{name: ssh, port: 2222}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: w}
spec:
  backoffLimit: 3
  template:
    spec:
      hostname: w0
      subdomain: w
      restartPolicy: Never
      securityContext: {runAsUser: 1000, runAsGroup: 1000, runAsNonRoot: true, fsGroup: 1000}
      containers:
        - name: worker
          image: k8s-agent-worker:cluster
          command: ["bash", "-c", "if [[ ! -e /marker/tried ]]; then : >/marker/tried; exit 1; fi; exec k8s-agent-sshd"]
          volumeMounts:
            - {name: marker, mountPath: /marker}
            - {name: ssh-secret, mountPath: /etc/ssh-secret, readOnly: true}
      volumes:
        - {name: marker, hostPath: {path: "$CS_WORK/marker", type: Directory}}
        - {name: ssh-secret, secret: {secretName: mpi-ssh, defaultMode: 0440}}
EOF
  cs_until "the first attempt Failed" 120 cs_failed_pod
  failed="$(cs_failed_pod)"
  cs_step "attempt 1 ($failed) Failed; the agent asks for w0"
  cs_agent_job agent job-name=w w0 hostname
  cs_wait_job agent 240
  cat "$CS_WORK/agent.log"
  grep -qx w0 "$CS_WORK/agent.log" || fail "the command did not run on w0"
  [[ "$(cs_jsonpath "pod/$failed" '{.status.phase}')" == Failed ]] || fail "the Failed pod $failed is gone"
  grep -q "matches 2 pods" "$CS_WORK/agent.log" && fail "the agent refused the two pods named w0"
  cs_step "ran on the replacement; $failed (Failed, hostname w0) passed over"
}
cs_failed_pod() {
  local p
  p="$(cs_jsonpath pods '{.items[?(@.status.phase=="Failed")].metadata.name}')"
  [[ -n "$p" ]] && printf '%s\n' "$p"
}

# A StatefulSet NAME of one pod with the job's keys and CONTAINERS (a YAML list, indented 8).
cs_sts() {
  local name="$1" containers="$2"
  cat <<EOF | cs_k apply -f - >/dev/null || fail "creating StatefulSet $name"
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: $name}
spec:
  serviceName: $name
  replicas: 1
  selector: {matchLabels: {app: $name}}
  template:
    metadata: {labels: {app: $name}}
    spec:
      securityContext: {runAsUser: 1000, runAsGroup: 1000, runAsNonRoot: true, fsGroup: 1000}
      volumes: [{name: ssh-secret, secret: {secretName: mpi-ssh, defaultMode: 0440}}]
      containers:
$containers
EOF
}

cs_sidecar_backoff() {
  [[ "$(cs_jsonpath pod/sidecar-0 '{.status.containerStatuses[?(@.name=="sidecar")].state.waiting.reason}')" == \
    CrashLoopBackOff ]]
}

c05_fail_fast() {
  local c
  cs_secret
  cs_rbac
  cs_sts absent '        - {name: worker, image: "k8sa.local/absent:1", imagePullPolicy: Never}'
  cs_sts crashing '        - {name: worker, image: "k8s-agent-worker:cluster", command: ["bash", "-c", "exit 3"]}'
  cs_sts sidecar '        - name: worker
          image: k8s-agent-worker:cluster
          volumeMounts: [{name: ssh-secret, mountPath: /etc/ssh-secret, readOnly: true}]
        - {name: sidecar, image: "k8s-agent-worker:cluster", command: ["bash", "-c", "exit 4"]}'
  cs_agent_job a-absent app=absent absent-0 true
  cs_agent_job a-crashing app=crashing crashing-0 true
  # The sidecar's agent starts only once the sidecar is in CrashLoopBackOff, a fatal reason on its own.
  cs_until "sidecar-0's sidecar in CrashLoopBackOff" 120 cs_sidecar_backoff
  cs_agent_job a-sidecar app=sidecar sidecar-0 hostname
  for c in absent crashing; do
    cs_wait_job_any "a-$c" 240
    cat "$CS_WORK/a-$c.log"
    [[ "$(cs_jsonpath "job/a-$c" '{.status.failed}')" == 1 ]] || fail "the agent for $c-0 did not fail"
    # Exit 255, the agent's own failure (bash ran the agent last, so its status is the container's).
    [[ "$(cs_k get pods -l "job-name=a-$c" \
      -o jsonpath='{.items[0].status.containerStatuses[0].state.terminated.exitCode}')" == 255 ]] ||
      fail "the agent's exit status for $c-0 is not 255"
  done
  { grep -q "ErrImageNeverPull" "$CS_WORK/a-absent.log" && grep -q "absent-0" "$CS_WORK/a-absent.log"; } ||
    fail "no ErrImageNeverPull naming absent-0"
  { grep -q "CrashLoopBackOff" "$CS_WORK/a-crashing.log" && grep -q "crashing-0" "$CS_WORK/a-crashing.log"; } ||
    fail "no CrashLoopBackOff naming crashing-0"
  cs_wait_job a-sidecar 240
  cat "$CS_WORK/a-sidecar.log"
  grep -qx sidecar-0 "$CS_WORK/a-sidecar.log" || fail "no launch on sidecar-0 while its sidecar crash-loops"
  cs_step "launched on sidecar-0 while its sidecar was in CrashLoopBackOff ($(cs_jsonpath pod/sidecar-0 \
    '{.status.containerStatuses[?(@.name=="sidecar")].restartCount}') restarts)"
}

# Open MPI 4 tree spawn at radix 1 over 4 workers, with '='-bearing plm_rsh_args as operators pass them
# (ORTE forwards them to the workers' orteds on their command lines).
c06_tree_spawn() {
  local n sources ips ip from_workers=0
  cs_secret
  cs_rbac
  cs_workers 4
  cs_k apply -f "$CS_WORK/workers.yaml" >/dev/null || fail "creating the workers"
  cs_launcher_job launcher \
    'mpirun --mca routed_radix 1 --mca plm_rsh_args "-o ConnectionAttempts=10 -o ServerAliveInterval=30" -H mpi-worker-0,mpi-worker-1,mpi-worker-2,mpi-worker-3 -n 4 hostname' \
    app.kubernetes.io/name=mpi-worker
  cs_wait_job launcher 240
  cat "$CS_WORK/launcher.log"
  for n in 0 1 2 3; do grep -qx "mpi-worker-$n" "$CS_WORK/launcher.log" || fail "no rank ran on mpi-worker-$n"; done
  # Agents that orted ran in the workers read pods too: from the workers' IPs, with the workers' own tokens.
  ips="$(cs_jsonpath pods '{.items[?(@.metadata.labels.app\.kubernetes\.io/name=="mpi-worker")].status.podIP}')"
  sources="$(cs_agent_requests | awk '{print $3}' | sort -u | tr '\n' ' ')"
  cs_step "the agents' requests came from $sources(workers: $ips)"
  for ip in $ips; do [[ " $sources" == *" $ip "* ]] && from_workers=$((from_workers + 1)); done
  ((from_workers >= 1)) || fail "no agent ran in a worker pod (tree spawn)"
}

# images/k8s/examples/stock-image.yaml with the tier's images.
cs_stock_example() {
  sed -e 's|registry.example.com/my-training:1.0|k8sa.local/stock:1|' \
    -e 's|image: k8s-agent:[^ ]*|image: k8s-agent:cluster|' "$CS_IMG/examples/stock-image.yaml" >"$CS_WORK/stock.yaml"
  { grep -q 'k8sa.local/stock:1' "$CS_WORK/stock.yaml" && ! grep -Eq 'k8s-agent:[0-9]' "$CS_WORK/stock.yaml"; } ||
    fail "images/k8s/examples/stock-image.yaml changed its images"
  cs_k apply -f "$CS_WORK/stock.yaml" >/dev/null || fail "applying the stock-image example"
}

# The stock image is Debian 13's: Open MPI 5 (PRRTE's prted on the workers).
c07_stock_image() {
  local n
  cs_secret
  cs_rbac
  cs_stock_example
  cs_wait_job train-launcher 240
  cat "$CS_WORK/train-launcher.log"
  for n in 0 1; do
    grep -qx "train-worker-$n" "$CS_WORK/train-launcher.log" || fail "no rank ran on train-worker-$n"
  done
  cs_step "ran on the stock image's workers with the delivered sshd"
}

# Agents' pod reads from worker pods (tree spawn): how many of the workers' IPs (label $2, by default
# app.kubernetes.io/name, = $1) the audit log shows as sources of the agents' requests, each made with that
# pod's own projected token (the workers' service account: the launcher's pod has its own IP).
cs_reads_from_workers() {
  local ips sources ip n=0 key="${2:-app.kubernetes.io/name}"
  ips="$(cs_jsonpath pods "{.items[?(@.metadata.labels.${key//./\\.}==\"$1\")].status.podIP}")"
  sources="$(cs_agent_requests | awk '$1 == "list" || $1 == "watch" || $1 == "get" {print $3}' | sort -u |
    tr '\n' ' ')"
  for ip in $ips; do [[ " $sources" == *" $ip "* ]] && n=$((n + 1)); done
  cs_step "pod reads from $sources(workers: $ips): $n from workers" >&2
  echo "$n"
}

# Open MPI 5 tree spawn on the stock image (the example as written, 4 workers): radix 2 (the launcher's
# prterun starts train-worker-0 and -1, the prted on -0 starts -2 and -3), then radix 1 (a chain: -0's prted
# starts -1, ...; the audit log then shows reads from three workers, which radix 2 alone cannot). The example's
# plm_ssh_args hold "-o UserKnownHostsFile=/etc/ssh-secret/known_hosts", which PRRTE forwards to the workers'
# prteds cut at its '=': the workers' agents complete it from what the launcher's agent handed down.
c08_ompi5_tree_stock() {
  local radix n got
  cs_secret
  cs_rbac
  for radix in 2 1; do
    sed -e 's|registry.example.com/my-training:1.0|k8sa.local/stock:1|' \
      -e 's|image: k8s-agent:[^ ]*|image: k8s-agent:cluster|' -e 's|replicas: 2|replicas: 4|' \
      -e "s|name: train-launcher|name: train-launcher-r$radix|" \
      -e "s|args: \[\"mpirun\", \"--allow-run-as-root\", \"-H\", \"train-worker-0,train-worker-1\", \"-n\", \"2\"|args: [\"mpirun\", \"--allow-run-as-root\", \"--prtemca\", \"rml_base_radix\", \"$radix\", \"-H\", \"train-worker-0,train-worker-1,train-worker-2,train-worker-3\", \"-n\", \"4\"|" \
      "$CS_IMG/examples/stock-image.yaml" >"$CS_WORK/stock-r$radix.yaml"
    { grep -q "rml_base_radix\", \"$radix\"" "$CS_WORK/stock-r$radix.yaml" && grep -q 'replicas: 4' "$CS_WORK/stock-r$radix.yaml"; } ||
      fail "images/k8s/examples/stock-image.yaml changed its launcher args or replicas"
    cs_k apply -f "$CS_WORK/stock-r$radix.yaml" >/dev/null || fail "applying the stock-image example (radix $radix)"
    cs_wait_job "train-launcher-r$radix" 240
    cat "$CS_WORK/train-launcher-r$radix.log"
    for n in 0 1 2 3; do
      grep -qx "train-worker-$n" "$CS_WORK/train-launcher-r$radix.log" ||
        fail "radix $radix: no rank ran on train-worker-$n"
    done
    got="$(cs_reads_from_workers train-worker)"
    # Radix 1: three workers' prteds launch the next; radix 2: train-worker-0's launches -2 and -3.
    ((got >= (radix == 1 ? 3 : 1))) || fail "radix $radix: only $got workers' agents read pods"
    cs_step "radix $radix: ranks on all 4 workers, $got workers' agents launched the next level"
  done
}

# images/k8s/examples/mpijob-stock-image.yaml as mpi-operator v2beta1's controller sets it up
# (mpijob_controller.py: its Secret, hostfile ConfigMap, Services, worker Pods and launcher Job, the
# launcher's env appended after the user's with OMPI_MCA_plm_rsh_args="-o ConnectionAttempts=10"), on the
# stock image under Open MPI 5, 4 workers, tree spawn at radix 1: the example's host-key settings come
# from its ssh_config ConfigMap, its hostfile from the operator's, and the workers' agents read pods.
c09_mpijob_ompi5_tree() {
  local n got
  sed -e 's|registry.example.com/my-training:1.0|k8sa.local/stock:1|' \
    -e 's|image: k8s-agent:[^ ]*|image: k8s-agent:cluster|' -e 's|replicas: 2|replicas: 4|' \
    -e 's|args: \["mpirun", "--allow-run-as-root", "-n", "2"|args: ["mpirun", "--allow-run-as-root", "--prtemca", "rml_base_radix", "1", "-n", "4"|' \
    "$CS_IMG/examples/mpijob-stock-image.yaml" >"$CS_WORK/mpijob.yaml"
  { grep -q 'rml_base_radix", "1"' "$CS_WORK/mpijob.yaml" && grep -q 'replicas: 4' "$CS_WORK/mpijob.yaml"; } ||
    fail "images/k8s/examples/mpijob-stock-image.yaml changed its launcher args or replicas"
  mkdir -p "$CS_WORK/operator-key"
  "$CL_PY" "$CL_REPO_DIR/tests/cluster/mpijob_controller.py" "$CS_WORK/mpijob.yaml" "$CS_NS" \
    "$CS_WORK/operator-key" >"$CS_WORK/mpijob.json" || fail "rendering the MPIJob as mpi-operator does"
  cs_k apply -f "$CS_WORK/mpijob.json" >/dev/null || fail "applying the rendered MPIJob"
  cs_wait_job train-launcher 300
  cat "$CS_WORK/train-launcher.log"
  for n in 0 1 2 3; do
    grep -qx "train-worker-$n" "$CS_WORK/train-launcher.log" || fail "no rank ran on train-worker-$n"
  done
  got="$(cs_reads_from_workers worker training.kubeflow.org/job-role)"
  ((got >= 3)) || fail "only $got workers' agents read pods (radix 1 over 4 workers: 3 expected)"
  cs_step "ranks on all 4 workers under the operator's env, $got workers' agents launched the next level"
}

# images/k8s/examples/stock-image.yaml as OpenShift's restricted-v2 runs it (tests/cluster/any_uid_example.py):
# uid 1000680000 with no passwd entry, group 0, fsGroup from the same range, every capability dropped. On
# k8sa.local/stock-anyuid:1 (the stock image with /etc/passwd group-writable, as OpenShift-style images make
# it) and a writable worker root, k8s-agent-sshd appends the uid's entry ("default") and the launcher's agent,
# the same uid, logs in as default. Then the workers roll to the stock image as it is (passwd 0644): the new
# worker's k8s-agent-sshd exits at once saying what the image or pod must add.
c10_any_uid() {
  local n uid=1000680000
  cs_secret
  cs_rbac
  "$CL_PY" "$CL_REPO_DIR/tests/cluster/any_uid_example.py" "$CS_IMG/examples/stock-image.yaml" \
    "$CS_WORK/any-uid.yaml" --uid "$uid" --image k8sa.local/stock-anyuid:1 --delivery k8s-agent:cluster \
    --writable-worker-root || fail "rendering the stock-image example for an arbitrary uid"
  cs_k apply -f "$CS_WORK/any-uid.yaml" >/dev/null || fail "applying the arbitrary-uid example"
  cs_wait_job train-launcher 240
  cat "$CS_WORK/train-launcher.log"
  for n in 0 1; do
    grep -qx "train-worker-$n" "$CS_WORK/train-launcher.log" || fail "no rank ran on train-worker-$n"
    cs_k logs "train-worker-$n" -c worker >"$CS_WORK/worker-$n.log" 2>&1
    grep -q "uid $uid had no passwd entry: added default" "$CS_WORK/worker-$n.log" ||
      fail "train-worker-$n's k8s-agent-sshd did not add uid $uid's passwd entry: $(cat "$CS_WORK/worker-$n.log")"
  done
  grep -q "^default:x:$uid:0:" <(cs_k exec train-worker-0 -c worker -- cat /etc/passwd) ||
    fail "train-worker-0's /etc/passwd has no line default:x:$uid:0"
  cs_step "ran as uid $uid (group 0, no passwd entry in the image) on both workers"

  cs_k patch statefulset train-worker --type json -p \
    '[{"op": "replace", "path": "/spec/template/spec/containers/0/image", "value": "k8sa.local/stock:1"}]' \
    >/dev/null || fail "rolling the workers to k8sa.local/stock:1"
  cs_until "a worker on k8sa.local/stock:1 whose k8s-agent-sshd exited saying why" 180 cs_stock_worker_said "$uid"
  cat "$CS_WORK/stock-worker.log"
  for n in "cannot open it for writing" "chmod g=u /etc/passwd" "mount a passwd file"; do
    grep -qF "$n" "$CS_WORK/stock-worker.log" || fail "$CS_STOCK_WORKER's k8s-agent-sshd did not say \"$n\""
  done
  cs_step "on the stock image (passwd 0644) $CS_STOCK_WORKER's k8s-agent-sshd exited naming the remedy"
}
# Whether a worker pod of k8sa.local/stock:1 (CS_STOCK_WORKER) has a worker container that exited, and its
# log (CS_WORK/stock-worker.log; the kubelet may not have it yet) says uid $1 has "no passwd entry".
cs_stock_worker_said() {
  CS_STOCK_WORKER="$(cs_jsonpath pods '{range .items[?(@.spec.containers[0].image=="k8sa.local/stock:1")]}{.metadata.name} {.status.containerStatuses[0].lastState.terminated.exitCode}{"\n"}{end}' |
    awk 'NF == 2 {print $1; exit}')"
  [[ -n "$CS_STOCK_WORKER" ]] &&
    cs_k logs "$CS_STOCK_WORKER" -c worker --previous >"$CS_WORK/stock-worker.log" 2>&1 &&
    grep -qF "uid $1 has no passwd entry" "$CS_WORK/stock-worker.log"
}

# A Job pod deleted with a long grace period whose container ignores SIGTERM: it stays Running with its sshd
# answering (deletionTimestamp set), and the 1.20 Job controller, which counts a terminating pod as gone,
# creates the replacement (the same spec.hostname w0) at once, as podReplacementPolicy's default does from
# 1.34. The agent asked for w0 then must never launch on the dying pod: it says so and runs on the
# replacement, told apart by its name (a downward-API file).
c11_overlapping_replacement() {
  local old ran
  cs_secret
  cs_rbac
  cat <<EOF2 | cs_k apply -f - >/dev/null || fail "creating the workers' Job"
apiVersion: v1
kind: Service
metadata: {name: w}
spec: {clusterIP: None, selector: {job-name: w}, ports: [{name: ssh, port: 2222}]}
---
apiVersion: batch/v1
kind: Job
metadata: {name: w}
spec:
  backoffLimit: 3
  template:
    spec:
      hostname: w0
      subdomain: w
      restartPolicy: Never
      terminationGracePeriodSeconds: 600
      securityContext: {runAsUser: 1000, runAsGroup: 1000, runAsNonRoot: true, fsGroup: 1000}
      containers:
        - name: worker
          image: k8s-agent-worker:cluster
          # PID 1 ignores the kubelet's SIGTERM; sshd, its child, never gets one.
          command: ["bash", "-c", "trap '' TERM; k8s-agent-sshd & wait"]
          volumeMounts:
            - {name: ssh-secret, mountPath: /etc/ssh-secret, readOnly: true}
            - {name: podinfo, mountPath: /etc/podinfo, readOnly: true}
      volumes:
        - {name: ssh-secret, secret: {secretName: mpi-ssh, defaultMode: 0440}}
        - {name: podinfo, downwardAPI: {items: [{path: name, fieldRef: {fieldPath: metadata.name}}]}}
EOF2
  cs_until "the Job's first pod" 60 cs_job_pods 1
  old="$CS_JOB_PODS"
  cs_agent_job first job-name=w w0 cat /etc/podinfo/name
  cs_wait_job first 240
  grep -qx "$old" "$CS_WORK/first.log" || fail "the first launch did not run on $old"
  cs_k delete pod "$old" --wait=false >/dev/null || fail "deleting $old"
  cs_until "$old marked for deletion" 60 cs_deleting "$old"
  cs_agent_job agent job-name=w w0 cat /etc/podinfo/name
  cs_wait_job agent 240
  cat "$CS_WORK/agent.log"
  { cs_deleting "$old" && cs_pod_running "$old"; } || fail "$old is no longer a terminating, Running pod: nothing overlapped"
  # The Job's pods are named w-XXXXX; the agent's own lines are longer.
  ran="$(grep -xE 'w-[a-z0-9]{5}' "$CS_WORK/agent.log")"
  [[ "$ran" != "$old" ]] || fail "the agent launched on the terminating pod $old"
  { cs_job_pods 2 && [[ " $CS_JOB_PODS " == *" $ran "* ]]; } || fail "the command ran on \"$ran\", not the replacement"
  # Found together ("passing over"), or the replacement after the dying pod ("not launching there").
  grep -qE "passing over pod $old: .*\(terminating\)|$old is terminating \(.*\): not launching there" \
    "$CS_WORK/agent.log" || fail "the agent did not say it passed over the terminating $old"
  cs_step "ran on the replacement $ran while $old (terminating, Running, sshd answering) overlapped"
  # Its grace period would outlast the scenario.
  cs_k delete pod "$old" --grace-period=0 --force >/dev/null 2>&1
}
# Sets CS_JOB_PODS to the names of Job w's pods; true when there are N.
cs_job_pods() {
  CS_JOB_PODS="$(cs_jsonpath pods '{.items[?(@.metadata.labels.job-name=="w")].metadata.name}')"
  [[ "$(wc -w <<<"$CS_JOB_PODS")" -eq "$1" ]]
}
cs_deleting() { [[ -n "$(cs_jsonpath "pod/$1" '{.metadata.deletionTimestamp}')" ]]; }

# An MPIJob as mpi-operator's own samples write it (no agent, no securityContext, the workers' command left
# to the operator), on the stock image: `k8s-agent inject --rbac --sshd` adds everything, mpi-operator
# v2beta1's controller (mpijob_controller.py) makes its objects, and the job runs a rank on each worker.
c12_injected_mpijob() {
  local n
  cat >"$CS_WORK/pi.yaml" <<'EOF2'
apiVersion: kubeflow.org/v2beta1
kind: MPIJob
metadata:
  name: pi
spec:
  slotsPerWorker: 1
  runPolicy:
    cleanPodPolicy: Running
  mpiReplicaSpecs:
    Launcher:
      replicas: 1
      template:
        spec:
          containers:
          - image: k8sa.local/stock:1
            name: mpi-launcher
            command:
            - mpirun
            args:
            - --allow-run-as-root
            - -n
            - "2"
            - hostname
    Worker:
      replicas: 2
      template:
        spec:
          containers:
          - image: k8sa.local/stock:1
            name: mpi-worker
EOF2
  # K8S_AGENT: the build's k8s-agent (tests/cluster/CMakeLists.txt), k8s-agent-inject beside it.
  "${K8S_AGENT:?the k8s-agent binary to inject with}" inject --rbac --sshd --image k8s-agent:cluster "$CS_WORK/pi.yaml" \
    >"$CS_WORK/pi-injected.yaml" 2>"$CS_WORK/inject.err" || fail "k8s-agent inject: $(cat "$CS_WORK/inject.err")"
  cs_step "injected: $(wc -l <"$CS_WORK/pi.yaml") -> $(wc -l <"$CS_WORK/pi-injected.yaml") lines$(
    [[ -s "$CS_WORK/inject.err" ]] && printf '; %s' "$(tr '\n' ' ' <"$CS_WORK/inject.err")")"
  mkdir -p "$CS_WORK/operator-key"
  "$CL_PY" "$CL_REPO_DIR/tests/cluster/mpijob_controller.py" "$CS_WORK/pi-injected.yaml" "$CS_NS" \
    "$CS_WORK/operator-key" >"$CS_WORK/pi.json" || fail "rendering the injected MPIJob as mpi-operator does"
  cs_k apply -f "$CS_WORK/pi.json" >/dev/null || fail "applying the rendered MPIJob"
  cs_wait_job pi-launcher 300
  cat "$CS_WORK/pi-launcher.log"
  for n in 0 1; do grep -qx "pi-worker-$n" "$CS_WORK/pi-launcher.log" || fail "no rank ran on pi-worker-$n"; done
  cs_step "the injected MPIJob ran a rank on both workers"
}

# images/k8s/examples/trainer-v2.yaml as Kubeflow Trainer v2 sets it up (trainer_controller.py: the MPI
# plugin's Secret, hostfile and launcher env, upserted, OMPI_MCA_plm_rsh_args="-o ConnectionAttempts=10"
# replacing any the runtime gave; JobSet's headless Service and the Indexed Jobs' pods, named
# hello-node-0-I-xxxxx with hostname hello-node-0-I): Open MPI 4 on the project's images, a rank on every
# node pod, which the launcher's agent found through the Job controller's labels (the hostfile's
# hello-node-0-I.hello is no pod name).
c13_trainer_mpi() {
  local n got
  cs_rbac
  sed -e 's|image: k8s-agent-launcher:[^ ]*|image: k8s-agent-launcher:cluster|' \
    -e 's|image: k8s-agent-worker:[^ ]*|image: k8s-agent-worker:cluster|' \
    "$CS_IMG/examples/trainer-v2.yaml" >"$CS_WORK/trainer.yaml"
  { grep -q 'k8s-agent-launcher:cluster' "$CS_WORK/trainer.yaml" && grep -q 'k8s-agent-worker:cluster' "$CS_WORK/trainer.yaml" &&
    ! grep -Eq 'k8s-agent(-[a-z]+)?:[0-9]' "$CS_WORK/trainer.yaml"; } || fail "images/k8s/examples/trainer-v2.yaml changed its images"
  mkdir -p "$CS_WORK/trainer-key"
  "$CL_PY" "$CL_REPO_DIR/tests/cluster/trainer_controller.py" "$CS_WORK/trainer.yaml" "$CS_NS" \
    "$CS_WORK/trainer-key" >"$CS_WORK/trainer.json" || fail "rendering the TrainJob as Trainer does"
  cs_k apply -f "$CS_WORK/trainer.json" >/dev/null || fail "applying the rendered TrainJob"
  cs_wait_job hello-launcher-0 240
  cat "$CS_WORK/hello-launcher-0.log"
  for n in 0 1; do
    grep -qx "hello-node-0-$n" "$CS_WORK/hello-launcher-0.log" || fail "no rank ran on hello-node-0-$n"
  done
  cs_agent_requests >"$CS_WORK/requests"
  for n in 0 1; do
    grep -qE "^(list|watch) 200 .*job-name%3Dhello-node-0%2Cbatch.kubernetes.io%2Fjob-completion-index%3D$n" \
      "$CS_WORK/requests" || { cat "$CS_WORK/requests"; fail "no pod read by hello-node-0-$n's Job labels"; }
  done
  cs_step "ranks on both node pods under Trainer's env; agent's requests: $(awk '{print $1}' "$CS_WORK/requests" |
    sort | uniq -c | tr -s ' \n' ' ')"

  # Open MPI 5 on the stock image with trainer PR #4029's PRTE names (hostfile, short host names,
  # plm_ssh_args replacing the runtime's), tree spawn at radix 1 over 4 nodes.
  cs_trainer_stock >"$CS_WORK/stock.yaml"
  "$CL_PY" "$CL_REPO_DIR/tests/cluster/trainer_controller.py" --prte "$CS_WORK/stock.yaml" "$CS_NS" \
    "$CS_WORK/trainer-key" >"$CS_WORK/stock.json" || fail "rendering the stock TrainJob as Trainer with PR #4029 does"
  cs_k apply -f "$CS_WORK/stock.json" >/dev/null || fail "applying the rendered stock TrainJob"
  [[ "$(cs_jsonpath job/stock-launcher-0 \
    '{.spec.template.spec.containers[0].env[?(@.name=="PRTE_MCA_plm_ssh_args")].value}')" == "-o ConnectionAttempts=10" ]] ||
    fail "Trainer's PRTE_MCA_plm_ssh_args did not replace the runtime's"
  cs_wait_job stock-launcher-0 300
  cat "$CS_WORK/stock-launcher-0.log"
  for n in 0 1 2 3; do
    grep -qx "stock-node-0-$n" "$CS_WORK/stock-launcher-0.log" || fail "Open MPI 5: no rank ran on stock-node-0-$n"
  done
  got="$(cs_reads_from_workers stock-node-0 batch.kubernetes.io/job-name)"
  ((got >= 3)) || fail "only $got node pods' agents read pods (radix 1 over 4 nodes: 3 expected)"
  cs_step "Open MPI 5: ranks on all 4 node pods under PR #4029's env, $got nodes' agents launched the next level"
}

# The runtime of c13's second run: the stock image (Open MPI 5, no OpenSSH) with the delivery image's agent
# and k8s-agent-sshd on Trainer's key at /root/.ssh (also the nodes' host key, checked by no one: Trainer's
# Secret has no known_hosts), the ssh settings in an ssh_config named by K8S_AGENT_SSH_CONFIG (Trainer
# replaces plm_ssh_args), no hostfile variable of its own: PR #4029's PRTE_MCA_prte_default_hostfile must
# bring it. 4 nodes, tree spawn at radix 1.
cs_trainer_stock() {
  cat <<'EOF2'
apiVersion: v1
kind: ConfigMap
metadata: {name: k8s-agent-ssh}
data:
  ssh_config: |
    Host *
      StrictHostKeyChecking no
      UserKnownHostsFile /dev/null
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: ClusterTrainingRuntime
metadata: {name: mpi-stock, labels: {trainer.kubeflow.org/framework: mpi}}
spec:
  mlPolicy:
    numNodes: 1
    mpi: {numProcPerNode: 1, mpiImplementation: OpenMPI, sshAuthMountPath: /root/.ssh, runLauncherAsNode: false}
  template:
    spec:
      network: {publishNotReadyAddresses: true}
      successPolicy: {operator: All, targetReplicatedJobs: [launcher]}
      replicatedJobs:
        - name: launcher
          template:
            metadata: {labels: {trainer.kubeflow.org/trainjob-ancestor-step: trainer}}
            spec:
              template:
                spec:
                  serviceAccountName: mpi-launcher
                  initContainers:
                    - {name: k8s-agent, image: "k8s-agent:cluster", args: [/opt/k8s-agent],
                       volumeMounts: [{name: k8s-agent, mountPath: /opt/k8s-agent}]}
                  containers:
                    - name: node
                      image: k8sa.local/stock:1
                      env:
                        - {name: PRTE_MCA_plm_ssh_agent, value: /opt/k8s-agent/k8s-agent}
                        - {name: K8S_AGENT_SSH_CONFIG, value: /etc/k8s-agent-ssh/ssh_config}
                        - {name: PRTE_MCA_plm_ssh_args, value: "-o ServerAliveInterval=30"}  # Replaced.
                      args: [mpirun, --allow-run-as-root, --prtemca, rml_base_radix, "1", -n, "4", hostname]
                      volumeMounts:
                        - {name: k8s-agent, mountPath: /opt/k8s-agent, readOnly: true}
                        - {name: k8s-agent-ssh, mountPath: /etc/k8s-agent-ssh, readOnly: true}
                  volumes:
                    - {name: k8s-agent, emptyDir: {}}
                    - {name: k8s-agent-ssh, configMap: {name: k8s-agent-ssh}}
        - name: node
          template:
            spec:
              template:
                spec:
                  serviceAccountName: mpi-launcher  # Tree spawn: the nodes' agents read pods.
                  initContainers:
                    - {name: k8s-agent, image: "k8s-agent:cluster", args: [/opt/k8s-agent],
                       volumeMounts: [{name: k8s-agent, mountPath: /opt/k8s-agent}]}
                  containers:
                    - name: node
                      image: k8sa.local/stock:1
                      command: [/opt/k8s-agent/k8s-agent-sshd, --port, "22", --keys, /root/.ssh]
                      volumeMounts:
                        - {name: k8s-agent, mountPath: /opt/k8s-agent, readOnly: true}
                        - {name: k8s-agent-ssh, mountPath: /etc/k8s-agent-ssh, readOnly: true}
                  volumes:
                    - {name: k8s-agent, emptyDir: {}}
                    - {name: k8s-agent-ssh, configMap: {name: k8s-agent-ssh}}
---
apiVersion: trainer.kubeflow.org/v1alpha1
kind: TrainJob
metadata: {name: stock}
spec:
  runtimeRef: {apiGroup: trainer.kubeflow.org, kind: ClusterTrainingRuntime, name: mpi-stock}
  trainer: {numNodes: 4}
EOF2
}
