#!/bin/bash
# shellcheck disable=SC2016 # single-quoted snippets run inside the pods
# SPDX-License-Identifier: Apache-2.0
# End-to-end scenarios: real mpirun (and MPICH hydra) in a bed of network-namespace pods, k8s-agent as agent.
#
# usage: e2e.sh [--agent PATH|ssh] SCENARIO
#   --agent PATH  the k8s-agent binary (default $K8S_AGENT); "ssh" runs with plain OpenSSH to check the bed
#                 itself (scenarios that need pod waiting then SKIP).
#   SCENARIO      one of the names below; "list" prints them.
# Exit: 0 pass, 1 fail, 77 skip. Each run brings up its own bed and tears it down on any exit.
set -uo pipefail

E2E_AGENT="${K8S_AGENT:-}"
while [[ $# -gt 1 ]]; do
  case "$1" in
  --agent)
    E2E_AGENT="$2"
    [[ "$E2E_AGENT" == ssh ]] || E2E_AGENT="$(realpath -m "$E2E_AGENT")"
    shift 2
    ;;
  *) break ;;
  esac
done
E2E_NAME="${1:-}"
# shellcheck source=e2e_lib.sh
. "$(dirname "${BASH_SOURCE[0]}")/e2e_lib.sh"
# shellcheck source=e2e_ompi5_tree.sh
. "$(dirname "${BASH_SOURCE[0]}")/e2e_ompi5_tree.sh"
# shellcheck source=e2e_operators.sh
. "$(dirname "${BASH_SOURCE[0]}")/e2e_operators.sh"
# shellcheck source=e2e_stock.sh
. "$(dirname "${BASH_SOURCE[0]}")/e2e_stock.sh"
# shellcheck source=e2e_launchers.sh
. "$(dirname "${BASH_SOURCE[0]}")/e2e_launchers.sh"

SCENARIOS=(s00_bed_selfcheck s01_all_ready s02_pod_created_late s03_pending_then_running s04a_pod_failed
  s04b_image_pull_backoff s05_recreated_new_ip s06_tree_spawn s07_no_tree_spawn s08_fqdn_hostfile
  s09_preset_conf s10_signals s11_mpich_hydra s12_sixteen_staggered s13_openmpi5
  s14_link_cut s15_kill_agent s16_valgrind s17_image_entrypoints s18_openmpi5_tree_spawn
  s19_openmpi5_no_tree_spawn s20_openmpi5_late_and_failing s21_openmpi5_stdin_key s22_mpi4py
  s23_mpi_operator_keys s24_volcano_rsa_pkcs1 s25_jobset_hostnames s26_stock_workers s27_openmpi5_tree_args
  s28_deepspeed_openmpi_argv s29_horovodrun_argv s30_torchrun_rdzv_ip)

# The bed itself: hostnames, credentials, isolation, and a plain-ssh MPI job (no k8s-agent involved).
s00_bed_selfcheck() {
  E2E_AGENT=ssh
  bed_begin 2
  bed_all_ready || fail "workers not ready"
  local out
  out="$(bed_exec_launcher sh -c 'hostname; cat /var/run/secrets/kubernetes.io/serviceaccount/namespace; echo;
    echo "$KUBERNETES_SERVICE_HOST:$KUBERNETES_SERVICE_PORT"; test ! -e ~/.bashrc && echo no-bashrc;
    ip route | grep -c default; getent hosts kubernetes.default.svc | cut -d" " -f1')"
  [[ "$(echo "$out" | sed -n 1p)" == launcher ]] || fail "launcher hostname: $out"
  [[ "$(echo "$out" | sed -n 2p)" == default ]] || fail "launcher SA namespace: $out"
  [[ "$(echo "$out" | sed -n 3p)" == "$(bed_pod_ip apiserver):443" ]] || fail "launcher KUBERNETES_SERVICE_*: $out"
  [[ "$(echo "$out" | sed -n 4p)" == no-bashrc ]] || fail "launcher ~/.bashrc visible: $out"
  [[ "$(echo "$out" | sed -n 5p)" == 0 ]] || fail "launcher has a default route: $out"
  [[ "$(echo "$out" | sed -n 6p)" == "$(bed_pod_ip apiserver)" ]] || fail "kubernetes.default.svc: $out"
  # Nothing can leave the subnet: the only route is the pod network, and the
  # resolver is the pod's own loopback. Checked from the tables, never by
  # sending anything to an outside address.
  out="$(bed_exec_launcher ip -4 route show)"
  [[ "$(echo "$out" | wc -l)" == 1 && "$out" == *"dev eth0"* ]] || fail "launcher routes: $out"
  out="$(bed_exec_launcher cat /etc/resolv.conf | grep '^nameserver')"
  [[ "$out" == "nameserver 127.0.0.1" ]] || fail "launcher resolver: $out"
  # Worker sessions: hostname = pod name, SA files, apiserver by its in-cluster name, launcher by name.
  out="$(bed_exec_launcher ssh "$(bed_worker_ip w-1)" 'hostname; cat /var/run/secrets/kubernetes.io/serviceaccount/namespace; echo;
    getent hosts kubernetes.default.svc launcher | cut -d" " -f1 | tr "\n" " "; test ! -e ~/.bashrc && echo no-bashrc')" ||
    fail "ssh to w-1 failed: $out"
  [[ "$out" == "w-1"$'\n'"default"$'\n'"$(bed_pod_ip apiserver) $(bed_pod_ip launcher) no-bashrc" ]] ||
    fail "worker view wrong: $out"
  # In-cluster API access from the launcher, through the service-account files.
  out="$(bed_exec_launcher sh -c 'curl -sS --noproxy "*" --cacert /var/run/secrets/kubernetes.io/serviceaccount/ca.crt \
    -H "Authorization: Bearer $(cat /var/run/secrets/kubernetes.io/serviceaccount/token)" \
    https://kubernetes.default.svc/api/v1/namespaces/default/pods/w-1')" || fail "API GET from launcher: $out"
  echo "$out" | grep -q '"Running"' || fail "API GET w-1 not Running: $out"
  if [[ -x /usr/bin/kubectl ]] && grep -q '"/api"' "$BED_FAKE_APISERVER" 2>/dev/null; then
    out="$(bed_exec_launcher kubectl get pods -o wide 2>&1)" || fail "kubectl in-cluster: $out"
    echo "$out" | grep -qE '^w-0 +1/1 +Running' || fail "kubectl get pods: $out"
    step "kubectl in-cluster ok"
  fi
  # The bed's own sshd config and known_hosts work with plain ssh, strict host key checking.
  # shellcheck disable=SC2153 # HELLO: set and exported by e2e_lib.sh
  run_mpirun mpi 30 -H w-0,w-1 -np 2 "$HELLO"
  expect_rc 0
  expect_ranks 2
  expect_rank_hosts 1 w-0 w-1
  expect_no_leftovers 5
  pass
}

