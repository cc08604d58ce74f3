# shellcheck shell=bash disable=SC2016,SC2015 # single-quoted snippets run inside the pods
# SPDX-License-Identifier: Apache-2.0
# s26: workers from a stock image. Every pod runs in the cached Debian 13 minbase root with
# Open MPI 5 and no OpenSSH at all (tests/bed/minbase_root.sh: no sshd, no sshd user, no /run/sshd). What
# the pods get is what the delivery image's init container gives them: k8s-agent-deliver copies k8s-agent,
# k8s-agent-sshd and the portable sshd (scripts/sshd_build.sh) into a shared directory, and the workers'
# container command is that directory's k8s-agent-sshd on the job's Secret, mounted as the kubelet does.
# Sourced by e2e.sh after e2e_operators.sh (op_secret_volume, op_p521_key).

# stock_begin N: the caches, N worker pods in the minbase root, the delivered directory. Sets STOCK_OPT.
stock_begin() {
  local n="$1" rc repo sshd_dir stage out f
  repo="$(cd "$BED_SRC_DIR/../.." && pwd)"
  need_agent
  [[ -x "${K8S_AGENT_SSHD:-}" && -x "${K8S_AGENT_DELIVER:-}" ]] ||
    fail "K8S_AGENT_SSHD and K8S_AGENT_DELIVER must name the built binaries (ctest sets them)"
  step "portable sshd: $(bash "$repo/scripts/sshd_build.sh" path)"
  sshd_dir="$(bash "$repo/scripts/sshd_build.sh" ensure)" || fail "building the portable sshd failed (above)"
  step "stock root: $(bash "$BED_SRC_DIR/minbase_root.sh" path)"
  local root
  root="$(bash "$BED_SRC_DIR/minbase_root.sh" ensure)"
  rc=$?
  ((rc == 77)) && skip "no cached Debian 13 minbase root and it cannot be built here (see the line above)"
  ((rc == 0)) && [[ -d "$root" ]] || fail "building the minbase root failed (exit $rc)"
  [[ ! -e "$root/usr/sbin/sshd" ]] || fail "the stock root has an sshd of its own"
  bed_gc
  bed_up "$n" || fail "bed did not come up"
  export BED_CHROOT="$root"
  # Non-root pods walk through the bed dir to their files without being able to list it.
  chmod 711 "$BED_DIR"
  # The delivery image's root, and its init container's copy into an emptyDir (mode 0777).
  stage="$BED_DIR/delivery-image"
  mkdir -p "$stage"
  cp "$K8S_AGENT_DELIVER" "$stage/k8s-agent-deliver"
  cp "$E2E_AGENT" "$stage/k8s-agent"
  cp "$K8S_AGENT_SSHD" "$stage/k8s-agent-sshd"
  for f in sshd sshd-session sshd-auth; do cp "$sshd_dir/$f" "$stage/"; done
  cp "$repo/ompi-conf/openmpi-mca-params.conf" "$repo/ompi-conf/prte-mca-params.conf" \
    "$repo/images/ompi-env.sh" "$stage/"
  STOCK_OPT="$BED_DIR/opt-k8s-agent"
  install -d -m 0777 "$STOCK_OPT"
  out="$(setpriv --reuid=65532 --regid=65532 --clear-groups "$stage/k8s-agent-deliver" "$STOCK_OPT" 2>&1)" ||
    fail "k8s-agent-deliver: $out"
  step "$out"
  step "bed ready: $BED_DIR net $(bed_cidr), $n workers in $root"
}

# stock_client DIR USER PORT KEY HOST_PUB: the launcher's ssh settings for the job (K8S_AGENT_SSH_CONFIG),
# the shared host key checked strictly.
stock_client() {
  local d="$1" kt kb
  mkdir -p "$d"
  install -m 0600 "$4" "$d/id_job"
  read -r kt kb _ <"$5"
  printf '*,[*]:%s %s %s\n' "$3" "$kt" "$kb" >"$d/known_hosts"
  printf 'Host *\n  User %s\n  Port %s\n  IdentityFile %s\n  IdentitiesOnly yes\n  UserKnownHostsFile %s\n  StrictHostKeyChecking yes\n  BatchMode yes\n' \
    "$2" "$3" "$d/id_job" "$d/known_hosts" >"$d/config"
}

