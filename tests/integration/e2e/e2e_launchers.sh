# shellcheck shell=bash disable=SC2016 # single-quoted snippets run inside the pods
# SPDX-License-Identifier: Apache-2.0
# s28-s30: the commands that launchers people put in front of mpirun run against the agent. DeepSpeed,
# Horovod and PyTorch are not installed here (none is a Debian 12 package but python3-torch, which pulls in
# some 200 packages), and are not installed from pip: each scenario runs the exact argv its launcher's
# source builds for a 2-host job (file and function named at each step; sources: DeepSpeed master of
# February 2025, 0.16.5, and Horovod 0.28.1), with small stand-ins for the training script. Sourced by
# e2e.sh.

# DeepSpeed `deepspeed --launcher openmpi --hostfile hostfile --master_addr IP --no_ssh_check ds_train.py
# --steps 1`, the launcher's environment holding NCCL_DEBUG=INFO, ~/.deepspeed_env one line.
# deepspeed/launcher/runner.py main(): without --no_ssh_check it first runs `ssh -o
# PasswordAuthentication=no FIRST_HOST hostname`, and without --master_addr `ssh FIRST_HOST hostname -I`
# (first word = master address): plain ssh, through DNS. Both are run here through the agent to show the
# `ssh` name would serve them too. With --launcher openmpi the master address is not used in the command at
# all (deepspeed/comm/comm.py mpi_discovery(): rank 0's `hostname -I`, sent to the others through mpi4py);
# passing it only skips that ssh. From 0.16.4 OpenMPIRunner.validate_args() also stops unless
# OMPI_COMM_WORLD_* are already set, i.e. outside mpirun: running the line below directly avoids it.
# deepspeed/launcher/multinode_runner.py OpenMPIRunner.get_cmd(): `mpirun -n <sum of slots> -hostfile F
# --mca btl ^openib --mca btl_tcp_if_include eth0 <launcher_args>`, then `-x K="V"` for UCX_TLS=tcp
# (OpenMPIRunner.__init__), for every launcher variable whose name starts with MLFLOW, PYTHON, MV2, UCX or
# the accelerator's prefixes (CUDA: NCCL) in environment order, PYTHONPATH (main() sets it to the working
# directory) and each line of .deepspeed_env (runner.py main(), ~ then .); then `sys.executable -u SCRIPT
# ARGS` with no deepspeed.launcher.launch in between. add_export() wraps each value in double quotes, which
# mpirun passes on as part of the value. The agent comes from the environment, as from the images' presets:
# DeepSpeed names none.
s28_deepspeed_openmpi_argv() {
  need_agent
  bed_begin 2
  bed_all_ready || fail "workers not ready"
  {
    printf 'HELLO = "%s"\n' "$HELLO"
    cat <<'EOP'
import os, socket, sys
e = os.environ.get
print("ds_env rank=%s local_rank=%s size=%s host=%s UCX_TLS=[%s] PYTHONPATH=[%s] NCCL_DEBUG=[%s] K8S_DS_ENV=[%s] args=%s"
      % (e("OMPI_COMM_WORLD_RANK"), e("OMPI_COMM_WORLD_LOCAL_RANK"), e("OMPI_COMM_WORLD_SIZE"),
         socket.gethostname(), e("UCX_TLS"), e("PYTHONPATH"), e("NCCL_DEBUG"), e("K8S_DS_ENV"),
         ",".join(sys.argv[1:])), flush=True)
os.execv(HELLO, [HELLO])  # the Allreduce of every scenario
EOP
  } >"$BED_DIR/ds_train.py"
  chmod 644 "$BED_DIR/ds_train.py"
  printf 'K8S_DS_ENV=from-file\n' >"$BED_DIR/home/.deepspeed_env"
  start_job ds bash -c '
    agent="$1" agent_str="$2" dir="$3"
    set -e
    "$agent" --hostfile --selector role=worker --slots 1 --wait-for-count 2 --timeout 30s >hostfile
    echo "hostfile: $(tr "\n" ";" <hostfile)"
    echo "ds-check: $("$agent" -o PasswordAuthentication=no w-0 hostname)"
    echo "ds-master: $("$agent" w-0 hostname -I)"
    OMPI_MCA_plm_rsh_agent="$agent_str" OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 \
      NCCL_DEBUG=INFO PYTHONPATH="$dir" \
      mpirun -n 2 -hostfile hostfile --mca btl ^openib --mca btl_tcp_if_include eth0 \
      -x UCX_TLS=\"tcp\" -x NCCL_DEBUG=\"INFO\" -x PYTHONPATH=\"$dir\" -x K8S_DS_ENV=\"from-file\" \
      /usr/bin/python3 -u ds_train.py --steps 1' bash "$E2E_AGENT" "$(agent_string)" "$BED_DIR"
  wait_job 60
  expect_rc 0
  expect_output '^hostfile: w-0 slots=1;w-1 slots=1;$'
  expect_output '^ds-check: w-0$'
  expect_output "^ds-master: $(bed_pod_ip w-0)( |$)"
  local host rank
  for rank in 0 1; do
    host="w-$rank"
    expect_output "^ds_env rank=$rank local_rank=0 size=2 host=$host UCX_TLS=\[\"tcp\"\] PYTHONPATH=\[\"$BED_DIR\"\] NCCL_DEBUG=\[\"INFO\"\] K8S_DS_ENV=\[\"from-file\"\] args=--steps,1$"
  done
  step "DeepSpeed's -x exports reached both ranks, quotes included"
  expect_ranks 2
  expect_rank_hosts 1 w-0 w-1
  expect_trace_path w-0 w-1
  expect_no_leftovers 5
  pass
}