s01_all_ready() {
  bed_begin 2
  bed_all_ready || fail "workers not ready"
  run_mpirun mpi 30 -H w-0,w-1 -np 2 "$HELLO"
  expect_rc 0
  expect_ranks 2
  expect_rank_hosts 1 w-0 w-1
  expect_trace_path w-0 w-1
  show_timeline
  expect_no_leftovers 5
  pass
}

# An mpi4py script (Debian's python3-mpi4py, built on the same Open MPI) through mpirun with the agent:
# Python needs nothing of its own, the ranks report as mpi_hello does.
s22_mpi4py() {
  need_agent
  /usr/bin/python3 -c 'import mpi4py' 2>/dev/null || skip "python3-mpi4py not installed"
  bed_begin 2
  bed_all_ready || fail "workers not ready"
  local py="$BED_DIR/hello.py"
  cat >"$py" <<'EOP'
import socket
from mpi4py import MPI
comm = MPI.COMM_WORLD
rank, size = comm.Get_rank(), comm.Get_size()
total = comm.allreduce(rank + 1, op=MPI.SUM)
expect = size * (size + 1) // 2
print("mpi_hello rank=%d size=%d host=%s allreduce=%d expect=%d %s"
      % (rank, size, socket.gethostname(), total, expect, "ok" if total == expect else "BAD"), flush=True)
EOP
  chmod 644 "$py"
  run_mpirun mpi 60 -H w-0,w-1 -np 2 /usr/bin/python3 "$py"
  expect_rc 0
  expect_ranks 2
  expect_rank_hosts 1 w-0 w-1
  expect_trace_path w-0 w-1
  show_timeline
  expect_no_leftovers 5
  pass
}

# w-1 does not exist in the API when mpirun starts; it is created (Running, sshd up) 2 s later.
s02_pod_created_late() {
  need_agent
  bed_begin 2
  bed_worker_ready w-0 || fail "w-0 not ready"
  bed_sshd_start w-1 || fail "sshd w-1"
  start_mpirun mpi -H w-0,w-1 -np 2 "$HELLO"
  at_ms 2000
  step "create pod w-1 (Running)"
  bed_worker_phase w-1 Running || fail "control API"
  wait_job 30
  expect_rc 0
  expect_ranks 2
  expect_rank_hosts 1 w-0 w-1
  expect_trace_path w-0
  expect_trace order w-1 pod_running ssh_ready started
  expect_trace after w-1 pod_running "$JOB_T0_US" 1900
  show_timeline
  expect_no_leftovers 5
  pass
}

# w-1 Pending without IP; Running with IP 2 s later (sshd not yet up: Running is not ready); sshd 2 s later.
s03_pending_then_running() {
  need_agent
  bed_begin 2
  bed_worker_ready w-0 || fail "w-0 not ready"
  bed_worker_phase w-1 Pending || fail "control API"
  start_mpirun mpi -H w-0,w-1 -np 2 "$HELLO"
  at_ms 2000
  step "w-1 Running with IP, sshd still down"
  bed_worker_phase w-1 Running || fail "control API"
  at_ms 4000
  step "w-1 sshd starts"
  bed_sshd_start w-1 || fail "sshd w-1"
  wait_job 30
  expect_rc 0
  expect_ranks 2
  expect_rank_hosts 1 w-0 w-1
  expect_trace_path w-0 w-1
  expect_trace after w-1 pod_running "$JOB_T0_US" 1900
  expect_trace after w-1 ssh_ready "$JOB_T0_US" 3900
  expect_trace gap w-1 pod_running ssh_ready 1500
  show_timeline
  expect_no_leftovers 5
  pass
}

# w-1 goes Failed (Evicted) while w-0 already runs its orted: mpirun fails fast, the reason is shown.
s04a_pod_failed() {
  need_agent
  bed_begin 2
  bed_worker_ready w-0 || fail "w-0 not ready"
  bed_worker_phase w-1 Pending || fail "control API"
  start_mpirun mpi -H w-0,w-1 -np 2 "$HELLO"
  at_ms 1000
  step "w-1 Failed: Evicted"
  bed_pod_set w-1 '{"phase":"Failed","podIP":null,"reason":"Evicted","message":"The node was low on resource: memory."}' ||
    fail "control API"
  wait_job 20
  expect_rc_nonzero
  ((JOB_MS < 1000 + 5000)) || fail "mpirun took $((JOB_MS - 1000)) ms after the pod failed, expected < 5000"
  expect_output 'k8s-agent: w-1: '
  expect_output 'Evicted'
  expect_trace order w-1 failed
  expect_trace grep w-1 failed Evicted
  expect_no_leftovers 5
  pass
}

# w-1 stuck in ImagePullBackOff: the agent gives up fast with the waiting reason.
s04b_image_pull_backoff() {
  need_agent
  bed_begin 2
  bed_worker_ready w-0 || fail "w-0 not ready"
  bed_worker_phase w-1 Pending || fail "control API"
  start_mpirun mpi -H w-0,w-1 -np 2 "$HELLO"
  at_ms 1000
  step "w-1 waiting: ImagePullBackOff"
  bed_worker_phase w-1 Pending '"waitingReason":"ImagePullBackOff","waitingMessage":"Back-off pulling image \"registry.invalid/mpi:nope\""' ||
    fail "control API"
  wait_job 30
  expect_rc_nonzero
  ((JOB_MS < 1000 + 10000)) || fail "mpirun took $((JOB_MS - 1000)) ms after ImagePullBackOff, expected < 10000"
  expect_output 'k8s-agent: w-1: '
  expect_output 'ImagePullBackOff'
  expect_trace grep w-1 failed ImagePullBackOff
  expect_no_leftovers 5
  pass
}