# The ranks' `hostname` lines: exactly these hosts, once each.
stock_expect_hosts() {
  local want got
  want="$(printf '%s\n' "$@" | sort | tr '\n' ' ')"
  got="$(grep -xE 'w-[0-9]+' "$JOB_OUT" | sort | tr '\n' ' ')"
  [[ "$got" == "$want" ]] || fail "ranks ran on '$got', expected '$want'"
}

# (A) mpi-operator's Secret (one ECDSA P-521 PEM key as id_rsa, id_rsa.pub, authorized_keys; 0644; the
# user key is the host key), workers' k8s-agent-sshd as root on port 22, Open MPI 5 with tree spawn at
# radix 1: launcher -> w-0 -> w-1 -> w-2, each prted on a worker running the delivered agent with the ssh
# settings k8s-agent-sshd wrote (handed to its sessions through SetEnv). w-2 starts late.
# (B) the project's Secret layout (user key, a host key of its own) with workers' k8s-agent-sshd as uid
# 1000 (runAsNonRoot) on port 2222: sshd serves that uid's user only; a direct launch on both.
s26_stock_workers() {
  stock_begin 3
  local key="$BED_DIR/job-key" secret i pid out
  op_p521_key "$key"
  secret="$BED_DIR/secret-mpi-operator"
  op_secret_volume "$secret" 0 "id_rsa=0644=$key/id_rsa" "id_rsa.pub=0644=$key/id_rsa.pub" \
    "authorized_keys=0644=$key/id_rsa.pub" >/dev/null
  export BED_SSHD_CMD="$STOCK_OPT/k8s-agent-sshd --port 22 --keys $secret --run-dir $BED_DIR/sshd/\$1/run"
  export BED_SSHD_PIDFILE="$BED_DIR/sshd/{pod}/run/sshd.pid"
  for i in 0 1; do bed_sshd_start "w-$i" && bed_worker_phase "w-$i" Running || fail "w-$i did not start"; done
  bed_worker_phase w-2 Pending '"waitingReason":"ContainerCreating"' || fail "control API"
  step "w-0, w-1: $(grep -m1 '^k8s-agent-sshd: ' "$BED_DIR/log/sshd-w-0.log")"
  stock_client "$BED_DIR/client-a" root 22 "$key/id_rsa" "$key/id_rsa.pub"
  E2E_AGENT="$STOCK_OPT/k8s-agent"
  TREE_AGENT="$(make_tree_agent_wrapper)"
  rm -f "$BED_DIR/trace.jsonl" "$BED_DIR/agent-calls.log"
  start_job stock-tree env K8S_AGENT_SSH_CONFIG="$BED_DIR/client-a/config" \
    mpirun --allow-run-as-root --prtemca plm_ssh_agent "$TREE_AGENT" --prtemca rml_base_radix 1 \
    -H w-0,w-1,w-2 -np 3 hostname
  wait_for_lines "$BED_DIR/trace.jsonl" '"event": ?"resolved".*"host": ?"w-2"' 1 60
  step "the agent on w-1 waits for w-2: its container starts"
  bed_sshd_start w-2 || fail "w-2 did not start"
  bed_worker_phase w-2 Running || fail "control API"
  wait_job 90
  expect_rc 0
  stock_expect_hosts w-0 w-1 w-2
  expect_tree_calls 3
  for i in 0 1; do
    grep -qE "^agent-call from=w-$i parent=prted .* w-$((i + 1)) PRTE_PREFIX=" "$BED_DIR/agent-calls.log" ||
      fail "radix 1: w-$((i + 1)) was not launched from w-$i"
  done
  for i in 0 1 2; do
    grep -q "Accepted publickey for root from .* ECDSA" "$BED_DIR/log/sshd-w-$i.log" ||
      fail "w-$i: no login with the job's P-521 key: $(tail -3 "$BED_DIR/log/sshd-w-$i.log")"
  done
  show_timeline
  for i in 0 1 2; do bed_sshd_stop "w-$i"; done

  # (B)
  local etc="$BED_DIR/stock-etc" ukey="$BED_DIR/job-key-b"
  mkdir -p "$etc" "$ukey"
  { cat "$BED_CHROOT/etc/passwd"; echo "mpiuser:x:1000:1000::/tmp:/bin/sh"; } >"$etc/passwd"
  { cat "$BED_CHROOT/etc/group"; echo "mpiuser:x:1000:"; } >"$etc/group"
  chmod 0644 "$etc/passwd" "$etc/group"
  export BED_CHROOT_BINDS="$etc/passwd=/etc/passwd $etc/group=/etc/group"
  ssh-keygen -q -t ed25519 -N '' -C job-user -f "$ukey/id_ed25519"
  ssh-keygen -q -t ed25519 -N '' -C job-host -f "$ukey/ssh_host_ed25519_key"
  secret="$BED_DIR/secret-project"
  op_secret_volume "$secret" 0 "id_ed25519=0644=$ukey/id_ed25519" "id_ed25519.pub=0644=$ukey/id_ed25519.pub" \
    "ssh_host_ed25519_key=0644=$ukey/ssh_host_ed25519_key" \
    "ssh_host_ed25519_key.pub=0644=$ukey/ssh_host_ed25519_key.pub" >/dev/null
  for i in 0 1; do install -d -m 0700 -o 1000 -g 1000 "$BED_DIR/sshd/w-$i/run-b"; done
  export BED_SSHD_CMD="setpriv --reuid=1000 --regid=1000 --clear-groups $STOCK_OPT/k8s-agent-sshd --keys $secret --run-dir $BED_DIR/sshd/\$1/run-b"
  export BED_SSHD_PIDFILE="$BED_DIR/sshd/{pod}/run-b/sshd.pid"
  for i in 0 1; do bed_sshd_start "w-$i" && bed_worker_phase "w-$i" Running || fail "w-$i (uid 1000) did not start"; done
  for i in 0 1; do
    pid="$(cat "$BED_DIR/sshd/w-$i/run-b/sshd.pid")"
    [[ "$(awk '/^Uid:/{print $2}' "/proc/$pid/status")" == 1000 ]] || fail "sshd of w-$i does not run as uid 1000"
  done
  stock_client "$BED_DIR/client-b" mpiuser 2222 "$ukey/id_ed25519" "$ukey/ssh_host_ed25519_key.pub"
  rm -f "$BED_DIR/trace.jsonl"
  start_job stock-uid1000 env K8S_AGENT_SSH_CONFIG="$BED_DIR/client-b/config" K8S_AGENT_TRACE="$BED_DIR/trace.jsonl" \
    mpirun --allow-run-as-root --prtemca plm_ssh_agent "$STOCK_OPT/k8s-agent" -H w-0,w-1 -np 2 \
    sh -c 'echo "$(hostname) $(id -un)" >&2; hostname'
  wait_job 60
  expect_rc 0
  stock_expect_hosts w-0 w-1
  expect_output '^w-0 mpiuser$'
  expect_output '^w-1 mpiuser$'
  for i in 0 1; do
    grep -q "Accepted publickey for mpiuser from .* ED25519" "$BED_DIR/log/sshd-w-$i.log" ||
      fail "w-$i: no mpiuser login: $(tail -3 "$BED_DIR/log/sshd-w-$i.log")"
  done
  out="$(grep '^k8s-agent-sshd: ' "$BED_DIR/log/sshd-w-0.log" | tail -n 1)"
  [[ "$out" == *"for mpiuser; host key $secret/ssh_host_ed25519_key (a host key of its own)"* ]] ||
    fail "w-0's start-up line: $out"
  step "uid 1000: $out"
  expect_no_leftovers 10
  pass
}