# horovodrun `-np 2 -H w-0:1,w-1:1 -p 22 -i KEY python3 train.py` with Open MPI, k8s-agent under the name
# `ssh` in a writable directory of its own ($HOME/.local/k8s-agent-bin), first on horovodrun's PATH only.
# horovod/runner/launch.py _check_all_hosts_ssh_successful(): per remote host, in parallel, up to 5 times,
# through a shell (common/util/safe_shell_exec.execute), the line util/remote.py get_ssh_command() builds:
# `ssh -o PasswordAuthentication=no -o StrictHostKeyChecking=no HOST -p 22 -i KEY -o ConnectTimeout=10
# true` (options after HOST; `true` since Horovod 0.20, `date` before). Then driver/driver_service.py
# _launch_task_servers() runs `ssh ... HOST -p 22 -i KEY PYTHON -m horovod.runner.task_fn B64...` (not
# run here: it needs Horovod on the workers) and waits for them to register within --start-timeout
# (default 30 s, HOROVOD_START_TIMEOUT), a deadline that launch.py _run_static() starts before the ssh
# check, so the time the agent waits for pods counts against it. mpi_run.py mpi_run() then execs /bin/sh
# -c `mpirun --allow-run-as-root --tag-output -np 2 -H w-0:1,w-1:1 -bind-to none -map-by slot -mca pml ob1
# -mca btl ^openib -mca plm_rsh_args "-p 22 -i KEY" -mca btl_tcp_if_include eth0 -x
# NCCL_SOCKET_IFNAME=eth0 -x NAME...` (`-x` for every variable of its environment in sorted order but
# BASH_FUNC_*, OLDPWD, *CUDA_VISIBLE_DEVICES and HOROVOD_SECRET_KEY; eth0 is what its interface probe
# finds in a pod) and the quoted command. No plm_rsh_agent is set: mpirun finds `ssh` on PATH too. w-1's
# pod is created 2 s after the start.
s29_horovodrun_argv() {
  need_agent
  bed_begin 2
  bed_worker_ready w-0 || fail "w-0 not ready"
  bed_sshd_start w-1 || fail "sshd w-1"
  cat >"$BED_DIR/horovodrun_shape.py" <<'EOP'
# The commands horovodrun runs (see s29_horovodrun_argv in e2e_launchers.sh for the sources).
import os, re, shlex, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
hosts, key, command = sys.argv[1], sys.argv[2], sys.argv[3:]

def check(host):
    line = ("ssh -o PasswordAuthentication=no -o StrictHostKeyChecking=no %s -p 22 -i %s -o ConnectTimeout=10 true"
            % (host, key))
    for _ in range(5):
        rc = subprocess.call(line, shell=True)
        if rc == 0:
            break
    return line, rc

with ThreadPoolExecutor(4) as pool:
    for line, rc in pool.map(check, [h.split(":")[0] for h in hosts.split(",")]):
        print("hvd-check rc=%d: %s" % (rc, line), flush=True)
        if rc:
            sys.exit(1)
ignored = ("BASH_FUNC_.*", "OLDPWD", ".*CUDA_VISIBLE_DEVICES", "HOROVOD_SECRET_KEY")
env_list = " ".join("-x " + k for k in sorted(os.environ) if not any(re.match(r, k) for r in ignored))
mpirun = ("mpirun --allow-run-as-root --tag-output -np 2 -H %s -bind-to none -map-by slot -mca pml ob1 -mca btl ^openib"
          " -mca plm_rsh_args \"-p 22 -i %s\" -mca btl_tcp_if_include eth0 -x NCCL_SOCKET_IFNAME=eth0  %s  %s"
          % (hosts, key, env_list, " ".join(shlex.quote(c) for c in command)))
print("hvd-mpirun: " + mpirun, flush=True)
os.execve("/bin/sh", ["/bin/sh", "-c", mpirun], dict(os.environ))
EOP
  chmod 644 "$BED_DIR/horovodrun_shape.py"
  start_job hvd bash -c '
    agent="$1" dir="$2" w0="$3"
    set -e
    bin="$HOME/.local/k8s-agent-bin"
    mkdir -p "$bin"
    ln -sfn "$agent" "$bin/ssh"
    # Outside horovodrun, ssh is still OpenSSH, for interactive use (an IP: the bed has no pod DNS).
    echo "plain-ssh: $(command -v ssh) $(ssh -V 2>&1 | cut -d" " -f1) $(ssh "$w0" hostname)"
    echo "hvd-ssh: $(PATH="$bin:$PATH" command -v ssh)"
    PATH="$bin:$PATH" K8S_AGENT_TRACE="$dir/trace.jsonl" HOROVOD_FUSION_THRESHOLD=67108864 \
      /usr/bin/python3 "$dir/horovodrun_shape.py" w-0:1,w-1:1 "$HOME/.ssh/id_ed25519" "$4"
    ' bash "$E2E_AGENT" "$BED_DIR" "$(bed_worker_ip w-0)" "$HELLO"
  # w-1's pod appears 2 s in: the check waits for it (plain ssh would fail at once: no pod DNS), and that
  # wait is part of horovodrun's --start-timeout.
  at_ms 2000
  step "create pod w-1 (Running)"
  bed_worker_phase w-1 Running || fail "control API"
  wait_job 60
  expect_rc 0
  expect_output '^plain-ssh: /usr/bin/ssh OpenSSH_[^ ]+ w-0$'
  expect_output '^hvd-ssh: /root/.local/k8s-agent-bin/ssh$'
  expect_output '^hvd-check rc=0: ssh -o PasswordAuthentication=no -o StrictHostKeyChecking=no w-0 -p 22 -i /root/.ssh/id_ed25519 -o ConnectTimeout=10 true$'
  expect_output '^hvd-check rc=0: ssh -o PasswordAuthentication=no -o StrictHostKeyChecking=no w-1 -p 22 '
  expect_output '^hvd-mpirun: mpirun .* -mca plm_rsh_args "-p 22 -i /root/.ssh/id_ed25519" .* -x HOROVOD_FUSION_THRESHOLD( -x [^ ]+)* -x PATH '
  # --tag-output: every rank line is "[JOBID,RANK]<stdout>:"; the rank checks read the untagged lines.
  local tagged="$JOB_OUT"
  grep -qE '^\[[0-9]+,1\]<stdout>:mpi_hello rank=1 size=2 host=w-1 ' "$tagged" || fail "no tagged line of rank 1"
  JOB_OUT="$BED_DIR/out-hvd-untagged.txt"
  sed -E 's/^\[[0-9]+,[0-9]+\]<stdout>://' "$tagged" >"$JOB_OUT"
  expect_ranks 2
  expect_rank_hosts 1 w-0 w-1
  # Four agent runs: the two checks and mpirun's two orted launches, each through the `ssh` name.
  expect_trace_path w-0
  expect_trace order w-1 pod_running ssh_ready started
  expect_trace after w-1 pod_running "$JOB_T0_US" 1900
  local started
  started="$(grep -c '"started"' "$BED_DIR/trace.jsonl")"
  [[ "$started" == 4 ]] || fail "$started agent runs started a command, expected 4 (2 checks, 2 orteds)"
  expect_no_leftovers 5
  pass
}