# w-1 Running at its old IP with no sshd; deleted and recreated under the same name with a new IP, which is
# the only one that answers. The agent must follow the new pod.
s05_recreated_new_ip() {
  need_agent
  bed_begin 2
  bed_worker_ready w-0 || fail "w-0 not ready"
  bed_worker_phase w-1 Running || fail "control API"
  start_mpirun mpi -H w-0,w-1 -np 2 "$HELLO"
  at_ms 1500
  step "delete pod w-1"
  bed_pod_delete w-1 || fail "control API delete"
  at_ms 2000
  local new_ip
  new_ip="$(bed_worker_readdress w-1)"
  step "recreate w-1 Pending, then Running at $new_ip with sshd"
  bed_worker_phase w-1 Pending || fail "control API"
  at_ms 2500
  bed_sshd_start w-1 || fail "sshd w-1"
  bed_worker_phase w-1 Running || fail "control API"
  wait_job 30
  expect_rc 0
  expect_ranks 2
  expect_rank_hosts 1 w-0 w-1
  expect_trace after w-1 ssh_ready "$JOB_T0_US" 2400
  if uses_agent && ! trace grep w-1 ssh_ready "$new_ip" 2>/dev/null && ! trace grep w-1 started "$new_ip" 2>/dev/null; then
    step "note: trace does not mention the new IP $new_ip (not asserted)"
  fi
  show_timeline
  expect_no_leftovers 5
  pass
}

# Tree spawn with radix 1: the orted on a worker runs k8s-agent itself (no pod env there: in-cluster files).
s06_tree_spawn() {
  bed_begin 3
  bed_all_ready || fail "workers not ready"
  local agent
  agent="$(make_agent_wrapper)"
  start_job mpi mpirun --allow-run-as-root --mca plm_rsh_agent "$agent" --mca routed_radix 1 \
    -H w-0,w-1,w-2 -np 3 "$HELLO"
  wait_job 40
  expect_rc 0
  expect_ranks 3
  expect_rank_hosts 1 w-0 w-1 w-2
  grep -qE '^agent-call from=launcher .*w-0' "$BED_DIR/agent-calls.log" || fail "mpirun did not run the agent for w-0"
  grep -qE '^agent-call from=w-[0-9]+ ' "$BED_DIR/agent-calls.log" || fail "no agent run inside a worker pod"
  step "agent calls: $(sed -E 's/^agent-call from=([^ ]+) (.*)/\1->\2/' "$BED_DIR/agent-calls.log" | cut -c1-40 | tr '\n' ';')"
  expect_trace_path w-0 w-1 w-2
  show_timeline
  expect_no_leftovers 5
  pass
}

# No tree spawn: orted --daemonize, the agent exits as soon as orted detached.
s07_no_tree_spawn() {
  bed_begin 3
  bed_all_ready || fail "workers not ready"
  run_mpirun mpi 40 --mca plm_rsh_no_tree_spawn 1 -H w-0,w-1,w-2 -np 3 "$HELLO"
  expect_rc 0
  expect_ranks 3
  expect_rank_hosts 1 w-0 w-1 w-2
  expect_trace_path w-0 w-1 w-2
  local h
  for h in w-0 w-1 w-2; do expect_trace order "$h" started exited; done
  show_timeline
  expect_no_leftovers 5
  pass
}

# FQDN names kept (orte_keep_fqdn_hostnames), hostfile with slots=, ssh options via plm_rsh_args; the
# launcher has no ~/.ssh, so the key and known_hosts must come from those options.
s08_fqdn_hostfile() {
  bed_begin 2
  bed_all_ready || fail "workers not ready"
  local hf="$BED_DIR/hostfile" f0 f1
  f0="$(bed_worker_fqdn w-0)"
  f1="$(bed_worker_fqdn w-1)"
  printf '%s slots=2\n%s slots=2\n' "$f0" "$f1" >"$hf"
  BED_LAUNCHER_HOME=bare run_mpirun mpi 30 --mca orte_keep_fqdn_hostnames 1 --hostfile "$hf" -np 4 \
    --mca plm_rsh_args "$(cat "$BED_DIR/ssh/agent_opts") -o ConnectTimeout=5" "$HELLO"
  expect_rc 0
  expect_ranks 4
  expect_rank_hosts 2 w-0 w-1
  expect_trace_path "$f0" "$f1"
  if uses_agent; then
    trace grep w-0 resolved "$f0" >/dev/null 2>&1 || fail "trace: host $f0 not resolved to pod w-0"
  fi
  show_timeline
  expect_no_leftovers 5
  pass
}

# Only the preset file configures the agent (OMPI_MCA_mca_base_param_files); nothing on the mpirun line.
s09_preset_conf() {
  local preset="$BED_REPO_DIR/ompi-conf/openmpi-mca-params.conf" copy agent
  [[ -f "$preset" ]] || fail "missing $preset"
  grep -qE '^[[:space:]]*plm_rsh_agent[[:space:]]*=[[:space:]]*k8s-agent' "$preset" ||
    fail "$preset does not set plm_rsh_agent = k8s-agent"
  bed_begin 2
  bed_all_ready || fail "workers not ready"
  copy="$BED_DIR/openmpi-mca-params.conf"
  if uses_agent; then agent="$E2E_AGENT"; else agent="ssh -F $BED_DIR/ssh/ssh_config"; fi
  sed -E "s|^([[:space:]]*plm_rsh_agent[[:space:]]*=[[:space:]]*)k8s-agent|\1$agent|" "$preset" >"$copy"
  start_job mpi env OMPI_MCA_mca_base_param_files="$copy" K8S_AGENT_TRACE="$BED_DIR/trace.jsonl" \
    mpirun --allow-run-as-root -H w-0,w-1 -np 2 "$HELLO"
  wait_job 30
  expect_rc 0
  expect_ranks 2
  expect_rank_hosts 1 w-0 w-1
  expect_trace_path w-0 w-1
  expect_no_leftovers 5
  pass
}

# SIGINT (to mpirun's process group, as a terminal's Ctrl-C) and SIGTERM (to mpirun alone) mid-job:
# everything ends, nothing is left in any pod.
s10_signals() {
  bed_begin 2
  bed_all_ready || fail "workers not ready"
  local sig
  for sig in INT TERM; do
    start_mpirun "mpi-$sig" -H w-0,w-1 -np 2 "$HELLO" --sleep 60
    wait_for_lines "$JOB_OUT" '^mpi_hello rank=[0-9]+ sleeping' 2 30
    if [[ $sig == INT ]]; then
      step "SIGINT to mpirun's process group"
      kill -INT -- "-$JOB_PID"
    else
      step "SIGTERM to mpirun"
      kill -TERM "$JOB_PID"
    fi
    wait_job 15
    expect_rc_nonzero
    expect_no_leftovers 10
  done
  pass
}

