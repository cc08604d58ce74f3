# shellcheck shell=bash disable=SC2016
# SPDX-License-Identifier: Apache-2.0
# Scenarios s23-s25: keys, Secrets, sshd, hostfiles and pod names exactly as the operators
# make them, in the e2e bed. Sourced by e2e.sh after e2e_lib.sh.
#   s23 mpi-operator v0.8 (kubeflow/mpi-operator v0.8.x: newSSHAuthSecret, newWorker, newConfigMap, the
#       mpioperator/base image's /etc/ssh/ssh_config and ~/.sshd_config);
#   s24 Volcano's ssh and svc job plugins (pkg/controllers/job/plugins/{ssh,svc}, example/integrations/mpi);
#   s25 Kubeflow Trainer v2.3 on JobSet (pkg/runtime/framework/plugins/{mpi,jobset}, the MPI runtimes).
#
# Each pod's container process is a per-pod "enter" script run by the bed in the pod's own UTS + mount
# namespace: it sets the pod's hostname, lays the image's /etc over the host's (an overlay of the files the
# scenario wrote: passwd with the image's user, ssh configs, host keys, hostfile), mounts the pod's home and
# the Secret volume as the kubelet would, then runs the container's command as the image's user with the
# container's environment. The host's own files are never touched.

# The image built for a scenario: $OP_IMG/usr-local-bin (k8s-agent, seen in every pod as /usr/local/bin
# holds it in an image), $OP_IMG/bin (mpi_hello), $OP_IMG/pods/POD/{etc,home,enter}.
op_begin() {
  need_agent
  command -v setpriv >/dev/null || skip "setpriv (util-linux) missing"
  bed_begin "$1"
  OP_IMG="$BED_DIR/img"
  # Non-root pods walk through the bed dir to their own files without being able to list it.
  chmod 711 "$BED_DIR"
  mkdir -p "$OP_IMG/bin" "$OP_IMG/usr-local-bin" "$OP_IMG/pods"
  chmod 755 "$OP_IMG" "$OP_IMG/bin" "$OP_IMG/usr-local-bin" "$OP_IMG/pods"
  cp "$E2E_AGENT" "$OP_IMG/usr-local-bin/k8s-agent"
  cp "$HELLO" "$OP_IMG/bin/mpi_hello"
  chmod 755 "$OP_IMG/usr-local-bin/k8s-agent" "$OP_IMG/bin/mpi_hello"
  install -m 0666 /dev/null "$BED_DIR/trace.jsonl"
}

# op_user_db POD USER UID HOME SHELL: the image's passwd and group (the host's, with UID's entry replaced).
op_user_db() {
  local pod="$1" user="$2" uid="$3" home="$4" shell="$5" etc="$OP_IMG/pods/$1/etc"
  mkdir -p "$etc"
  awk -F: -v u="$user" -v id="$uid" -v h="$home" -v s="$shell" \
    '$3 != id && $1 != u { print } END { print u ":x:" id ":" id "::" h ":" s }' /etc/passwd >"$etc/passwd"
  awk -F: -v u="$user" -v id="$uid" '$3 != id && $1 != u { print } END { print u ":x:" id ":" }' /etc/group \
    >"$etc/group"
  chmod 644 "$etc/passwd" "$etc/group"
}

# A Secret volume as the kubelet writes it into DIR: the timestamped data dir, "..data" pointing at it and
# one symlink per top-level name ("id_rsa" -> "..data/id_rsa"; items ".ssh/id_rsa", ".ssh/config" share
# ".ssh" -> "..data/.ssh"). Items are "NAME=MODE=SOURCE" words; GID is the fsGroup (0 without one): files
# root:GID, directories setgid. Prints the data dir.
op_secret_volume() {
  local dir="$1" gid="$2" item name mode src data="..2025_01_01_00_00_00.000000001"
  shift 2
  mkdir -p "$dir/$data"
  for item in "$@"; do
    name="${item%%=*}"
    mode="${item#*=}"
    src="${mode#*=}"
    mode="${mode%%=*}"
    mkdir -p "$(dirname "$dir/$data/$name")"
    cp "$src" "$dir/$data/$name"
    chown 0:"$gid" "$dir/$data/$name"
    chmod "$mode" "$dir/$data/$name"
  done
  ln -s "$data" "$dir/..data"
  for item in "$@"; do
    name="${item%%=*}"
    name="${name%%/*}"
    [[ -e "$dir/$name" || -L "$dir/$name" ]] || ln -s "..data/$name" "$dir/$name"
  done
  find "$dir/$data" -type d -exec chown 0:"$gid" {} + -exec chmod 0755 {} +
  ((gid == 0)) || find "$dir/$data" -type d -exec chmod g+s {} +
  chown 0:"$gid" "$dir"
  chmod 1777 "$dir"
  printf '%s' "$dir/$data"
}