# torchrun under mpirun, one per pod, with a c10d rendezvous endpoint by IP (headless-service DNS can lag
# behind the pods; torchrun itself uses no ssh). The IP is the first word of `hostname -I` on w-0, run by
# the agent, which first waits for w-0 (`hostname -i` needs the pod's own /etc/hosts entry, which the
# kubelet writes but this bed does not). The ranks stand in for torchrun's c10d rendezvous
# (torch/distributed/elastic/rendezvous/c10d_rendezvous_backend.py: the agent whose own address is the
# endpoint's host serves the TCPStore, the others connect to it, retrying).
s30_torchrun_rdzv_ip() {
  need_agent
  bed_begin 2
  bed_all_ready || fail "workers not ready"
  cat >"$BED_DIR/rdzv.py" <<'EOP'
import socket, subprocess, sys, time
host, port = sys.argv[sys.argv.index("--rdzv-endpoint") + 1].rsplit(":", 1)
me = socket.gethostname()
mine = subprocess.check_output(["hostname", "-I"], text=True).split()
if host in mine:  # the rendezvous host: serve the store, take one peer
    srv = socket.create_server(("", int(port)))
    srv.settimeout(30)
    conn, _ = srv.accept()
    peer = conn.recv(256).decode()
    conn.sendall(me.encode())
    print("rdzv host=%s endpoint=%s:%s is_host=1 peer=%s" % (me, host, port, peer), flush=True)
else:
    deadline = time.monotonic() + 30
    while True:
        try:
            conn = socket.create_connection((host, int(port)), timeout=5)
            break
        except OSError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    conn.sendall(me.encode())
    print("rdzv host=%s endpoint=%s:%s is_host=0 peer=%s" % (me, host, port, conn.recv(256).decode()), flush=True)
EOP
  chmod 644 "$BED_DIR/rdzv.py"
  start_job rdzv bash -c '
    agent="$1" agent_str="$2" dir="$3"
    set -e
    ip="$("$agent" w-0 hostname -I | cut -d" " -f1)"
    echo "rdzv-ip: $ip"
    mpirun --allow-run-as-root --mca plm_rsh_agent "$agent_str" -H w-0,w-1 -np 2 --map-by ppr:1:node \
      /usr/bin/python3 "$dir/rdzv.py" --nnodes 2 --rdzv-backend c10d --rdzv-endpoint "$ip:29500"
    ' bash "$E2E_AGENT" "$(agent_string)" "$BED_DIR"
  wait_job 60
  expect_rc 0
  local ip
  ip="$(bed_pod_ip w-0)"
  expect_output "^rdzv-ip: $ip$"
  expect_output "^rdzv host=w-0 endpoint=$ip:29500 is_host=1 peer=w-1$"
  expect_output "^rdzv host=w-1 endpoint=$ip:29500 is_host=0 peer=w-0$"
  step "rendezvous on w-0's IP $ip, served by w-0, reached from w-1"
  expect_trace_path w-0 w-1
  expect_no_leftovers 5
  pass
}