# MPICH's hydra: mpiexec.hydra -launcher ssh -launcher-exec k8s-agent; proxies call back to "launcher".
s11_mpich_hydra() {
  if ! command -v mpiexec.hydra >/dev/null || ! command -v mpicc.mpich >/dev/null; then
    skip "MPICH not installed (apt-get install mpich libmpich-dev)"
  fi
  bed_begin 2
  bed_all_ready || fail "workers not ready"
  local hello_mpich agent
  hello_mpich="$(bed_mpi_hello mpicc.mpich)" || fail "mpicc.mpich failed"
  agent="$(make_agent_wrapper)"
  start_job mpi mpiexec.hydra -launcher ssh -launcher-exec "$agent" -hosts w-0,w-1 -n 2 "$hello_mpich"
  wait_job 40
  expect_rc 0
  expect_ranks 2
  expect_rank_hosts 1 w-0 w-1
  expect_trace_path w-0 w-1
  expect_no_leftovers 5
  pass
}

# 16 worker pods becoming ready at staggered times (some Running well before their sshd), no tree spawn.
s12_sixteen_staggered() {
  local n=16 i name hosts
  bed_begin $n
  for ((i = 0; i < n; i++)); do bed_worker_phase "$(bed_worker_name $i)" Pending || fail "control API"; done
  hosts="$(bed_workers_list)"
  uses_agent || bed_all_ready || fail "workers not ready" # plain ssh cannot wait: stagger only with the agent
  start_mpirun mpi --mca plm_rsh_no_tree_spawn 1 -H "$hosts" -np $n "$HELLO"
  for ((i = 0; i < n; i++)); do
    name="$(bed_worker_name $i)"
    at_ms $((300 + i * 100))
    if ((i % 4 == 3)); then
      bed_worker_phase "$name" Running || fail "control API" # sshd follows below
    else
      bed_worker_ready "$name" || fail "$name not ready"
    fi
  done
  for ((i = 3; i < n; i += 4)); do bed_sshd_start "$(bed_worker_name $i)" || fail "sshd"; done
  step "all 16 pods Running and SSH-ready"
  wait_job 90
  expect_rc 0
  expect_ranks $n
  local hs=()
  for ((i = 0; i < n; i++)); do hs+=("$(bed_worker_name $i)"); done
  expect_rank_hosts 1 "${hs[@]}"
  if uses_agent; then
    [[ "$(trace hosts started | wc -w)" == "$n" ]] || fail "trace: started for $(trace hosts started | wc -w) of $n hosts"
  fi
  show_timeline
  expect_no_leftovers 10
  pass
}