# op_pod_enter POD HOSTNAME FQDN UID GID HOME SECRET_SRC SECRET_MOUNT [ENV=VALUE...]: writes
# $OP_IMG/pods/POD/enter, the pod's container process ("enter CMD..."). HOME is the home in the pod (from
# $OP_IMG/pods/POD/home); SECRET_SRC is bind-mounted on SECRET_MOUNT (a Secret volume, or its subPath);
# GID is the fsGroup (a supplementary group, as the kubelet gives it), 0 for none. The ENV words are the
# container's env (operator-set variables), besides PATH, HOME, HOSTNAME and the service-account env.
op_pod_enter() {
  local pod="$1" host="$2" fqdn="$3" uid="$4" gid="$5" home="$6" secret_src="$7" secret_mnt="$8"
  shift 8
  local d="$OP_IMG/pods/$pod" env_words=() w become
  for w in "$@"; do env_words+=("'$w'"); done
  mkdir -p "$d/etc" "$d/home"
  chmod 755 "$d" "$d/etc"
  if ((uid == 0)); then
    become="env -i"
  else
    # The image's USER: uid, its primary group, and the fsGroup as a supplementary group.
    become="setpriv --reuid=$uid --regid=$uid $([[ $gid == 0 ]] && echo --clear-groups || echo --groups="$gid") env -i"
  fi
  cat >"$d/enter" <<EOW
#!/bin/sh
# The container process of pod $host (bed netns $pod): as root in the pod's mount namespace, then exec CMD
# as uid $uid with the container's env (the pid stays the same all the way).
set -e
hostname "$host"
# The image's /etc goes over the host's as an overlay, not as bind mounts on files: the kernel detaches a
# mount whose mount point is renamed over, so a host-side rewrite of /etc/passwd would undo a bind mount.
# The pod's hosts and resolv.conf (bound by ip netns exec) are copied in, with the kubelet's line for the
# pod's own name.
ov="\$(mktemp -d "$d/ov.XXXXXX")"
mkdir -p "\$ov/upper" "\$ov/work"
cp -a "$d/etc/." "\$ov/upper/"
cp /etc/hosts /etc/resolv.conf "\$ov/upper/"
printf '%s\t%s %s\n' "$(bed_worker_ip "$pod" 2>/dev/null || bed_pod_ip "$pod")" "$fqdn" "$host" >>"\$ov/upper/hosts"
mount -t overlay podetc -o "lowerdir=/etc,upperdir=\$ov/upper,workdir=\$ov/work" /etc ||
  { echo "enter: the pod's /etc needs overlayfs (mount -t overlay failed)" >&2; exit 1; }
# The image's /usr/local/bin holds k8s-agent (a read-only overlay): found on sshd's default PATH too, where
# an orted reads the preset's plm_rsh_agent.
mount -t overlay podbin -o "lowerdir=$OP_IMG/usr-local-bin:/usr/local/bin" /usr/local/bin
case "$home" in
/home/*) mount -t tmpfs -o mode=755,size=1m podhome /home && mkdir -p "$home" ;;
esac
mount --bind "$d/home" "$home"
mkdir -p "$secret_mnt"
mount --bind "$secret_src" "$secret_mnt"
cd "$home"
exec $become PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME="$home" HOSTNAME="$host" \\
  KUBERNETES_SERVICE_HOST="$(bed_pod_ip apiserver)" KUBERNETES_SERVICE_PORT="$BED_API_PORT" \\
  K8S_AGENT_TRACE="$BED_DIR/trace.jsonl" ${env_words[*]} "\$@"
EOW
  chmod 755 "$d/enter"
}

# op_publish POD NAME HOSTNAME SUBDOMAIN LABELS_JSON OWNERREFS_JSON: registers bed worker POD's netns in
# the API as pod NAME, Running and ready at its IP, with spec.hostname, spec.subdomain, labels and
# ownerReferences as the operator's controller sets them.
op_publish() {
  bed_pod_set "$2" "{\"phase\":\"Running\",\"podIP\":\"$(bed_worker_ip "$1")\",\"hostname\":\"$3\",\"subdomain\":\"$4\",\"labels\":$5,\"ownerReferences\":$6,\"ready\":true}"
}

# Starts the worker pods' sshd (each through its enter script) and waits until each listens.
op_start_workers() {
  local pod
  for pod in "$@"; do bed_sshd_spawn "$pod" || fail "sshd of $pod"; done
  for pod in "$@"; do bed_sshd_wait "$pod" || fail "sshd of $pod did not start"; done
}

# The agent's "started" event for HOST names pod POD.
op_expect_started_in() {
  uses_agent || return 0
  "$BED_PY" -c 'import json, sys
for line in open(sys.argv[1]):
    try: e = json.loads(line)
    except ValueError: continue
    if e.get("host") == sys.argv[2] and e.get("event") == "started" and e.get("pod") == sys.argv[3]:
        sys.exit(0)
sys.exit(1)' "$BED_DIR/trace.jsonl" "$1" "$2" || fail "trace: no start of $1 in pod $2"
}

# The SHA256 fingerprint of a public key file, as sshd logs it ("SHA256:...").
op_fingerprint() { ssh-keygen -l -E sha256 -f "$1" | awk '{print $2}'; }

# sshd of bed pod POD accepted USER's publickey of type TYPE with fingerprint FP from the launcher.
op_expect_accepted() {
  local pod="$1" user="$2" type="$3" fp="$4" line
  # The fingerprint is base64 ('+', '/'): matched as a fixed string.
  line="$(grep -E "^Accepted publickey for $user from $(bed_pod_ip launcher) port [0-9]+ ssh2: " \
    "$BED_DIR/log/sshd-$pod.log" | grep -F " $type $fp" | head -n 1)"
  [[ -n "$line" ]] || fail "sshd of $pod logged no 'Accepted publickey for $user ... $type $fp' from the launcher"
  step "sshd of $pod: $line"
}

# Debian's /etc/ssh/ssh_config with the mpioperator/base v0.8 Dockerfile's seds (ARG port=2222), into FILE.
op_base_ssh_config() {
  sed -e 's/[ #]\(.*StrictHostKeyChecking \).*/ \1no/g' -e 's/[ #]\(.*Port \).*/ \12222/g' /etc/ssh/ssh_config \
    >"$1"
  echo "    UserKnownHostsFile /dev/null" >>"$1"
  if ! grep -qE '^ +StrictHostKeyChecking no$' "$1" || ! grep -qE '^ +Port 2222$' "$1"; then
    fail "the base image's seds did not apply to /etc/ssh/ssh_config"
  fi
}

# op_base_pod POD HOSTNAME FQDN FSGROUP SECRET [ENV=VALUE...]: bed pod POD as a container of an image built
# on mpioperator/base v0.8 (mpi-operator's own images; Kubeflow Trainer's MPI runtimes copy its ssh_config,
# sshd_config and ~/.sshd_config): user mpiuser (uid 1000, `useradd -m`: /home/mpiuser, /bin/sh), the
# base's /etc/ssh/ssh_config, ~/.sshd_config (build/base/sshd_config + "Port 2222"), the Secret volume
# SECRET on /home/mpiuser/.ssh, run as uid 1000 (FSGROUP as supplementary group; 0: none). An image made
# for k8s-agent also holds the agent (/usr/local/bin) and the preset /etc/openmpi/openmpi-mca-params.conf
# (plm_rsh_agent = k8s-agent): nothing on the mpirun line names the agent.
op_base_pod() {
  local pod="$1" host="$2" fqdn="$3" fsgroup="$4" secret="$5" d="$OP_IMG/pods/$1"
  shift 5
  op_user_db "$pod" mpiuser 1000 /home/mpiuser /bin/sh
  mkdir -p "$d/etc/ssh" "$d/etc/openmpi"
  op_base_ssh_config "$d/etc/ssh/ssh_config"
  cp "$BED_REPO_DIR/ompi-conf/openmpi-mca-params.conf" "$d/etc/openmpi/"
  op_pod_enter "$pod" "$host" "$fqdn" 1000 "$fsgroup" /home/mpiuser "$secret" /home/mpiuser/.ssh "$@"
  printf 'PidFile /home/mpiuser/sshd.pid\nHostKey /home/mpiuser/.ssh/id_rsa\nStrictModes no\nPort 2222\n' \
    >"$d/home/.sshd_config"
  mkdir -p "$d/home/.ssh" # the kubelet's mount point
  chown -R 1000:1000 "$d/home"
}

# The launcher of an Open MPI job: POD's /etc/mpi/hostfile (the operator's ConfigMap, mode 0444) holds
# HOSTFILE.
op_launcher_hostfile() {
  local d="$OP_IMG/pods/$1"
  mkdir -p "$d/etc/mpi"
  printf '%s' "$2" >"$d/etc/mpi/hostfile"
  chmod 444 "$d/etc/mpi/hostfile"
}

# The controllers' key: a P-521 key in SEC1 PEM (openssl writes the same structure as Go's
# x509.MarshalECPrivateKey: version, private key, named-curve OID, public key) and its authorized_keys
# line (ssh.MarshalAuthorizedKey: "ecdsa-sha2-nistp521 AAAA...", no comment), into DIR/id_rsa{,.pub}.
op_p521_key() {
  mkdir -p "$1"
  openssl ecparam -name secp521r1 -genkey -noout -out "$1/id_rsa" 2>/dev/null || fail "openssl ecparam"
  chmod 600 "$1/id_rsa"
  grep -q '^-----BEGIN EC PRIVATE KEY-----$' "$1/id_rsa" || fail "not a SEC1 PEM key: $(head -c 80 "$1/id_rsa")"
  ssh-keygen -y -f "$1/id_rsa" >"$1/id_rsa.pub" || fail "ssh-keygen -y"
  grep -q '^ecdsa-sha2-nistp521 ' "$1/id_rsa.pub" || fail "public key is not ecdsa-sha2-nistp521"
}

# mpi-operator v0.8: the controller generates ONE ECDSA P-521 key (SEC1 PEM, "BEGIN EC PRIVATE KEY") into
# Secret <job>-ssh, items id_rsa, id_rsa.pub and authorized_keys (the public key twice), mounted at
# sshAuthMountPath /home/mpiuser/.ssh with the default mode 0644 and no fsGroup (examples/v2beta1/pi).
# Workers run `/usr/sbin/sshd -De -f /home/mpiuser/.sshd_config` as uid 1000: PidFile
# /home/mpiuser/sshd.pid, HostKey /home/mpiuser/.ssh/id_rsa (the job key is every worker's host key),
# StrictModes no, Port 2222. The launcher's ssh_config says StrictHostKeyChecking no, UserKnownHostsFile
# /dev/null, Port 2222. Worker pods are <job>-worker-<i>, spec.hostname = the pod name, spec.subdomain =
# <job> (the job's headless Service); the hostfile (ConfigMap <job>-config on /etc/mpi) has
# "<job>-worker-<i>.<job>.<ns>.svc slots=1"; the launcher's env has OMPI_MCA_orte_keep_fqdn_hostnames=true,
# OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile and OMPI_MCA_plm_rsh_args="-o ConnectionAttempts=10",
# and it runs `mpirun -n 2 PROGRAM` as uid 1000. The launcher starts with the workers (launcherCreationPolicy
# AtStartup, the default): worker 1 is still Pending then, and its container (sshd) starts 1.5 s later, the
# pod Running at once (no readiness probe) while sshd may not listen yet. The agent must not write a
# known_hosts anywhere (UserKnownHostsFile /dev/null).
s23_mpi_operator_keys() {
  op_begin 2
  local job=pi key="$BED_DIR/job-key" secret i name fqdn hostfile='' hosts=() fp
  op_p521_key "$key"
  fp="$(op_fingerprint "$key/id_rsa.pub")"
  secret="$OP_IMG/secret-$job-ssh"
  op_secret_volume "$secret" 0 "id_rsa=0644=$key/id_rsa" "id_rsa.pub=0644=$key/id_rsa.pub" \
    "authorized_keys=0644=$key/id_rsa.pub" >/dev/null
  for i in 0 1; do
    name="$job-worker-$i"
    fqdn="$name.$job.$BED_NS.svc"
    hosts+=("$fqdn")
    hostfile+="$fqdn slots=1"$'\n'
    op_base_pod "w-$i" "$name" "$fqdn.cluster.local" 0 "$secret" K_MPI_JOB_ROLE=worker
  done
  op_base_pod launcher "$job-launcher" "$job-launcher.$job.$BED_NS.svc.cluster.local" 0 "$secret" \
    K_MPI_JOB_ROLE=launcher OMPI_MCA_orte_keep_fqdn_hostnames=true OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile \
    'OMPI_MCA_plm_rsh_args=-o ConnectionAttempts=10'
  op_launcher_hostfile launcher "$hostfile"

  export BED_SSHD_CMD="$OP_IMG/pods/\$1/enter /usr/sbin/sshd -De -f /home/mpiuser/.sshd_config"
  export BED_SSHD_PIDFILE="$OP_IMG/pods/{pod}/home/sshd.pid"
  worker_pod() { # worker_pod I PHASE [EXTRA_JSON]: the controller's pod <job>-worker-I
    local ip=null
    [[ $2 == Pending ]] || ip="\"$(bed_worker_ip "w-$1")\""
    bed_pod_set "$job-worker-$1" "{\"phase\":\"$2\",\"podIP\":$ip,\"hostname\":\"$job-worker-$1\",\"subdomain\":\"$job\",\"labels\":{\"training.kubeflow.org/job-name\":\"$job\",\"training.kubeflow.org/operator-name\":\"mpi-operator\",\"training.kubeflow.org/job-role\":\"worker\",\"training.kubeflow.org/replica-index\":\"$1\"},\"ownerReferences\":[{\"apiVersion\":\"kubeflow.org/v2beta1\",\"kind\":\"MPIJob\",\"name\":\"$job\",\"uid\":\"6d1c3d5e-0000-4000-8000-00000000a023\",\"controller\":true,\"blockOwnerDeletion\":true}],\"ready\":$([[ $2 == Running ]] && echo true || echo false)${3:+,$3}}"
  }
  op_start_workers w-0
  [[ "$(awk '/^Uid:/{print $2}' "/proc/$(cat "$(bed_sshd_pidfile w-0)")/status")" == 1000 ]] ||
    fail "sshd of w-0 does not run as uid 1000"
  worker_pod 0 Running || fail "control API"
  worker_pod 1 Pending '"waitingReason":"ContainerCreating"' || fail "control API"
  step "pod $job-worker-0: sshd as uid 1000 on :2222, host key = the job's P-521 key $fp; $job-worker-1 Pending"

  BED_CWD=/ start_job mpi-operator "$OP_IMG/pods/launcher/enter" mpirun -n 2 "$OP_IMG/bin/mpi_hello"
  at_ms 1500
  step "$job-worker-1: container (sshd) starts, pod Running"
  bed_sshd_spawn w-1 || fail "sshd of w-1"
  worker_pod 1 Running || fail "control API"
  wait_job 60
  expect_rc 0
  expect_ranks 2
  expect_rank_hosts 1 "$job-worker-0" "$job-worker-1"
  expect_trace_path "${hosts[@]}"
  for i in 0 1; do
    expect_trace grep "${hosts[$i]}" resolved 'by name'
    expect_trace grep "${hosts[$i]}" ssh_ready ':2222'
    op_expect_accepted "w-$i" mpiuser ECDSA "$fp"
  done
  [[ "$(awk '/^Uid:/{print $2}' "/proc/$(cat "$(bed_sshd_pidfile w-1)")/status")" == 1000 ]] ||
    fail "sshd of w-1 does not run as uid 1000"
  local kh
  kh="$(find "$OP_IMG/pods" "$secret" -name 'known_hosts*' 2>/dev/null)"
  [[ -z "$kh" ]] || fail "a known_hosts file was written despite UserKnownHostsFile /dev/null: $kh"
  show_timeline
  expect_no_leftovers 5
  pass
}

# Volcano's job plugins (ssh: [], svc: [], example/integrations/mpi): the ssh plugin generates an RSA-2048
# key in PKCS#1 PEM ("BEGIN RSA PRIVATE KEY", x509.MarshalPKCS1PrivateKey) into Secret <job>-ssh, items
# .ssh/id_rsa, .ssh/id_rsa.pub, .ssh/authorized_keys and .ssh/config (StrictHostKeyChecking no,
# UserKnownHostsFile /dev/null, then "Host <pod>" / "HostName <pod>.<job>" / "Port 22" per task pod), mode
# 0600, mounted with subPath .ssh on /root/.ssh of every container. The svc plugin sets spec.hostname =
# the pod name <job>-<task>-<i> and spec.subdomain = <job>, and writes /etc/volcano/<task>.host with one
# "<pod>.<job>" per line. Everything runs as root: workers `sshd -D` with the image's own host keys (the
# same in every pod: generated when the image was built) and Ubuntu's sshd_config; the master runs
# `mpiexec --allow-run-as-root --host $(tr "\n" "," </etc/volcano/mpiworker.host) -np 2 PROGRAM` in
# /home. Bed-only changes: sshd gets -e (its log on stderr instead of a syslog socket) and a PidFile the
# bed can see; the master's own sshd (unused by the job) is not started.
s24_volcano_rsa_pkcs1() {
  op_begin 2
  local job=lm-mpi-job key="$BED_DIR/job-key" hk="$BED_DIR/image-host-keys" secret data pod i name t
  local config hosts=() fp
  mkdir -p "$key" "$hk"
  openssl genrsa -traditional -out "$key/id_rsa" 2048 2>/dev/null || fail "openssl genrsa"
  chmod 600 "$key/id_rsa"
  grep -q '^-----BEGIN RSA PRIVATE KEY-----$' "$key/id_rsa" || fail "not a PKCS#1 PEM key: $(head -c 80 "$key/id_rsa")"
  ssh-keygen -y -f "$key/id_rsa" >"$key/id_rsa.pub" || fail "ssh-keygen -y"
  fp="$(op_fingerprint "$key/id_rsa.pub")"
  config='StrictHostKeyChecking no'$'\n''UserKnownHostsFile /dev/null'$'\n'
  for t in mpimaster:1 mpiworker:2; do
    for ((i = 0; i < ${t#*:}; i++)); do
      name="$job-${t%:*}-$i"
      config+="Host $name"$'\n'"  HostName $name.$job"$'\n'"  Port 22"$'\n'
    done
  done
  printf '%s' "$config" >"$key/config"
  secret="$OP_IMG/secret-$job-ssh"
  data="$(op_secret_volume "$secret" 0 ".ssh/id_rsa=0600=$key/id_rsa" ".ssh/id_rsa.pub=0600=$key/id_rsa.pub" \
    ".ssh/authorized_keys=0600=$key/id_rsa.pub" ".ssh/config=0600=$key/config")"
  # The image's host keys, as openssh-server's postinst made them at build time.
  for t in rsa ecdsa ed25519; do
    ssh-keygen -q -t "$t" -N '' -C "root@buildkitsandbox" -f "$hk/ssh_host_${t}_key" || fail "ssh-keygen $t"
  done
  for pod in launcher w-0 w-1; do
    if [[ $pod == launcher ]]; then name="$job-mpimaster-0"; else name="$job-mpiworker-${pod#w-}"; fi
    op_user_db "$pod" root 0 /root /bin/bash
    mkdir -p "$OP_IMG/pods/$pod/etc/ssh" "$OP_IMG/pods/$pod/etc/volcano" "$OP_IMG/pods/$pod/etc/openmpi"
    cp -p "$hk"/ssh_host_* "$OP_IMG/pods/$pod/etc/ssh/"
    # Ubuntu 22.04's /etc/ssh/sshd_config, as the example image has it.
    printf '%s\n' 'Include /etc/ssh/sshd_config.d/*.conf' 'KbdInteractiveAuthentication no' 'UsePAM yes' \
      'X11Forwarding yes' 'PrintMotd no' 'AcceptEnv LANG LC_*' 'Subsystem sftp /usr/lib/openssh/sftp-server' \
      >"$OP_IMG/pods/$pod/etc/ssh/sshd_config"
    # The svc plugin's ConfigMap <job>-svc on /etc/volcano.
    printf '%s' "$job-mpimaster-0.$job" >"$OP_IMG/pods/$pod/etc/volcano/mpimaster.host"
    printf '%s\n%s' "$job-mpiworker-0.$job" "$job-mpiworker-1.$job" >"$OP_IMG/pods/$pod/etc/volcano/mpiworker.host"
    cp "$BED_REPO_DIR/ompi-conf/openmpi-mca-params.conf" "$OP_IMG/pods/$pod/etc/openmpi/"
    op_pod_enter "$pod" "$name" "$name.$job.$BED_NS.svc.cluster.local" 0 0 /root "$data/.ssh" /root/.ssh \
      "VC_MPIMASTER_HOSTS=$job-mpimaster-0.$job" VC_MPIMASTER_NUM=1 \
      "VC_MPIWORKER_HOSTS=$job-mpiworker-0.$job,$job-mpiworker-1.$job" VC_MPIWORKER_NUM=2
    mkdir -p "$OP_IMG/pods/$pod/home/.ssh"
    chmod 700 "$OP_IMG/pods/$pod/home"
  done

  export BED_SSHD_CMD="$OP_IMG/pods/\$1/enter /bin/sh -c \"mkdir -p /var/run/sshd; exec /usr/sbin/sshd -D -e -o PidFile=$OP_IMG/pods/\$1/sshd.pid\""
  export BED_SSHD_PIDFILE="$OP_IMG/pods/{pod}/sshd.pid"
  op_start_workers w-0 w-1
  for i in 0 1; do
    name="$job-mpiworker-$i"
    hosts+=("$name.$job")
    op_publish "w-$i" "$name" "$name" "$job" \
      "{\"volcano.sh/job-name\":\"$job\",\"volcano.sh/job-namespace\":\"$BED_NS\",\"volcano.sh/queue-name\":\"default\",\"volcano.sh/task-spec\":\"mpiworker\",\"volcano.sh/task-index\":\"$i\"}" \
      "[{\"apiVersion\":\"batch.volcano.sh/v1alpha1\",\"kind\":\"Job\",\"name\":\"$job\",\"uid\":\"6d1c3d5e-0000-4000-8000-00000000a024\",\"controller\":true,\"blockOwnerDeletion\":true}]" ||
      fail "control API"
  done
  step "pods $job-mpiworker-0/1: sshd as root on :22; job key RSA-2048 PKCS#1 $fp"

  # The master's command (example/integrations/mpi/mpi-example.yaml), without its own sshd.
  local cmd='MPI_HOST=`cat /etc/volcano/mpiworker.host | tr "\n" ","`; cd /home; exec mpiexec --allow-run-as-root "$@" --host ${MPI_HOST} -np 2 "$0"'
  # Job 1: the image carries the preset (orte_keep_fqdn_hostnames = 1): the agent gets "<pod>.<job>".
  # Job 2: Open MPI's own default (an image without the preset, as Volcano's example is) cuts the names
  # to "<pod>": the agent gets the bare pod name, for which ~/.ssh/config has "Host <pod>" / "HostName
  # <pod>.<job>" / "Port 22".
  local run
  for run in fqdn short; do
    : >"$BED_DIR/trace.jsonl"
    if [[ $run == fqdn ]]; then
      BED_CWD=/ start_job "volcano-$run" "$OP_IMG/pods/launcher/enter" /bin/sh -c "$cmd" "$OP_IMG/bin/mpi_hello"
    else
      hosts=("$job-mpiworker-0" "$job-mpiworker-1")
      BED_CWD=/ start_job "volcano-$run" "$OP_IMG/pods/launcher/enter" /bin/sh -c "$cmd" "$OP_IMG/bin/mpi_hello" \
        --mca orte_keep_fqdn_hostnames 0
    fi
    wait_job 60
    expect_rc 0
    expect_ranks 2
    expect_rank_hosts 1 "$job-mpiworker-0" "$job-mpiworker-1"
    expect_trace_path "${hosts[@]}"
    for i in 0 1; do
      expect_trace grep "${hosts[$i]}" resolved 'by name'
      expect_trace grep "${hosts[$i]}" ssh_ready ':22 '
    done
    show_timeline
    expect_no_leftovers 5
  done
  for i in 0 1; do
    (($(grep -c "^Accepted publickey for root from $(bed_pod_ip launcher) " "$BED_DIR/log/sshd-w-$i.log") >= 2)) ||
      fail "sshd of w-$i: expected a login from the launcher for each job"
    op_expect_accepted "w-$i" root RSA "$fp"
  done
  pass
}

# A pod-name suffix as the API server's generateName makes it (5 of utilrand's alphanumerics).
op_name_suffix() {
  local chars=bcdfghjklmnpqrstvwxz2456789 out='' i
  for ((i = 0; i < 5; i++)); do out+="${chars:RANDOM % ${#chars}:1}"; done
  printf '%s' "$out"
}

# Kubeflow Trainer v2.3 on JobSet (the MPI plugin, an OpenMPI runtime with runLauncherAsNode false): the
# same P-521 SEC1 key as mpi-operator in Secret <trainjob>-mpi-ssh-auth, but mounted with defaultMode 0400,
# id_rsa 0640, id_rsa.pub and authorized_keys 0644, under the runtime's fsGroup 1000; the images' ssh
# files come from mpioperator/base v0.8.2. The JobSet makes one Indexed Job <trainjob>-node-0 whose pods
# are named <trainjob>-node-0-<index>-<random> with spec.hostname <trainjob>-node-0-<index> (the JobSet
# pattern <jobset>-<replicatedjob>-<jobindex>-<podindex>) and spec.subdomain <trainjob>, labelled
# jobset.sigs.k8s.io/{jobset-name,replicatedjob-name,job-index} and batch.kubernetes.io/job-completion-index;
# the hostfile (ConfigMap <trainjob>-mpi-hostfile on /etc/mpi) lists the endpoints
# "<hostname>.<trainjob> slots=1"; the launcher's env adds OMPI_MCA_orte_set_default_slots=1. Node 1's
# first attempt Failed (the Job keeps it, same hostname) and its replacement is created only after mpirun
# started, Pending first: the agent must pass over the Failed pod and wait for the new one by hostname.
s25_jobset_hostnames() {
  op_begin 2
  local tj=mpi-tj key="$BED_DIR/job-key" secret i host hostfile='' hosts=() names=() fp owner failed
  op_p521_key "$key"
  fp="$(op_fingerprint "$key/id_rsa.pub")"
  secret="$OP_IMG/secret-$tj-mpi-ssh-auth"
  op_secret_volume "$secret" 1000 "id_rsa=0640=$key/id_rsa" "id_rsa.pub=0644=$key/id_rsa.pub" \
    "authorized_keys=0644=$key/id_rsa.pub" >/dev/null
  for i in 0 1; do
    host="$tj-node-0-$i"
    names+=("$host-$(op_name_suffix)")
    hosts+=("$host.$tj")
    hostfile+="$host.$tj slots=1"$'\n'
    op_base_pod "w-$i" "$host" "$host.$tj.$BED_NS.svc.cluster.local" 1000 "$secret"
  done
  op_base_pod launcher "$tj-launcher-0-0" "$tj-launcher-0-0.$tj.$BED_NS.svc.cluster.local" 1000 "$secret" \
    OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile OMPI_MCA_orte_keep_fqdn_hostnames=true \
    OMPI_MCA_orte_set_default_slots=1 'OMPI_MCA_plm_rsh_args=-o ConnectionAttempts=10'
  op_launcher_hostfile launcher "$hostfile"

  export BED_SSHD_CMD="$OP_IMG/pods/\$1/enter /usr/sbin/sshd -De -f /home/mpiuser/.sshd_config"
  export BED_SSHD_PIDFILE="$OP_IMG/pods/{pod}/home/sshd.pid"
  owner="[{\"apiVersion\":\"batch/v1\",\"kind\":\"Job\",\"name\":\"$tj-node-0\",\"uid\":\"6d1c3d5e-0000-4000-8000-00000000a025\",\"controller\":true,\"blockOwnerDeletion\":true}]"
  node_labels() {
    printf '{"jobset.sigs.k8s.io/jobset-name":"%s","jobset.sigs.k8s.io/replicatedjob-name":"node","jobset.sigs.k8s.io/replicatedjob-replicas":"1","jobset.sigs.k8s.io/job-index":"0","jobset.sigs.k8s.io/job-global-index":"0","batch.kubernetes.io/job-name":"%s-node-0","batch.kubernetes.io/job-completion-index":"%s","trainer.kubeflow.org/trainjob-ancestor-step":"trainer"}' \
      "$tj" "$tj" "$1"
  }
  op_start_workers w-0
  op_publish w-0 "${names[0]}" "$tj-node-0-0" "$tj" "$(node_labels 0)" "$owner" || fail "control API"
  # Node 1's first attempt: Failed, no IP, same hostname and labels (the Indexed Job keeps it).
  failed="$tj-node-0-1-$(op_name_suffix)"
  while [[ "$failed" == "${names[1]}" ]]; do failed="$tj-node-0-1-$(op_name_suffix)"; done
  bed_pod_set "$failed" "{\"phase\":\"Failed\",\"podIP\":null,\"hostname\":\"$tj-node-0-1\",\"subdomain\":\"$tj\",\"labels\":$(node_labels 1),\"ownerReferences\":$owner,\"reason\":\"Error\",\"message\":\"exit code 137\"}" ||
    fail "control API"
  step "pods ${names[0]} (Running), $failed (Failed); ${names[1]} comes later"

  BED_CWD=/ start_job trainer "$OP_IMG/pods/launcher/enter" mpirun -n 2 "$OP_IMG/bin/mpi_hello"
  at_ms 1500
  step "create ${names[1]} Pending (the Job's replacement), then Running with sshd"
  bed_pod_set "${names[1]}" "{\"phase\":\"Pending\",\"podIP\":null,\"hostname\":\"$tj-node-0-1\",\"subdomain\":\"$tj\",\"labels\":$(node_labels 1),\"ownerReferences\":$owner}" ||
    fail "control API"
  op_start_workers w-1
  op_publish w-1 "${names[1]}" "$tj-node-0-1" "$tj" "$(node_labels 1)" "$owner" || fail "control API"
  wait_job 60
  expect_rc 0
  expect_ranks 2
  expect_rank_hosts 1 "$tj-node-0-0" "$tj-node-0-1"
  expect_trace_path "${hosts[0]}"
  expect_trace order "${hosts[1]}" resolved pod_running ssh_ready started
  for i in 0 1; do
    expect_trace grep "${hosts[$i]}" resolved 'by controller labels'
    expect_trace grep "${hosts[$i]}" ssh_ready ':2222'
    op_expect_accepted "w-$i" mpiuser ECDSA "$fp"
  done
  # The agent ran the command in the live pods, never in the Failed attempt.
  for i in 0 1; do op_expect_started_in "${hosts[$i]}" "${names[$i]}"; done
  show_timeline
  expect_no_leftovers 5
  pass
}