# Open MPI 5 (PRRTE): every pod runs in a cached Debian 13 root with openmpi-bin 5.0.x (BED_CHROOT: the
# "pod image"; tests/bed/ompi5_root.sh builds it once outside the clone). mpirun/prterun in the launcher and
# prted on the workers come from that root; k8s-agent (built on this host) runs there through its own loader
# and libraries (bed_portable_agent). The agent is set (1) by PRTE_MCA_plm_ssh_agent, (2) only by the
# ompi-conf/prte-mca-params.conf preset at Debian's path /etc/openmpi/prte-mca-params.conf (bind-mounted
# over the image's file in the launcher pod: the cached root itself is never modified), and (3) as a control,
# by OMPI_MCA_plm_rsh_agent alone, which Open MPI 5 ignores (it reads the PRTE_MCA_ names): no agent call.
s13_openmpi5() {
  need_agent
  local preset="$BED_REPO_DIR/ompi-conf/prte-mca-params.conf" root rc out agent hello run h
  [[ -f "$preset" ]] || fail "missing $preset"
  grep -qE '^[[:space:]]*plm_ssh_agent[[:space:]]*=[[:space:]]*k8s-agent[[:space:]]*$' "$preset" ||
    fail "$preset does not set plm_ssh_agent = k8s-agent"
  step "Debian 13 root with Open MPI 5: $(bash "$BED_SRC_DIR/ompi5_root.sh" path)"
  root="$(bash "$BED_SRC_DIR/ompi5_root.sh" ensure)"
  rc=$?
  ((rc == 77)) && skip "no cached Debian 13 root and it cannot be built here (no Debian mirror known or reachable:" \
    "K8S_AGENT_DEBIAN_MIRROR; or debootstrap missing: see the line above)"
  if ((rc != 0)) || [[ ! -d "$root" ]]; then fail "building the Debian 13 root failed (exit $rc)"; fi
  # From here on the root exists: anything that goes wrong is a failure.
  bed_gc
  bed_up 2 || fail "bed did not come up"
  export BED_CHROOT="$root"
  step "bed ready: $BED_DIR net $(bed_cidr), pods run in $root"
  E2E_AGENT="$(bed_portable_agent "$E2E_AGENT")" || fail "cannot prepare k8s-agent for the Debian 13 root"
  agent="$(make_agent_wrapper)"
  out="$(bed_exec_launcher sh -c 'mpirun --version; prterun --version' 2>&1)" || fail "mpirun --version: $out"
  echo "$out" | grep -qE '^mpirun \(Open MPI\) 5\.' || fail "not Open MPI 5 in the root: $out"
  step "launcher runs $(echo "$out" | grep -E '^(mpirun|prterun) ' | tr '\n' ' ')"
  cp "$BED_SRC_DIR/mpi_hello.c" "$BED_DIR/mpi_hello.c"
  hello="$BED_DIR/mpi_hello.ompi5"
  out="$(bed_exec_launcher mpicc -O2 -o "$hello" "$BED_DIR/mpi_hello.c" 2>&1)" || fail "the root's mpicc failed: $out"
  bed_all_ready || fail "workers not ready"

  # (1) and (2): the same job, the agent set by the environment, then only by the preset file.
  sed -E "s|^([[:space:]]*plm_ssh_agent[[:space:]]*=[[:space:]]*)k8s-agent|\1$agent|" "$preset" \
    >"$BED_DIR/prte-mca-params.conf"
  for run in env preset; do
    rm -f "$BED_DIR/trace.jsonl" "$BED_DIR/agent-calls.log"
    if [[ $run == env ]]; then
      start_job "ompi5-$run" env PRTE_MCA_plm_ssh_agent="$agent" mpirun --allow-run-as-root -H w-0,w-1 -np 2 "$hello"
    else
      BED_CHROOT_BINDS="$BED_DIR/prte-mca-params.conf=/etc/openmpi/prte-mca-params.conf" \
        start_job "ompi5-$run" env -u PRTE_MCA_plm_ssh_agent mpirun --allow-run-as-root -H w-0,w-1 -np 2 "$hello"
    fi
    wait_job 60
    expect_rc 0
    expect_ranks 2
    expect_rank_hosts 1 w-0 w-1
    # prterun (not orterun) ran the agent once per worker, with PRRTE's preamble and prted by absolute path.
    for h in w-0 w-1; do
      grep -qE "^agent-call from=launcher $h PRTE_PREFIX=.*;/usr/bin/prted " "$BED_DIR/agent-calls.log" ||
        fail "[$run] no PRRTE launch of prted through the agent for $h"
    done
    [[ "$(grep -c . "$BED_DIR/agent-calls.log")" == 2 ]] || fail "[$run] expected 2 agent calls"
    expect_trace_path w-0 w-1
    show_timeline
    expect_no_leftovers 5
    mv "$BED_DIR/trace.jsonl" "$BED_DIR/trace-$run.jsonl"
    mv "$BED_DIR/agent-calls.log" "$BED_DIR/agent-calls-$run.log"
  done

  # (3) Control: Open MPI 4's environment spelling alone does not reach Open MPI 5's launcher.
  start_job ompi5-ompi-env env -u PRTE_MCA_plm_ssh_agent OMPI_MCA_plm_rsh_agent="$agent" \
    mpirun --allow-run-as-root -H w-0,w-1 -np 2 "$hello"
  wait_job 30
  expect_rc_nonzero
  [[ ! -s "$BED_DIR/agent-calls.log" ]] || fail "OMPI_MCA_plm_rsh_agent reached Open MPI 5 (contract §2.2 says it is ignored)"
  step "OMPI_MCA_plm_rsh_agent alone: ignored by Open MPI 5 as documented (mpirun exit $JOB_RC, no agent call)"
  expect_no_leftovers 5

  # (4) The environment mpi-operator and Trainer give the launcher (Open MPI 4's names only: hostfile,
  # agent, its args), through images/ompi-env.sh as the launcher entrypoint sources it: the ranks run on
  # the workers, and each translation is said.
  cp "$BED_REPO_DIR/images/ompi-env.sh" "$BED_DIR/ompi-env.sh"
  printf 'w-0 slots=1\nw-1 slots=1\n' >"$BED_DIR/hostfile"
  rm -f "$BED_DIR/trace.jsonl" "$BED_DIR/agent-calls.log"
  start_job ompi5-operator-env env -u PRTE_MCA_plm_ssh_agent OMPI_MCA_plm_rsh_agent="$agent" \
    OMPI_MCA_orte_default_hostfile="$BED_DIR/hostfile" OMPI_MCA_plm_rsh_args="-o ConnectionAttempts=10" \
    sh -c '. "$1"; exec mpirun --allow-run-as-root -np 2 "$2"' sh "$BED_DIR/ompi-env.sh" "$hello"
  wait_job 60
  expect_rc 0
  expect_ranks 2
  expect_rank_hosts 1 w-0 w-1
  expect_output 'ignores OMPI_MCA_orte_default_hostfile; set PRTE_MCA_prte_default_hostfile='
  expect_output 'ignores OMPI_MCA_plm_rsh_agent; set PRTE_MCA_plm_ssh_agent='
  [[ "$(grep -c . "$BED_DIR/agent-calls.log")" == 2 ]] || fail "[operator-env] expected 2 agent calls"
  step "Open MPI 4 names from the operator, translated by ompi-env.sh: ranks on w-0 and w-1"
  expect_no_leftovers 5
  pass
}

# The network drops w-1 mid-job (its veth goes down: no FIN, no RST, sockets stay open). The agent for w-1
# notices through its SSH keepalives (ServerAliveInterval 1 x ServerAliveCountMax 2 via plm_rsh_args), exits
# 255 naming w-1 and "no answer"; mpirun ends with an error. Once the link is back, w-1's orted and sshd
# session learn that their peers are gone (the launcher side's retransmitted FINs) and nothing is left.
s14_link_cut() {
  need_agent
  bed_begin 2
  bed_all_ready || fail "workers not ready"
  local agent pid line ms cut_us
  agent="$(make_agent_exit_wrapper)"
  start_job mpi mpirun --allow-run-as-root --mca plm_rsh_agent "$agent" \
    --mca plm_rsh_args "-o ServerAliveInterval=1 -o ServerAliveCountMax=2" -H w-0,w-1 -np 2 "$HELLO" --sleep 60
  wait_for_lines "$JOB_OUT" '^mpi_hello rank=[0-9]+ sleeping' 2 30
  # A quiet but healthy job outlives several keepalive rounds (the ranks print nothing while they sleep):
  # counted on the wire, as the keepalive requests each worker's sshd received, not as time slept. Four
  # answered rounds (2 s ticks) outlast the 6 s of silence after which an agent gives up.
  local w0_base w1_base
  w0_base="$(sshd_data_segs_in w-0)" || fail "ss failed in w-0"
  w1_base="$(sshd_data_segs_in w-1)" || fail "ss failed in w-1"
  wait_for_cond 60 "4 keepalive rounds on w-0" segs_in_at_least w-0 $((w0_base + 4))
  wait_for_cond 60 "4 keepalive rounds on w-1" segs_in_at_least w-1 $((w1_base + 4))
  [[ ! -s "$BED_DIR/agent-exits.log" ]] || fail "an agent ended while every link was up: $(cat "$BED_DIR/agent-exits.log")"
  kill -0 "$JOB_PID" 2>/dev/null || fail "mpirun ended while every link was up"
  step "4 keepalive rounds answered on both links"
  step "link of w-1 ($(bed_pod_link w-1)) down"
  cut_us="$(now_us)"
  bed_pod_link_set w-1 down || fail "ip link set down failed"
  # Bounds catch a hang; how fast is bench/'s business (a loaded machine only makes it later).
  wait_for_lines "$BED_DIR/agent-exits.log" '^agent-exit ' 1 60
  ms=$((($(now_us) - cut_us) / 1000))
  step "first agent exit ${ms} ms after the cut: $(cat "$BED_DIR/agent-exits.log")"
  wait_job 60
  expect_rc_nonzero
  step "mpirun ended $((JOB_MS - (cut_us - JOB_T0_US) / 1000)) ms after the cut"
  pid="$(trace_pid w-1)"
  [[ -n "$pid" ]] || fail "no agent for w-1 in the trace"
  line="$(grep -E "^agent-exit pid=$pid " "$BED_DIR/agent-exits.log")" || fail "the agent for w-1 (pid $pid) did not exit"
  [[ "$line" == *" rc=255 "* ]] || fail "agent for w-1: $line, expected rc=255"
  expect_output 'k8s-agent: w-1: .*no answer'
  expect_trace grep w-1 failed 'no answer'
  # Detection: libssh2 (1.11.1, as 1.10) sends keepalives at most every 2 s (an interval of 1 becomes 2), so the tick
  # is 2 s and the agent gives up after CountMax + 1 = 3 silent ticks: it must have measured at least 6 s
  # of silence itself (load makes that later, never shorter). Never before: that would kill healthy links.
  local silence
  silence="$("$BED_PY" -c 'import json, re, sys
for line in open(sys.argv[1]):
    e = json.loads(line)
    if e.get("host") == "w-1" and e.get("event") == "failed":
        m = re.search(r"no answer from \S+ for ([0-9.]+)s ", e.get("detail", ""))
        print(m.group(1) if m else "?"); break' "$BED_DIR/trace.jsonl")"
  step "agent for w-1 gave up after ${silence} s of silence, ${ms} ms after the cut"
  "$BED_PY" -c 'import sys; sys.exit(0 if float(sys.argv[1]) >= 6.0 else 1)' "$silence" 2>/dev/null ||
    fail "agent for w-1 gave up after '${silence}' s of silence, expected >= 6.0 (CountMax + 1 ticks)"
  # The healthy link never looked dead: w-0's agent ended with the job, not by its keepalive check.
  trace grep w-0 failed 'no answer' >/dev/null 2>&1 && fail "the agent for w-0 (link up) reported no answer"
  # mpirun's own cleanup reached everything it can still reach: the launcher and w-0 are empty before the
  # link is back; only w-1 (unreachable) may still hold its orted, rank and sshd session.
  local left deadline=$(($(now_ms) + 10000))
  while left="$(bed_leftovers | grep -v '^w-1 ')"; [[ -n "$left" ]]; do
    (($(now_ms) > deadline)) && fail "left outside w-1 while its link is down: $(echo "$left" | tr '\n' ';')"
    sleep 0.05
  done
  step "launcher and w-0 clean; on w-1 while cut off: $(bed_leftovers | awk '{print $3}' | sort | uniq -c | tr -s ' \n' ' ')"
  step "link of w-1 up"
  bed_pod_link_set w-1 up || fail "ip link set up failed"
  expect_no_leftovers 30
  pass
}

# The k8s-agent process that holds w-1's orted session is SIGKILLed mid-job (no chance to clean up):
# mpirun sees its daemon's launcher die, reports a lost daemon and tears the job down; sshd on w-1 sees
# the connection close, and nothing is left in any pod.
s15_kill_agent() {
  need_agent
  bed_begin 2
  bed_all_ready || fail "workers not ready"
  local pid comm launcher_pids kill_us
  start_mpirun mpi -H w-0,w-1 -np 2 "$HELLO" --sleep 60
  wait_for_lines "$JOB_OUT" '^mpi_hello rank=[0-9]+ sleeping' 2 30
  pid="$(trace_pid w-1)"
  [[ -n "$pid" ]] || fail "no agent for w-1 in the trace"
  # It is the agent process itself (mpirun runs it directly), alive in the launcher pod.
  launcher_pids=" $(ip netns pids "$(bed_netns launcher)" | tr '\n' ' ')"
  [[ "$launcher_pids" == *" $pid "* ]] || fail "agent pid $pid (from the trace) is not in the launcher pod"
  comm="$(cat "/proc/$pid/comm" 2>/dev/null)"
  [[ "$comm" == k8s-agent ]] || fail "pid $pid is '$comm', not k8s-agent"
  step "SIGKILL the agent for w-1 (pid $pid)"
  kill_us="$(now_us)"
  kill -KILL "$pid" || fail "kill $pid failed"
  wait_job 20
  expect_rc_nonzero
  local after_ms=$((JOB_MS - (kill_us - JOB_T0_US) / 1000))
  step "mpirun ended ${after_ms} ms after the kill"
  ((after_ms < 10000)) || fail "mpirun ended ${after_ms} ms after the agent was killed, expected < 10000"
  # mpirun reports the lost daemon. Open MPI 4.1 uses its generic text for a launcher that dies, without
  # the node's name (plain ssh gets the same); the agent, SIGKILLed, can add nothing.
  expect_output 'ORTE was unable to reliably start one or more daemons'
  # The killed agent wrote nothing after "started" (no exit record); w-0's agent did not fail.
  if trace grep w-1 exited '' >/dev/null 2>&1 || trace grep w-1 failed '' >/dev/null 2>&1; then
    fail "the SIGKILLed agent recorded an end"
  fi
  expect_no_leftovers 15
  pass
}

# The agent under valgrind (memcheck, definite leaks are errors) as the launch agent of a 1-worker job:
# the job succeeds and every agent run reports no error and no definite leak. Third-party noise, should a
# library update bring some, goes to tests/valgrind.supp (empty so far: Debian 12's libraries are clean).
s16_valgrind() {
  need_agent
  command -v valgrind >/dev/null || skip "valgrind not installed (apt-get install valgrind)"
  bed_begin 1
  bed_all_ready || fail "workers not ready"
  local vg="$BED_DIR/valgrind" w="$BED_DIR/bin/agent-valgrind" supp="$BED_REPO_DIR/tests/valgrind.supp" f n=0
  mkdir -p "$vg" "$BED_DIR/bin"
  [[ -f "$supp" ]] || fail "missing $supp"
  # exec: mpirun's child is valgrind running the agent, so signals and stdio reach it as they would the agent.
  cat >"$w" <<EOW
#!/bin/sh
exec valgrind --leak-check=full --errors-for-leak-kinds=definite --error-exitcode=99 --suppressions=$supp \
  --log-file=$vg/vg.%p.log $E2E_AGENT --trace $BED_DIR/trace.jsonl "\$@"
EOW
  chmod 755 "$w"
  start_job mpi mpirun --allow-run-as-root --mca plm_rsh_agent "$w" -H w-0 -np 1 "$HELLO"
  wait_job 90
  expect_rc 0
  expect_ranks 1
  expect_trace_path w-0
  expect_trace order w-0 started exited
  for f in "$vg"/vg.*.log; do
    [[ -f "$f" ]] || continue
    n=$((n + 1))
    # valgrind writes its summaries after the agent's main returned, possibly after mpirun did: wait for
    # the last one (bounded) instead of reading a log that is still being written.
    wait_for_cond 60 "valgrind's summary in $(basename "$f")" grep -q 'ERROR SUMMARY:' "$f"
    grep -q 'Command: .*k8s-agent' "$f" || fail "$(basename "$f") is not a k8s-agent run: $(head -c 600 "$f")"
    if ! grep -qE 'ERROR SUMMARY: 0 errors from 0 contexts' "$f" ||
      ! grep -qE 'definitely lost: 0 bytes|All heap blocks were freed' "$f"; then
      fail "valgrind reported problems ($(basename "$f")): $(head -c 4000 "$f")"
    fi
  done
  ((n == 1)) || fail "expected 1 valgrind log (one agent run), found $n"
  step "valgrind: $n agent run(s), no errors, no definite leaks"
  expect_no_leftovers 5
  pass
}

# The images' own entrypoints in the bed: each worker pod runs k8s-agent-sshd (the worker image's
# ENTRYPOINT) as uid 1000 ("mpiuser"), which installs a Kubernetes-style ssh Secret (user key + ONE shared
# host key, layout of images/k8s/ssh-secret.example.yaml) and runs the system's sshd on 2222; the launcher pod runs
# images/launcher-entrypoint.sh as uid 1000, which writes ~/.ssh/config (Port 2222, known_hosts trusting the
# shared host key for "*") and execs mpirun. Like the images: PATH holds k8s-agent (as /usr/local/bin does),
# the preset ompi-conf/openmpi-mca-params.conf is bind-mounted on /etc/openmpi/ (plm_rsh_agent = k8s-agent),
# no option on the mpirun line. Job 1: direct launch; job 2: tree spawn (radix 1), where orted on w-0 runs
# k8s-agent for w-1 with the client config k8s-agent-sshd wrote.
# uid 1000 gets the name mpiuser and a per-pod HOME from passwd/group copies bind-mounted in each pod's
# private mount namespace: the host's user database, where uid 1000 may be someone else, is never touched.
s17_image_entrypoints() {
  need_agent
  command -v setpriv >/dev/null || skip "setpriv (util-linux) missing"
  [[ -x "${K8S_AGENT_SSHD:-}" ]] || fail "K8S_AGENT_SSHD must name the built k8s-agent-sshd (ctest sets it)"
  bed_begin 2
  local img="$BED_DIR/img" secret data pod f
  # uid 1000 walks through the bed dir to its own files, without being able to list it.
  chmod 711 "$BED_DIR"
  mkdir -p "$img/bin" "$img/etc" "$img/home"
  chmod 755 "$img" "$img/bin" "$img/etc" "$img/home"
  cp "$E2E_AGENT" "$img/bin/k8s-agent"
  cp "$K8S_AGENT_SSHD" "$img/bin/k8s-agent-sshd"
  cp "$HELLO" "$img/bin/mpi_hello"
  chmod 755 "$img/bin/k8s-agent" "$img/bin/k8s-agent-sshd" "$img/bin/mpi_hello"
  # The Secret as the kubelet mounts it: timestamped data dir, ..data symlink, per-key symlinks, files
  # root:fsGroup 0440, the directory world-writable and sticky.
  secret="$img/secret"
  data="..2024_01_01_00_00_00.000000001"
  mkdir -p "$secret/$data"
  ssh-keygen -q -t ed25519 -N '' -C mpi-job -f "$secret/$data/id_ed25519" || fail "ssh-keygen (user key)"
  ssh-keygen -q -t ed25519 -N '' -C mpi-workers -f "$secret/$data/ssh_host_ed25519_key" || fail "ssh-keygen (host key)"
  ln -s "$data" "$secret/..data"
  for f in id_ed25519 id_ed25519.pub ssh_host_ed25519_key ssh_host_ed25519_key.pub; do ln -s "..data/$f" "$secret/$f"; done
  chown -R 0:1000 "$secret"
  chmod 0440 "$secret/$data"/*
  chmod 2755 "$secret/$data"
  chmod 1777 "$secret"
  for pod in launcher w-0 w-1; do
    install -d -m 0755 -o 1000 -g 1000 "$img/home/$pod"
    mkdir -p "$img/etc/$pod"
    awk -F: -v home="$img/home/$pod" '$3 != 1000 { print } END { print "mpiuser:x:1000:1000::" home ":/bin/bash" }' \
      /etc/passwd >"$img/etc/$pod/passwd"
    awk -F: '$3 != 1000 { print } END { print "mpiuser:x:1000:" }' /etc/group >"$img/etc/$pod/group"
    chmod 644 "$img/etc/$pod/passwd" "$img/etc/$pod/group"
  done
  install -m 0644 -o 1000 -g 1000 /dev/null "$BED_DIR/trace.jsonl"
  # sshd's own reasons for refusing a key (StrictModes paths, authorized_keys, the user entry) are logged at
  # DEBUG1 (sshd-w-*.log; fail() prints them). E2E_SSHD_LOG_LEVEL overrides.
  local sshd_log_level="${E2E_SSHD_LOG_LEVEL:-DEBUG1}"
  # A pod's container process: root sets up the pod's view (user database, the image's preset), then the
  # image's USER 1000 and ENV, WORKDIR = HOME, and exec the entrypoint (pid kept all the way).
  cat >"$img/bin/as-mpiuser" <<EOW
#!/bin/sh
# usage: as-mpiuser POD CMD...  (as root inside the pod's mount namespace)
set -e
pod="\$1"
shift
# The pod's files go over the host's /etc as an overlay, not as bind mounts on the files: the kernel
# detaches a mount whose mount point is renamed over, in every namespace, so anything on the host that
# rewrites /etc/passwd meanwhile (useradd, a package's postinst: a new copy renamed over it) would give
# this pod the host's users, where uid 1000 is not mpiuser, and sshd would refuse the job key for a while
# (Invalid user). The pod's hosts and resolv.conf (bound by ip netns exec) are copied in for the same reason.
ov="\$(mktemp -d "$img/etc/\$pod/etc.XXXXXX")"
mkdir -p "\$ov/upper/openmpi" "\$ov/work"
cp "$img/etc/\$pod/passwd" "$img/etc/\$pod/group" /etc/hosts /etc/resolv.conf "\$ov/upper/"
cp "$BED_REPO_DIR/ompi-conf/openmpi-mca-params.conf" "\$ov/upper/openmpi/"
if ! mount -t overlay bedetc -o "lowerdir=/etc,upperdir=\$ov/upper,workdir=\$ov/work" /etc; then
  echo "as-mpiuser: no overlayfs: bind-mounting the files over /etc (a host-side rewrite of /etc/passwd undoes it)" >&2
  mount --bind "$img/etc/\$pod/passwd" /etc/passwd
  mount --bind "$img/etc/\$pod/group" /etc/group
  mount --bind "$BED_REPO_DIR/ompi-conf/openmpi-mca-params.conf" /etc/openmpi/openmpi-mca-params.conf
fi
cd "$img/home/\$pod"
exec setpriv --reuid=1000 --regid=1000 --clear-groups env -i HOME="$img/home/\$pod" USER=mpiuser LOGNAME=mpiuser \\
  PATH="$img/bin:/usr/local/bin:/usr/bin:/bin" SECRET_DIR="$secret" SSH_PORT=2222 \\
  KUBERNETES_SERVICE_HOST="$(bed_pod_ip apiserver)" KUBERNETES_SERVICE_PORT="$BED_API_PORT" \\
  K8S_AGENT_TRACE="$BED_DIR/trace.jsonl" "\$@"
EOW
  chmod 755 "$img/bin/as-mpiuser"
  # As the image runs it (no sshd beside it: /usr/sbin/sshd), with the Secret and a run dir of the pod's.
  export BED_SSHD_CMD="$img/bin/as-mpiuser \"\$1\" $img/bin/k8s-agent-sshd --keys $secret --run-dir $img/home/\"\$1\"/.sshd --log-level $sshd_log_level"
  export BED_SSHD_PIDFILE="$img/home/{pod}/.sshd/sshd.pid"
  bed_all_ready || fail "workers (k8s-agent-sshd) not ready"
  for pod in w-0 w-1; do
    f="$(bed_sshd_pidfile "$pod")"
    [[ "$(awk '/^Uid:/{print $2}' "/proc/$(cat "$f")/status")" == 1000 ]] || fail "sshd of $pod does not run as uid 1000"
    grep -q '^Port 2222$' "$img/home/$pod/.sshd/sshd_config" || fail "sshd of $pod: no Port 2222"
  done
  step "k8s-agent-sshd: sshd as uid 1000 on :2222 in w-0 and w-1"

  local run
  for run in direct tree; do
    : >"$BED_DIR/trace.jsonl"
    if [[ $run == direct ]]; then
      BED_CWD="$img/home/launcher" start_job "img-$run" "$img/bin/as-mpiuser" launcher \
        "$BED_REPO_DIR/images/launcher-entrypoint.sh" mpirun -H w-0,w-1 -np 2 "$img/bin/mpi_hello"
    else
      BED_CWD="$img/home/launcher" start_job "img-$run" "$img/bin/as-mpiuser" launcher \
        "$BED_REPO_DIR/images/launcher-entrypoint.sh" mpirun --mca routed_radix 1 -H w-0,w-1 -np 2 "$img/bin/mpi_hello"
    fi
    wait_job 40
    expect_rc 0
    expect_ranks 2
    expect_rank_hosts 1 w-0 w-1
    expect_trace_path w-0 w-1
    # Port 2222 came from the launcher's ~/.ssh/config (nothing on the command line says so).
    expect_trace grep w-0 ssh_ready ':2222'
    expect_trace grep w-1 ssh_ready ':2222'
    show_timeline
    expect_no_leftovers 5
  done
  grep -q '^  Port 2222$' "$img/home/launcher/.ssh/config" || fail "launcher-entrypoint.sh wrote no Port 2222"
  # Tree spawn: orted on w-0 ran k8s-agent for w-1 (as mpiuser, with the client config and known_hosts
  # that k8s-agent-sshd wrote on w-0), so w-1's sshd saw a login from w-0.
  grep -q 'Accepted publickey for mpiuser from '"$(bed_pod_ip w-0)" "$BED_DIR/log/sshd-w-1.log" ||
    fail "tree spawn: no login from w-0 to w-1 (sshd-w-1.log)"
  for pod in w-0 w-1; do
    grep -q "Accepted publickey for mpiuser from $(bed_pod_ip launcher)" "$BED_DIR/log/sshd-$pod.log" ||
      fail "no login as mpiuser from the launcher in sshd-$pod.log"
  done
  # The ranks ran as uid 1000.
  BED_CWD="$img/home/launcher" start_job img-id "$img/bin/as-mpiuser" launcher \
    "$BED_REPO_DIR/images/launcher-entrypoint.sh" mpirun -H w-0,w-1 -np 2 sh -c 'echo "uid=$(id -u) user=$(id -un) host=$(hostname)"'
  wait_job 30
  expect_rc 0
  expect_output '^uid=1000 user=mpiuser host=w-0$'
  expect_output '^uid=1000 user=mpiuser host=w-1$'
  step "ranks ran as uid 1000 (mpiuser) on w-0 and w-1"
  expect_no_leftovers 5
  pass
}

case "$E2E_NAME" in
list) printf '%s\n' "${SCENARIOS[@]}" ;;
s[0-9][0-9]*)
  declare -F "$E2E_NAME" >/dev/null || {
    echo "unknown scenario $E2E_NAME" >&2
    exit 2
  }
  [[ "$E2E_NAME" == s00_bed_selfcheck ]] && E2E_AGENT=ssh
  [[ -n "$E2E_AGENT" ]] || fail "no agent: pass --agent PATH (or ssh) or set K8S_AGENT"
  [[ "$E2E_AGENT" == ssh || -x "$E2E_AGENT" ]] || fail "k8s-agent not built: $E2E_AGENT"
  [[ $EUID -eq 0 ]] || skip "needs root (network namespaces)"
  "$E2E_NAME"
  ;;
*)
  sed -n '3,9p' "$0" >&2
  exit 2
  ;;
esac
