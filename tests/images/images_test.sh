#!/bin/bash
# shellcheck disable=SC2016,SC2034 # snippets run in the containers; e2e_lib.sh reads E2E_*, JOB_*
# SPDX-License-Identifier: Apache-2.0
# The container images, built and run for real: scripts/images.sh builds them with podman, then each
# scenario runs them as the pods of an e2e bed (tests/bed/bed.sh): `podman run --network ns:/run/netns/POD`
# joins the pod's network namespace, which plays the pause container. The job's ssh Secret is mounted as
# the kubelet lays it out (timestamped dir, ..data symlinks, files root:fsGroup 0440, dir 1777), the
# service-account files as in-cluster. Every container runs as uid 1000 with --cap-drop ALL.
#
# usage: images_test.sh [--build-dir DIR] SCENARIO     (DIR: the CMake build with k8s-agent; default build/)
#   build               scripts/images.sh (cold or warm), the Debian 13 base, the images' contents; each
#                       image's OCI labels (this build's version, HEAD, the commit's date) and SBOM (JSON,
#                       the checksums of the binaries in it); the default tag is the release version
#   worker_sshd         worker sshd as uid 1000 without capabilities; k8s-agent logs in on 2222; the same
#                       with a read-only root file system
#   launcher_tree_late  the launcher's mpirun (its entrypoint, its preset) with tree spawn through the
#                       workers' own k8s-agent, over worker pods that start late
#   delivery_debian13   the delivery image fills an emptyDir (and serves as an image volume); an unchanged
#                       Debian 13 image runs the agent from it and launches a job on the workers
#   stock_workers       workers from the stock Debian 13 image (no OpenSSH) run the delivered
#                       k8s-agent-sshd; a stock launcher reaches them; SIGTERM ends the worker
#   stock_workers_userns  the same worker as root in a user namespace of its own (hostUsers: false): host
#                       uid 100000, sshd's privilege separation inside it, a root login
#   multiarch           scripts/images.sh --arch amd64,arm64 (tag multiarch-test, removed after): the
#                       manifest list has both platforms; the arm64 image, run under qemu-user, delivers
#                       an aarch64 agent and workers' side (their SBOM checksums); the delivered
#                       k8s-agent-sshd and sshd serve the host's ssh under qemu (binfmt_misc)
#   release             scripts/release.sh --images (into a temporary dir; the version's images removed
#                       after unless there before): SHA256SUMS verifies the OCI archives and IMAGES, each
#                       archive holds the manifest of IMAGES' digest and this build's labels, podman load
#                       gives that name and digest; a tampered archive fails; later runs keep or drop IMAGES
# Exit: 0 pass, 1 fail, 77 skip (not root, podman missing, images not built).
set -uo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
build_dir="$repo/build"
if [[ "${1:-}" == --build-dir ]]; then
  build_dir="$(realpath -m "$2")"
  shift 2
fi
scenario="${1:-}"
E2E_NAME="images_$scenario"
E2E_AGENT="$build_dir/launcher/k8s-agent"
# shellcheck source=../integration/e2e/e2e_lib.sh
. "$repo/tests/integration/e2e/e2e_lib.sh"
# shellcheck source=podman_conf.sh
. "$here/podman_conf.sh"

TAG=latest
WORKER_IMAGE="k8s-agent-worker:$TAG"
LAUNCHER_IMAGE="k8s-agent-launcher:$TAG"
DELIVERY_IMAGE="k8s-agent:$TAG"
DEBIAN13_IMAGE="debian:trixie-slim"
IMG_CONTAINERS=()
WORKER_RUN_ARGS=() # More podman run arguments for the next worker.

img_prereqs() {
  [[ $EUID -eq 0 ]] || skip "needs root (network namespaces, podman's root store)"
  command -v podman >/dev/null || skip "podman not installed (scripts/test.sh installs it)"
  command -v runc >/dev/null || skip "runc not installed (scripts/test.sh installs it)"
  podman_test_conf "$build_dir/images-test"
}

img_need_images() {
  local i
  for i in "$@"; do
    podman image exists "$i" || skip "image $i not built (the images.build test builds it)"
  done
}

# Removes this scenario's containers (by name), then the bed.
img_down() {
  ((${#IMG_CONTAINERS[@]})) && podman rm -f -i -t 0 "${IMG_CONTAINERS[@]}" >/dev/null 2>&1
  bed_down
}

# Containers of beds whose test was killed (a ctest timeout sends SIGKILL: no trap runs). Container names
# start with their bed's prefix; a bed still up has a state file naming it.
img_gc() {
  local name prefix
  bed_gc
  while read -r name; do
    prefix="${name%%-*}"
    grep -qsx "BED_PREFIX=$prefix" /tmp/k8s-agent-bed.*/state ||
      podman rm -f -i -t 0 "$name" >/dev/null 2>&1
  done < <(podman ps -a --format '{{.Names}}' | grep -E '^kab[0-9a-f]{4}-')
}

img_bed_up() {
  img_gc
  BED_NO_TRAP=1 bed_up "$1" || fail "bed did not come up"
  trap 'img_down' EXIT
  trap 'img_down; trap - INT; kill -INT $$' INT
  trap 'img_down; trap - TERM; kill -TERM $$' TERM
  # What every container may write: the trace and the job's output (uid 1000).
  SHARED="$BED_DIR/shared"
  mkdir -p "$SHARED"
  chmod 0777 "$SHARED"
  install -m 0666 /dev/null "$SHARED/trace.jsonl"
  ln -sf "$SHARED/trace.jsonl" "$BED_DIR/trace.jsonl"
  img_make_secret
  step "bed up: $BED_DIR net $(bed_cidr)"
}

# The job's Secret as the kubelet mounts it with defaultMode 0440 and fsGroup 1000: files under a
# timestamped directory, a ..data symlink to it, one symlink per key; files root:1000 0440, the directory
# world-writable and sticky. known_hosts trusts the one shared host key for every worker name.
img_make_secret() {
  local data="..2026_01_01_00_00_00.000000001" f kt kb
  SECRET="$BED_DIR/secret"
  mkdir -p "$SECRET/$data"
  ssh-keygen -q -t ed25519 -N '' -C mpi-job -f "$SECRET/$data/id_ed25519" || fail "ssh-keygen (user key)"
  ssh-keygen -q -t ed25519 -N '' -C mpi-workers -f "$SECRET/$data/ssh_host_ed25519_key" || fail "ssh-keygen (host key)"
  read -r kt kb _ <"$SECRET/$data/ssh_host_ed25519_key.pub"
  printf 'w-*,[w-*]:2222 %s %s\n' "$kt" "$kb" >"$SECRET/$data/known_hosts"
  ln -s "$data" "$SECRET/..data"
  for f in id_ed25519 id_ed25519.pub ssh_host_ed25519_key ssh_host_ed25519_key.pub known_hosts; do
    ln -s "..data/$f" "$SECRET/$f"
  done
  chown -R 0:1000 "$SECRET"
  chmod 0440 "$SECRET/$data"/*
  chmod 2755 "$SECRET/$data"
  chmod 1777 "$SECRET"
}

# podman run arguments that make a container (named NAME, default POD) part of bed pod POD, as a kubelet
# would: the pod's netns, its hostname, the cluster's names, the Secret and the service account, uid 1000
# with no capabilities.
img_pod_args() {
  local pod="$1" name="$BED_PREFIX-${2:-$1}"
  IMG_CONTAINERS+=("$name")
  POD_ARGS=(--name "$name" --network "ns:/run/netns/$(bed_netns "$pod")" --hostname "$pod"
    --add-host "kubernetes.default.svc:$(bed_pod_ip apiserver)" --add-host "launcher:$(bed_pod_ip launcher)"
    --dns 127.0.0.1 --user 1000:1000 --cap-drop ALL --security-opt no-new-privileges
    -v "$SECRET:/etc/ssh-secret:ro" -v "$BED_DIR/sa:/var/run/secrets/kubernetes.io/serviceaccount:ro"
    -v "$SHARED:/bed" -e "KUBERNETES_SERVICE_HOST=$(bed_pod_ip apiserver)"
    -e "KUBERNETES_SERVICE_PORT=$BED_API_PORT" -e K8S_AGENT_TRACE=/bed/trace.jsonl
    -e "WORKER_HOST_PATTERN=w-*")
}

# Starts worker POD's container (the image's entrypoint: sshd on 2222) and waits until sshd listens.
# WORKER_RUN_ARGS are added to its podman run arguments.
# With "nowait" as $2 it only starts it (the pod is Running before its sshd answers, as on a cluster).
img_worker_start() {
  local pod="$1"
  img_pod_args "$pod"
  podman run -d "${POD_ARGS[@]}" "${WORKER_RUN_ARGS[@]}" "$WORKER_IMAGE" >/dev/null ||
    fail "podman run $WORKER_IMAGE for $pod failed"
  [[ "${2:-}" == nowait ]] || img_worker_wait "$pod"
}

img_worker_wait() {
  local pod="$1" deadline=$((SECONDS + 30))
  until podman logs "$BED_PREFIX-$pod" 2>&1 | grep -q 'Server listening on 0.0.0.0 port 2222'; do
    if ((SECONDS > deadline)) || [[ "$(podman inspect -f '{{.State.Running}}' "$BED_PREFIX-$pod" 2>/dev/null)" != true ]]; then
      podman logs "$BED_PREFIX-$pod" 2>&1 | tail -n 20
      fail "sshd of $pod did not listen on 2222"
    fi
    sleep 0.05
  done
}

# Runs `podman run ARGS...` in the background as the job (see e2e_lib's wait_job); output in out-TAG.txt.
img_start_job() {
  local tag="$1"
  shift
  JOB_OUT="$BED_DIR/out-$tag.txt"
  JOB_T0_US="$(now_us)"
  step "start [$tag]: podman run ${*: -6}"
  podman run "$@" >"$JOB_OUT" 2>&1 </dev/null &
  JOB_PID=$!
}

# The init container: the delivery image's default command fills DIR, an emptyDir (mode 0777).
img_deliver_into() {
  local out
  mkdir -p "$1"
  chmod 0777 "$1"
  out="$(podman run --rm --cap-drop ALL -v "$1:/opt/k8s-agent" "$DELIVERY_IMAGE" /opt/k8s-agent 2>&1)" ||
    fail "delivery into the emptyDir: $out"
  step "$out"
}

img_worker_logins() {
  podman logs "$BED_PREFIX-$1" 2>&1 | grep -oE 'Accepted publickey for [a-z]+ from [0-9.]+' | sort -u
}

# ---------------------------------------------------------------------------------------------------------

# Whether the last scripts/images.sh run found every image up to date, or rebuilt it from the layer cache
# for every step.
img_build_was_warm() {
  local log steps cached
  for log in worker launcher delivery; do
    log="$build_dir/images/$log.log"
    grep -q '^up to date: ' "$log" && continue
    grep -qE '^(Get:|Unpacking |Setting up )' "$log" && return 1
    steps="$(grep -cE '^STEP [0-9]+/' "$log")"
    cached="$(grep -c '^--> Using cache' "$log")"
    # Every step but FROM is a cache hit.
    ((cached == steps - 1)) || return 1
  done
}

s_build() {
  local t0 rc cold warm files out
  img_prereqs
  command -v debootstrap >/dev/null || skip "debootstrap missing (scripts/test.sh installs it)"
  [[ -x "$E2E_AGENT" && -x "$build_dir/images/k8s-agent-deliver" && -x "$build_dir/launcher/k8s-agent-sshd" ]] ||
    fail "build k8s-agent, k8s-agent-deliver and k8s-agent-sshd first"
  # The Debian 13 image (for delivery_debian13) is made meanwhile: on a cold machine both debootstraps
  # mostly wait for the mirror.
  # Its own process group, so that a failure here stops all of it (a killed build leaves nothing behind).
  # Its exit status goes to a file, not to `wait`: with pid_max at 32768 a long cold build can recycle the
  # pid, and bash then forgets the finished job ("not a child of this shell").
  local debian13_rc="$build_dir/images-test/debian13.rc"
  rm -f "$debian13_rc"
  setsid bash -c 'bash "$0" trixie "$1"; echo $? >"$2.tmp"; mv "$2.tmp" "$2"' "$repo/scripts/debian-image.sh" \
    "$DEBIAN13_IMAGE" "$debian13_rc" >"$build_dir/images-test/debian13.log" 2>&1 &
  local debian13_pid=$!
  trap 'kill -TERM -- "-$debian13_pid" 2>/dev/null' EXIT
  step "scripts/images.sh --build-dir $build_dir --no-build (CONTAINERS_CONF=$CONTAINERS_CONF)"
  t0=$(now_ms)
  bash "$repo/scripts/images.sh" --build-dir "$build_dir" --no-build --tag "$TAG"
  rc=$?
  ((rc == 77)) && skip "no base image and it cannot be made here (see above)"
  ((rc == 0)) || fail "scripts/images.sh failed (exit $rc)"
  cold=$(($(now_ms) - t0))
  step "scripts/images.sh took ${cold} ms"
  # Warm means every layer came from podman's cache and nothing was installed. A first run that was not
  # warm is followed by a second one that must be.
  if ! img_build_was_warm; then
    t0=$(now_ms)
    bash "$repo/scripts/images.sh" --build-dir "$build_dir" --no-build --tag "$TAG" || fail "second scripts/images.sh failed"
    warm=$(($(now_ms) - t0))
    img_build_was_warm || fail "a rebuild with nothing changed was not served from the cache (build logs above)"
    step "warm rebuild: ${warm} ms"
  fi
  while [[ ! -s "$debian13_rc" ]] && kill -0 "$debian13_pid" 2>/dev/null; do sleep 0.2; done
  rc="$(cat "$debian13_rc" 2>/dev/null || echo 1)"
  trap - EXIT
  cat "$build_dir/images-test/debian13.log"
  ((rc == 77)) && skip "no Debian 13 image and it cannot be made here (see above)"
  ((rc == 0)) || fail "scripts/debian-image.sh trixie failed (exit $rc)"

  # The delivery image holds the agent, the presets and the copier, and nothing else (no shell).
  podman rm -f -i k8s-agent-images-test >/dev/null 2>&1
  podman create --name k8s-agent-images-test "$DELIVERY_IMAGE" >/dev/null || fail "podman create $DELIVERY_IMAGE"
  files="$(podman export k8s-agent-images-test | tar -tvf - | awk '$1 ~ /^-/ && $3 > 0 { print $NF }' | sort | tr '\n' ' ')"
  podman rm -f -i k8s-agent-images-test >/dev/null 2>&1
  [[ "$files" == "k8s-agent k8s-agent-deliver k8s-agent-sshd licenses/curl.copyright licenses/gcc-"[0-9]*".copyright licenses/libssh2.copyright licenses/libxcrypt.copyright licenses/nghttp2.copyright licenses/openssh.copyright licenses/openssl.copyright licenses/yaml-cpp.copyright licenses/zlib.copyright ompi-env.sh openmpi-mca-params.conf prte-mca-params.conf sbom.spdx.json sshd sshd-auth sshd-session " ]] ||
    fail "delivery image holds: $files"
  out="$(podman run --rm "$DELIVERY_IMAGE" 2>&1)"
  rc=$?
  if ((rc != 2)) || [[ "$out" != "usage: k8s-agent-deliver DIR"* ]]; then
    fail "k8s-agent image without DIR: exit $rc: $out"
  fi
  local name
  for name in "$WORKER_IMAGE" "$LAUNCHER_IMAGE"; do
    [[ "$(podman image inspect -f '{{.Config.User}}' "$name")" == 1000:1000 ]] || fail "$name does not run as 1000:1000"
  done
  # The launcher runs commands that need no ssh (an init container's `k8s-agent --hostfile`) without
  # a Secret, saying why it wrote no ~/.ssh/config. (The scenarios run the agent of both images.)
  out="$(podman run --rm "$LAUNCHER_IMAGE" k8s-agent --version 2>&1)" || fail "launcher without a Secret: $out"
  # podman relays the container's stdout and stderr separately: their order in $out is not defined.
  [[ "$out" == *"no ssh Secret in /etc/ssh-secret"* && "$out" == *"k8s-agent "[0-9]* ]] ||
    fail "launcher without a Secret: $out"
  img_check_metadata
  step "sizes: $(podman images --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep -E 'k8s-agent|debian' | tr '\n' ';')"
  pass
}

s_worker_sshd() {
  local pid status out rc
  img_prereqs
  img_need_images "$WORKER_IMAGE"
  img_bed_up 2
  img_worker_start w-0
  bed_worker_phase w-0 Running || fail "control API"
  pid="$(podman inspect -f '{{.State.Pid}}' "$BED_PREFIX-w-0")"
  status="$(cat "/proc/$pid/status")"
  [[ "$(awk '/^Uid:/ { print $2 }' <<<"$status")" == 1000 ]] || fail "the worker's sshd is not uid 1000"
  [[ "$(awk '/^CapEff:/ { print $2 }' <<<"$status")" == 0000000000000000 ]] || fail "the worker's sshd has capabilities"
  [[ "$(cat "/proc/$pid/comm")" == sshd ]] || fail "the container's main process is $(cat "/proc/$pid/comm"), not sshd"
  # k8s-agent-sshd (the ENTRYPOINT) became Debian's sshd with a config in a private run dir of uid 1000.
  # (sshd rewrites its command line: the config is found in /tmp, where k8s-agent-sshd made its run dir.)
  local config
  [[ "$(readlink "/proc/$pid/exe")" == /usr/sbin/sshd ]] || fail "the worker's sshd is $(readlink "/proc/$pid/exe")"
  config="$(podman exec "$BED_PREFIX-w-0" sh -c 'echo /tmp/k8s-agent-sshd.*/sshd_config')"
  [[ "$(tr '\0' ' ' <"/proc/$pid/cmdline")" == *" -f $config "* ]] ||
    fail "the worker's sshd does not run with $config: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
  out="$(podman exec "$BED_PREFIX-w-0" stat -c '%u %a' "${config%/*}")"
  [[ "$out" == "1000 700" ]] || fail "the run dir ${config%/*} is $out, not 1000 700"
  podman exec "$BED_PREFIX-w-0" grep -qx 'AllowUsers mpiuser' "$config" || fail "sshd_config: not only mpiuser"
  step "w-0: sshd as uid 1000, no capabilities, config in ${config%/*} (1000, 0700), listening on 2222"
  # The host's k8s-agent, in the launcher pod, with the Secret's key and known_hosts.
  out="$(bed_exec_launcher "$E2E_AGENT" -p 2222 -l mpiuser -i "$SECRET/id_ed25519" \
    -o UserKnownHostsFile="$SECRET/known_hosts" -o StrictHostKeyChecking=yes w-0 \
    'echo "$(id -u) $(hostname) $KUBERNETES_SERVICE_HOST $PATH"' 2>"$BED_DIR/out-agent.txt")" || fail "k8s-agent to w-0: $out"
  [[ "$out" == *"1000 w-0 $(bed_pod_ip apiserver) /usr/local/bin:/usr/bin:/bin"* ]] || fail "session on w-0: $out"
  step "k8s-agent session on w-0: $out"
  # readOnlyRootFilesystem: HOME is not writable, /tmp is (podman's --read-only mounts a tmpfs there, as
  # an emptyDir would). k8s-agent-sshd's run dir is in /tmp anyway; the client settings for tree spawn
  # reach sessions as K8S_AGENT_SSH_CONFIG (launcher_tree_late spawns through such a worker).
  WORKER_RUN_ARGS=(--read-only)
  img_worker_start w-1
  WORKER_RUN_ARGS=()
  bed_worker_phase w-1 Running || fail "control API"
  out="$(bed_exec_launcher "$E2E_AGENT" -p 2222 -l mpiuser -i "$SECRET/id_ed25519" \
    -o UserKnownHostsFile="$SECRET/known_hosts" w-1 'echo "$(id -u) $(hostname) $K8S_AGENT_SSH_CONFIG"; touch ~/x' \
    2>>"$BED_DIR/out-agent.txt")" && fail "HOME of the read-only w-1 is writable"
  [[ "$out" == "1000 w-1 /tmp/k8s-agent-sshd."*"/user/config" ]] || fail "session on the read-only w-1: $out"
  step "read-only w-1: session ok: $out"
  # A settings file that is named but missing is an error, as with ssh -F (not a silent fallback).
  out="$(K8S_AGENT_SSH_CONFIG=/nonexistent/config bed_exec_launcher "$E2E_AGENT" w-1 true 2>&1)"
  rc=$?
  [[ $rc == 255 && "$out" == *"--ssh-config /nonexistent/config: "* ]] ||
    fail "missing K8S_AGENT_SSH_CONFIG file: exit $rc: $out"
  pass
}

# One job for both: the launcher image's mpirun (its entrypoint and preset; no agent on the command line)
# with tree spawn (routed_radix 1: launcher -> w-0 -> w-1 -> w-2) over three worker pods, two of them late.
# The launcher's agent waits for w-0; the agent that orted runs inside w-1 (with the client settings the
# worker's k8s-agent-sshd wrote, the in-cluster credentials and the trace setting passed by sshd's SetEnv)
# waits for w-2. Each late pod is Running before its sshd listens, as on a cluster. w-1 and the launcher
# run with read-only root file systems.
s_launcher_tree_late() {
  local pod from
  img_prereqs
  img_need_images "$WORKER_IMAGE" "$LAUNCHER_IMAGE"
  img_bed_up 3
  HELLO="$(bed_mpi_hello mpicc)" || fail "mpicc failed"
  install -m 0755 "$HELLO" "$SHARED/mpi_hello"
  bed_worker_phase w-0 Pending || fail "control API"
  # w-1, whose orted runs the agent for w-2, and the launcher have read-only root file systems (HOME
  # too): their agents find the ssh settings through K8S_AGENT_SSH_CONFIG.
  WORKER_RUN_ARGS=(--read-only)
  img_worker_start w-1
  WORKER_RUN_ARGS=()
  bed_worker_phase w-1 Running || fail "control API"
  bed_worker_phase w-2 Pending || fail "control API"
  img_pod_args launcher
  img_start_job tree "${POD_ARGS[@]}" --read-only "$LAUNCHER_IMAGE" mpirun --mca routed_radix 1 -H w-0,w-1,w-2 -np 3 /bed/mpi_hello
  for pod in w-0 w-2; do
    wait_for_lines "$SHARED/trace.jsonl" '"event": ?"resolved".*"host": ?"'$pod'"' 1 30
    step "an agent waits for $pod: start its container, Running before its sshd listens"
    img_worker_start "$pod" nowait
    bed_worker_phase "$pod" Running || fail "control API"
  done
  wait_job 60
  expect_rc 0
  expect_ranks 3
  expect_rank_hosts 1 w-0 w-1 w-2
  expect_trace_path w-0 w-1 w-2
  expect_trace grep w-2 ssh_ready ':2222'
  show_timeline
  local logins
  for pod in w-0 w-1 w-2; do
    logins="$(img_worker_logins "$pod")"
    step "$pod: $(tr '\n' ';' <<<"$logins")"
    [[ $pod == w-0 ]] && from="$(bed_pod_ip launcher)" || from="$(bed_pod_ip "w-$((${pod#w-} - 1))")"
    [[ "$logins" == "Accepted publickey for mpiuser from $from" ]] || fail "$pod: expected one login from $from"
  done
  pass
}

s_delivery_debian13() {
  local dir out rc libs
  img_prereqs
  img_need_images "$WORKER_IMAGE" "$DELIVERY_IMAGE" "$DEBIAN13_IMAGE"
  img_bed_up 2
  # (1) The init container: the delivery image's default command fills an emptyDir (mode 0777).
  dir="$BED_DIR/emptydir"
  img_deliver_into "$dir"
  [[ "$(stat -c '%a %u' "$dir/k8s-agent")" == "755 65532" ]] || fail "delivered k8s-agent: $(stat -c '%a %u' "$dir/k8s-agent")"
  cmp -s "$dir/prte-mca-params.conf" "$repo/ompi-conf/prte-mca-params.conf" || fail "delivered preset differs"
  cmp -s "$dir/ompi-env.sh" "$repo/images/ompi-env.sh" || fail "delivered ompi-env.sh differs"
  libs="$(readelf -d "$dir/k8s-agent" | sed -nE 's/.*\(NEEDED\).*\[(.*)\]$/\1/p' | tr '\n' ' ')"
  step "the delivered k8s-agent needs: $libs"

  img_worker_start w-0
  bed_worker_phase w-0 Running || fail "control API"
  bed_worker_phase w-1 Pending || fail "control API"
  # (2) The user's image, unchanged: stock Debian 13, none of the build machine's libraries, no ssh
  # client, no passwd entry for uid 1000. It mounts the emptyDir where the init container filled it and
  # launches a job: discover the workers, then run a command on each through the agent.
  img_pod_args launcher
  img_start_job debian13 "${POD_ARGS[@]}" -v "$dir:/opt/k8s-agent:ro" "$DEBIAN13_IMAGE" bash -ec '
    grep "^PRETTY_NAME" /etc/os-release
    a=/opt/k8s-agent/k8s-agent
    $a --version
    echo "waiting for 2 workers"
    hosts="$($a --hostfile --selector role=worker --wait-for-count 2 --timeout 60s)"
    for h in $(cut -d" " -f1 <<<"$hosts"); do
      $a -p 2222 -l mpiuser -i /etc/ssh-secret/id_ed25519 -o UserKnownHostsFile=/etc/ssh-secret/known_hosts \
        "$h" "echo job step on \$(hostname) as \$(id -un)"
    done'
  wait_for_lines "$JOB_OUT" '^waiting for 2 workers$' 1 30
  step "Debian 13 launcher waits for the workers: start w-1"
  img_worker_start w-1 nowait
  bed_worker_phase w-1 Running || fail "control API"
  wait_job 60
  expect_rc 0
  expect_output '^PRETTY_NAME="Debian GNU/Linux 13'
  expect_output '^job step on w-0 as mpiuser$'
  expect_output '^job step on w-1 as mpiuser$'
  step "Debian 13 image ran the delivered agent: $(grep -c '^job step' "$JOB_OUT") job steps"

  # (3) The image volume: the delivery image itself mounted read-only (what a Kubernetes image volume
  # does), the agent at the volume's root.
  img_pod_args launcher launcher-iv
  out="$(podman run --rm "${POD_ARGS[@]}" --mount "type=image,source=$DELIVERY_IMAGE,destination=/opt/k8s-agent" \
    "$DEBIAN13_IMAGE" /opt/k8s-agent/k8s-agent -p 2222 -l mpiuser -i /etc/ssh-secret/id_ed25519 \
    -o UserKnownHostsFile=/etc/ssh-secret/known_hosts w-1 'echo image volume ok on $(hostname)' 2>&1)"
  rc=$?
  if ((rc != 0)) || [[ "$out" != *"image volume ok on w-1"* ]]; then
    fail "agent from the image volume: exit $rc: $out"
  fi
  step "$out"
  pass
}

# Workers from a stock image with no OpenSSH at all (debian:trixie-slim): the delivery image's init
# container fills an emptyDir, the worker's command is the delivered k8s-agent-sshd on the job's Secret
# (kubelet layout, files 0440), and a stock launcher reaches them through the delivered agent. Then
# SIGTERM (podman stop) ends the worker's sshd.
s_stock_workers() {
  local dir out pod
  img_prereqs
  img_need_images "$DELIVERY_IMAGE" "$DEBIAN13_IMAGE"
  img_bed_up 2
  dir="$BED_DIR/emptydir"
  img_deliver_into "$dir"
  for f in k8s-agent-sshd sshd sshd-session sshd-auth; do
    [[ "$(stat -c %a "$dir/$f")" == 755 ]] || fail "delivered $f: mode $(stat -c %a "$dir/$f")"
  done
  podman image inspect "$DEBIAN13_IMAGE" >/dev/null || fail "no $DEBIAN13_IMAGE"
  for pod in w-0 w-1; do
    img_pod_args "$pod"
    # As root with a container runtime's default capabilities (sshd's privilege separation needs
    # setuid, setgid and chroot), the image as it is.
    podman run -d "${POD_ARGS[@]}" --user 0:0 --cap-add CHOWN,DAC_OVERRIDE,FOWNER,FSETID,KILL,SETGID,SETUID,SETPCAP,NET_BIND_SERVICE,SYS_CHROOT,AUDIT_WRITE \
      -v "$dir:/opt/k8s-agent:ro" "$DEBIAN13_IMAGE" /opt/k8s-agent/k8s-agent-sshd --keys /etc/ssh-secret >/dev/null ||
      fail "podman run $DEBIAN13_IMAGE for $pod failed"
    img_worker_wait "$pod"
    bed_worker_phase "$pod" Running || fail "control API"
    podman exec "$BED_PREFIX-$pod" sh -c 'test ! -e /usr/sbin/sshd && ! getent passwd sshd' ||
      fail "$pod: the stock image has an sshd of its own"
  done
  step "$(podman logs "$BED_PREFIX-w-0" 2>&1 | grep -m1 '^k8s-agent-sshd: ')"
  img_pod_args launcher
  img_start_job stock "${POD_ARGS[@]}" -v "$dir:/opt/k8s-agent:ro" "$DEBIAN13_IMAGE" bash -ec '
    a=/opt/k8s-agent/k8s-agent
    for h in w-0 w-1; do
      $a -p 2222 -l root -i /etc/ssh-secret/id_ed25519 -o UserKnownHostsFile=/etc/ssh-secret/known_hosts \
        "$h" "echo job step on \$(hostname) as \$(id -un) PATH=\$PATH"
    done'
  wait_job 60
  expect_rc 0
  expect_output '^job step on w-0 as root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin$'
  expect_output '^job step on w-1 as root '
  for pod in w-0 w-1; do
    [[ "$(img_worker_logins "$pod")" == "Accepted publickey for root from $(bed_pod_ip launcher)" ]] ||
      fail "$pod: expected one login from the launcher: $(img_worker_logins "$pod")"
  done
  podman stop -t 30 "$BED_PREFIX-w-0" >/dev/null || fail "podman stop w-0"
  podman logs "$BED_PREFIX-w-0" 2>&1 | grep -q 'Received signal 15; terminating' ||
    fail "w-0's sshd did not end on SIGTERM: $(podman logs "$BED_PREFIX-w-0" 2>&1 | tail -3)"
  step "w-0 stopped: sshd ended on SIGTERM (exit $(podman inspect -f '{{.State.ExitCode}}' "$BED_PREFIX-w-0"))"
  pass
}

# A worker in a user namespace of its own, as `hostUsers: false` gives a pod: the container's uids and gids
# 0-65535 are the host's 100000-165535, and its root has capabilities only over what that namespace owns.
# k8s-agent-sshd runs as that root with a runtime's default capabilities on the stock image: sshd's
# privilege separation (setuid to mapped ids, chroot) and a root login work; on the host it is uid 100000.
s_stock_workers_userns() {
  local dir secret pid map f out
  img_prereqs
  img_need_images "$DELIVERY_IMAGE" "$DEBIAN13_IMAGE"
  img_bed_up 1
  dir="$BED_DIR/emptydir"
  img_deliver_into "$dir"
  # The kubelet gives such a pod's volumes its mapped ids: the Secret's files are the namespace's
  # root:fsGroup (1000), the host's 100000:101000.
  secret="$BED_DIR/secret-userns"
  { cp -a "$SECRET" "$secret" && chown -hR 100000:101000 "$secret"; } || fail "copying the Secret for w-0"
  img_pod_args w-0
  POD_ARGS=("${POD_ARGS[@]/#"$SECRET":/"$secret":}")
  [[ " ${POD_ARGS[*]} " == *" $secret:/etc/ssh-secret:ro "* ]] || fail "img_pod_args no longer mounts $SECRET"
  podman run -d "${POD_ARGS[@]}" --user 0:0 --uidmap 0:100000:65536 --gidmap 0:100000:65536 \
    --cap-add CHOWN,DAC_OVERRIDE,FOWNER,FSETID,KILL,SETGID,SETUID,SETPCAP,NET_BIND_SERVICE,SYS_CHROOT,AUDIT_WRITE \
    -v "$dir:/opt/k8s-agent:ro" "$DEBIAN13_IMAGE" /opt/k8s-agent/k8s-agent-sshd --keys /etc/ssh-secret >/dev/null ||
    fail "podman run $DEBIAN13_IMAGE in a user namespace for w-0 failed"
  img_worker_wait w-0
  bed_worker_phase w-0 Running || fail "control API"
  pid="$(podman inspect -f '{{.State.Pid}}' "$BED_PREFIX-w-0")"
  map="$(tr -s ' ' <"/proc/$pid/uid_map")"
  [[ "$map" == " 0 100000 65536" ]] || fail "w-0's uid map is \"$map\", not 0 100000 65536"
  [[ "$(stat -c %u "/proc/$pid")" == 100000 ]] || fail "w-0's k8s-agent-sshd is host uid $(stat -c %u "/proc/$pid")"
  step "w-0: k8s-agent-sshd is root in its user namespace, host uid 100000; $(podman logs "$BED_PREFIX-w-0" 2>&1 |
    grep -m1 '^k8s-agent-sshd: ')"
  img_pod_args launcher
  img_start_job userns "${POD_ARGS[@]}" -v "$dir:/opt/k8s-agent:ro" "$DEBIAN13_IMAGE" \
    /opt/k8s-agent/k8s-agent -p 2222 -l root -i /etc/ssh-secret/id_ed25519 \
    -o UserKnownHostsFile=/etc/ssh-secret/known_hosts w-0 \
    'echo "on $(hostname) as $(id -un) uid $(id -u) map$(tr -s " " </proc/self/uid_map)"'
  wait_job 60
  expect_rc 0
  expect_output '^on w-0 as root uid 0 map 0 100000 65536$'
  [[ "$(img_worker_logins w-0)" == "Accepted publickey for root from $(bed_pod_ip launcher)" ]] ||
    fail "w-0: expected one login from the launcher: $(img_worker_logins w-0)"
  # sshd's unprivileged pre-auth child ran under a mapped id of the namespace, not the host's.
  out="$(podman logs "$BED_PREFIX-w-0" 2>&1)"
  for f in "fatal" "chroot" "setgroups" "setresuid"; do
    grep -qi "$f" <<<"$out" && fail "w-0's sshd says $f: $(grep -i "$f" <<<"$out" | head -n 3)"
  done
  step "a root login into the user namespace's root (privilege separation inside it)"
  pass
}

# binfmt_misc entries of this scenario are named k8s-agent-test-aarch64-PID (the test's pid).
BINFMT=/proc/sys/fs/binfmt_misc
BINFMT_MOUNTED=""
BINFMT_NAME=""
# The entry of an interpreter for aarch64 ELF binaries already registered, if any (by its magic).
img_binfmt_aarch64() {
  grep -lsx 'magic 7f454c460201010000000000000000000200b700' "$BINFMT"/* 2>/dev/null | head -n1
}
# Lets podman run arm64 containers for the duration of the test: when no aarch64 interpreter is
# registered, registers qemu-aarch64-static with the F flag (the kernel opens it now, so it runs inside
# the container's root), mounting binfmt_misc first if it is not. The machine keeps no binfmt-support
# installed on purpose: img_binfmt_down removes exactly what this added. Fails (1) where the kernel
# refuses (no binfmt_misc, no permission): the caller then runs the copier under qemu-user itself.
img_binfmt_up() {
  local e pid qemu
  qemu="$(command -v qemu-aarch64-static)" || return 1
  if [[ ! -e "$BINFMT/register" ]]; then
    mount -t binfmt_misc binfmt_misc "$BINFMT" 2>/dev/null || return 1
    BINFMT_MOUNTED=1
  fi
  # Entries of runs that were killed (a ctest timeout sends SIGKILL: no trap ran).
  for e in "$BINFMT"/k8s-agent-test-aarch64-*; do
    [[ -e "$e" ]] || continue
    pid="${e##*-}"
    kill -0 "$pid" 2>/dev/null || echo -1 >"$e"
  done
  [[ -n "$(img_binfmt_aarch64)" ]] && return 0
  BINFMT_NAME="k8s-agent-test-aarch64-$$"
  # The kernel decodes the \x escapes; magic and mask are those of an aarch64 ELF executable.
  printf '%s' ":$BINFMT_NAME:M::\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x02\x00\xb7\x00:\xff\xff\xff\xff\xff\xff\xff\x00\xff\xff\xff\xff\xff\xff\xff\xff\xfe\xff\xff\xff:$qemu:F" \
    >"$BINFMT/register" 2>/dev/null || {
    BINFMT_NAME=""
    img_binfmt_down
    return 1
  }
}
img_binfmt_down() {
  [[ -z "$BINFMT_NAME" || ! -e "$BINFMT/$BINFMT_NAME" ]] || echo -1 >"$BINFMT/$BINFMT_NAME"
  BINFMT_NAME=""
  # Unmounted only as this found it: empty of entries but the two control files.
  if [[ -n "$BINFMT_MOUNTED" ]] && [[ "$(find "$BINFMT" -mindepth 1 -printf '%f\n' | LC_ALL=C sort | tr '\n' ' ')" == "register status " ]]; then
    umount "$BINFMT" && BINFMT_MOUNTED=""
  fi
}

MA_TAG=multiarch-test
MA_SSHD_PID=""
# ma_arm64_login DIR: the delivered arm64 k8s-agent-sshd runs the delivered arm64 sshd (both under qemu-user
# through binfmt_misc, glibc from the cross toolchain's /usr/aarch64-linux-gnu) on the job's Secret, in a
# network namespace of its own (loopback only), and the host's OpenSSH client logs in as root.
ma_arm64_login() {
  local dir="$1" ns="k8sa-ma-$$" t0 got
  BED_DIR="$MA_TMP" img_make_secret
  ip netns add "$ns" || fail "ip netns add $ns"
  MA_NETNS="$ns"
  ip -n "$ns" link set lo up
  mkdir -p "$MA_TMP/run"
  t0=$(now_ms)
  ip netns exec "$ns" env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin QEMU_LD_PREFIX=/usr/aarch64-linux-gnu \
    "$dir/k8s-agent-sshd" --keys "$SECRET" --run-dir "$MA_TMP/run" >"$MA_TMP/sshd.log" 2>&1 &
  MA_SSHD_PID=$!
  until grep -q 'Server listening on 0.0.0.0 port 2222' "$MA_TMP/sshd.log"; do
    kill -0 "$MA_SSHD_PID" 2>/dev/null || fail "arm64 k8s-agent-sshd exited: $(tail -n 20 "$MA_TMP/sshd.log")"
    (($(now_ms) - t0 < 60000)) || fail "arm64 sshd not listening after 60 s: $(tail -n 20 "$MA_TMP/sshd.log")"
    sleep 0.1
  done
  step "arm64 k8s-agent-sshd + sshd under qemu listening after $(($(now_ms) - t0)) ms"
  printf '[127.0.0.1]:2222 %s\n' "$(cut -d' ' -f1,2 "$SECRET/ssh_host_ed25519_key.pub")" >"$MA_TMP/known_hosts"
  # The client's copy of the job's key: ssh refuses a key file others may read (the Secret's are 0440).
  install -m 0600 "$SECRET/id_ed25519" "$MA_TMP/id_ed25519"
  t0=$(now_ms)
  got="$(ip netns exec "$ns" /usr/bin/ssh -F /dev/null -p 2222 -i "$MA_TMP/id_ed25519" -o IdentitiesOnly=yes \
    -o BatchMode=yes -o StrictHostKeyChecking=yes -o UserKnownHostsFile="$MA_TMP/known_hosts" \
    -o GlobalKnownHostsFile=/dev/null -o ConnectTimeout=30 root@127.0.0.1 'echo "$(id -u) $SSH_CONNECTION"' 2>"$MA_TMP/ssh.err")"
  [[ "$got" == "0 127.0.0.1 "* ]] || fail "ssh through the arm64 sshd printed '$got': $(cat "$MA_TMP/ssh.err") sshd: $(tail -n 20 "$MA_TMP/sshd.log")"
  step "host ssh -> arm64 sshd: logged in as root in $(($(now_ms) - t0)) ms"
  ma_sshd_stop
}
ma_sshd_stop() {
  [[ -z "$MA_SSHD_PID" ]] || { kill "$MA_SSHD_PID" 2>/dev/null; wait "$MA_SSHD_PID" 2>/dev/null; }
  MA_SSHD_PID=""
  [[ -z "${MA_NETNS:-}" ]] || ip netns del "$MA_NETNS" 2>/dev/null
  MA_NETNS=""
}
img_multiarch_down() {
  ma_sshd_stop
  img_binfmt_down
  podman manifest rm "k8s-agent:$MA_TAG" >/dev/null 2>&1
  # Untags (the layers may be k8s-agent:latest's too).
  podman rmi "k8s-agent:$MA_TAG-amd64" "k8s-agent:$MA_TAG-arm64" >/dev/null 2>&1
  [[ -z "${MA_TMP:-}" ]] || rm -rf "$MA_TMP"
}

s_multiarch() {
  local a64="$repo/build-aarch64" a t0 out rc dir plat files how
  img_prereqs
  command -v qemu-aarch64-static >/dev/null || skip "no qemu-aarch64-static: scripts/deps.sh --aarch64"
  command -v aarch64-linux-gnu-g++ >/dev/null || skip "no aarch64 cross toolchain: scripts/deps.sh --aarch64"
  [[ -x "$a64/launcher/k8s-agent" ]] ||
    skip "no $a64/launcher/k8s-agent (the arm64.build test makes it: cmake --preset aarch64 && cmake --build --preset aarch64)"
  [[ -x "$build_dir/images/k8s-agent-deliver" && -x "$build_dir/launcher/k8s-agent-sshd" ]] ||
    fail "build k8s-agent-deliver and k8s-agent-sshd first"
  MA_TMP="$(mktemp -d /tmp/k8s-agent-multiarch.XXXXXX)"
  trap 'img_multiarch_down' EXIT
  trap 'img_multiarch_down; trap - INT; kill -INT $$' INT
  trap 'img_multiarch_down; trap - TERM; kill -TERM $$' TERM
  # The arm64 copier and k8s-agent-sshd beside the agent the fixture built (a few source files more).
  cmake --build "$a64" --target k8s-agent k8s-agent-deliver k8s-agent-sshd >"$MA_TMP/build.log" 2>&1 || {
    tail -n 20 "$MA_TMP/build.log"
    fail "building the arm64 k8s-agent-deliver and k8s-agent-sshd in $a64"
  }
  # The arm64 portable sshd: cached, or cross-built here (~1.5 min cold) unless K8S_SSHD_BUILD=0.
  if ! "$repo/scripts/sshd_build.sh" check aarch64 2>/dev/null; then
    [[ "${K8S_SSHD_BUILD:-1}" == 1 ]] ||
      skip "no arm64 portable sshd and K8S_SSHD_BUILD=0: scripts/sshd_build.sh ensure aarch64 (1-2 min cold)"
    t0=$(now_ms)
    "$repo/scripts/sshd_build.sh" ensure aarch64 >/dev/null || fail "scripts/sshd_build.sh ensure aarch64"
    step "built the arm64 portable sshd in $(($(now_ms) - t0)) ms"
  fi
  step "scripts/images.sh --arch amd64,arm64 --tag $MA_TAG delivery"
  t0=$(now_ms)
  bash "$repo/scripts/images.sh" --build-dir "$build_dir" --aarch64-build-dir "$a64" --no-build \
    --arch amd64,arm64 --tag "$MA_TAG" delivery || fail "scripts/images.sh --arch amd64,arm64 failed"
  step "built in $(($(now_ms) - t0)) ms"

  # (1) The manifest list names both platforms, each the image of that architecture.
  plat="$(podman manifest inspect "k8s-agent:$MA_TAG" | /usr/bin/python3 -c '
import json, sys
print(" ".join(sorted(m["platform"]["os"] + "/" + m["platform"]["architecture"] for m in json.load(sys.stdin)["manifests"])))')"
  [[ "$plat" == "linux/amd64 linux/arm64" ]] || fail "manifest list k8s-agent:$MA_TAG has: $plat"
  for a in amd64 arm64; do
    [[ "$(podman image inspect -f '{{.Os}}/{{.Architecture}}' "k8s-agent:$MA_TAG-$a")" == "linux/$a" ]] ||
      fail "k8s-agent:$MA_TAG-$a is $(podman image inspect -f '{{.Os}}/{{.Architecture}}' "k8s-agent:$MA_TAG-$a")"
  done
  step "manifest list k8s-agent:$MA_TAG: $plat"

  # (2) The arm64 image: what the amd64 one holds, every binary AArch64.
  podman create --arch arm64 --name "kab-ma-$$" "k8s-agent:$MA_TAG-arm64" >/dev/null || fail "podman create the arm64 image"
  mkdir -p "$MA_TMP/rootfs"
  podman export "kab-ma-$$" | tar -xf - -C "$MA_TMP/rootfs"
  podman rm -f -i "kab-ma-$$" >/dev/null 2>&1
  files="$(cd "$MA_TMP/rootfs" && find . -type f -size +0 | sed 's|^\./||' | LC_ALL=C sort | tr '\n' ' ')"
  [[ "$files" == "k8s-agent k8s-agent-deliver k8s-agent-sshd licenses/curl.copyright licenses/gcc-"[0-9]*"-cross.copyright licenses/libssh2.copyright licenses/libxcrypt.copyright licenses/nghttp2.copyright licenses/openssh.copyright licenses/openssl.copyright licenses/yaml-cpp.copyright licenses/zlib.copyright ompi-env.sh openmpi-mca-params.conf prte-mca-params.conf sbom.spdx.json sshd sshd-auth sshd-session " ]] ||
    fail "arm64 delivery image holds: $files"
  for f in k8s-agent k8s-agent-deliver k8s-agent-sshd sshd sshd-session sshd-auth; do
    [[ "$(readelf -h "$MA_TMP/rootfs/$f" | sed -n 's/^ *Machine: *//p')" == AArch64 ]] || fail "arm64 image: $f is not AArch64"
  done

  # (3) Its copier, run as arm64: in a container under qemu-user through binfmt_misc where this
  # machine lets the test register it, else straight from the image's root under qemu-user. With
  # binfmt_misc, the delivered workers' side then serves a login (ma_arm64_login).
  dir="$MA_TMP/emptydir"
  mkdir -p "$dir"
  chmod 0777 "$dir"
  # K8S_TEST_NO_BINFMT=1 takes the second way where the first would do.
  if [[ -z "${K8S_TEST_NO_BINFMT:-}" ]] && img_binfmt_up; then
    how="podman run --arch arm64 (binfmt_misc: ${BINFMT_NAME:-$(basename "$(img_binfmt_aarch64)")})"
    out="$(podman run --rm --pull=never --arch arm64 --cap-drop ALL -v "$dir:/opt/k8s-agent" \
      "k8s-agent:$MA_TAG-arm64" /opt/k8s-agent 2>&1)" || fail "arm64 copier in a container: $out"
  else
    how="qemu-aarch64-static on the image's root (no binfmt_misc registration here, or K8S_TEST_NO_BINFMT)"
    out="$(qemu-aarch64-static "$MA_TMP/rootfs/k8s-agent-deliver" "$dir" 2>&1)" || fail "arm64 copier under qemu: $out"
  fi
  step "$how: $out"
  [[ "$out" == *"ready (with k8s-agent-sshd, sshd, sshd-session, sshd-auth, openmpi-mca-params.conf, prte-mca-params.conf, ompi-env.sh)" ]] ||
    fail "arm64 copier said: $out"
  for f in k8s-agent k8s-agent-sshd sshd sshd-session sshd-auth; do
    [[ "$(readelf -h "$dir/$f" | sed -n 's/^ *Machine: *//p')" == AArch64 ]] || fail "the delivered $f is not aarch64"
  done
  out="$(qemu-aarch64-static -L /usr/aarch64-linux-gnu "$dir/k8s-agent" --version 2>&1)" || fail "delivered arm64 agent --version: $out"
  [[ "$out" == "k8s-agent "[0-9]* ]] || fail "delivered arm64 agent --version: $out"
  step "delivered arm64 agent under qemu: $(head -n1 <<<"$out")"
  out="$(qemu-aarch64-static -L /usr/aarch64-linux-gnu "$dir/sshd" -V 2>&1)"
  [[ "$out" == "OpenSSH_10.0p"*" Debian-"* ]] || fail "delivered arm64 sshd -V: $out"
  step "delivered arm64 sshd under qemu: $out"
  if [[ -n "${BINFMT_NAME:-}" || -n "$(img_binfmt_aarch64)" ]] && [[ "$how" == podman* ]]; then
    ma_arm64_login "$dir"
    img_binfmt_down
  else
    step "no login through the arm64 sshd: it needs binfmt_misc (sshd runs sshd-session and sshd-auth by exec)"
  fi
  # A part of the workers' side is refused (never a worker whose sshd cannot start).
  mkdir -p "$MA_TMP/aside" "$MA_TMP/partial"
  mv "$MA_TMP/rootfs"/{k8s-agent-sshd,sshd-session,sshd-auth} "$MA_TMP/aside/"
  out="$(qemu-aarch64-static "$MA_TMP/rootfs/k8s-agent-deliver" "$MA_TMP/partial" 2>&1)" && fail "a partial sshd side was delivered: $out"
  [[ "$out" == *"the image has sshd but not k8s-agent-sshd, sshd-session, sshd-auth beside "* ]] ||
    fail "partial sshd side: $out"
  mv "$MA_TMP/aside"/* "$MA_TMP/rootfs/"
  # The image's SBOM describes these arm64 binaries: their checksums, the arm64 libraries' Debian sources
  # (those sshd_build.sh unpacked), its -aarch64 document.
  /usr/bin/python3 - "$MA_TMP/rootfs" "$("$repo/scripts/sshd_build.sh" path aarch64)" <<'EOF' || fail "the arm64 image's SBOM does not describe its binaries"
import hashlib, json, os, sys
root, sshd_dir = sys.argv[1], sys.argv[2]
doc = json.load(open(os.path.join(root, "sbom.spdx.json")))
by_id = {p["SPDXID"]: p for p in doc["packages"]}
for spdx_id, f in [("SPDXRef-k8s-agent", "k8s-agent"), ("SPDXRef-k8s-agent-sshd", "k8s-agent-sshd"),
                   ("SPDXRef-openssh-sshd", "sshd"), ("SPDXRef-openssh-sshd-session", "sshd-session"),
                   ("SPDXRef-openssh-sshd-auth", "sshd-auth")]:
    digest = hashlib.sha256(open(os.path.join(root, f), "rb").read()).hexdigest()
    assert by_id[spdx_id]["checksums"] == [{"algorithm": "SHA256", "checksumValue": digest}], (f, by_id[spdx_id])
debs = {l.split()[2]: l.split()[3] for l in open(os.path.join(sshd_dir, "share", "debs.txt"))}
for spdx_id, source in [("SPDXRef-sshd-zlib", "zlib"), ("SPDXRef-sshd-libxcrypt", "libxcrypt")]:
    assert by_id[spdx_id]["sourceInfo"] == "Debian source package %s %s" % (source, debs[source]), by_id[spdx_id]
assert by_id["SPDXRef-openssl"]["sourceInfo"] == "Debian source package openssl " + debs["openssl"], by_id["SPDXRef-openssl"]
assert doc["documentNamespace"].endswith("-aarch64"), doc["documentNamespace"]
EOF
  # (4) The list is what users run: on this amd64 machine it resolves to the amd64 image.
  out="$(podman run --rm --pull=never "k8s-agent:$MA_TAG" 2>&1)"
  rc=$?
  if ((rc != 2)) || [[ "$out" != "usage: k8s-agent-deliver DIR"* ]]; then
    fail "podman run k8s-agent:$MA_TAG: exit $rc: $out"
  fi
  [[ "$(podman image inspect -f '{{.Architecture}}' "k8s-agent:$MA_TAG")" == amd64 ]] ||
    fail "k8s-agent:$MA_TAG does not resolve to the amd64 image here"
  step "k8s-agent:$MA_TAG runs the amd64 copier here"
  pass
}

# "VERSION COMMIT DATE" of the build's k8s-agent (its --version: cmake/build_info.cmake).
img_agent_info() {
  "$E2E_AGENT" --version | awk 'NR == 1 { v = $2 } $1 == "commit" { c = $2; d = $3; gsub(/[()]/, "", d) }
    END { print v, c, d }'
}

# img_check_labels TITLE: checks the OCI labels (JSON on stdin) against this build: title TITLE, version and
# revision the agent's (the revision HEAD's, "-dirty" for a dirty tree), created its commit's date in UTC,
# Apache-2.0, the source K8S_AGENT_SOURCE_URL (when set, else none without a remote origin).
img_check_labels() {
  local title="$1" version commit date head origin=""
  read -r version commit date < <(img_agent_info)
  head="$(git -C "$repo" rev-parse HEAD)" || fail "git rev-parse HEAD"
  [[ "${commit%-dirty}" == "$head" ]] ||
    fail "$E2E_AGENT is of commit $commit, the tree is at $head: build it again (cmake --build $build_dir)"
  git -C "$repo" remote get-url origin >/dev/null 2>&1 && origin=1
  /usr/bin/python3 -c '
import datetime, json, sys
title, version, commit, date, source, origin = sys.argv[1:]
labels = json.load(sys.stdin) or {}
o = "org.opencontainers.image."
want = {o + "title": title, o + "version": version, o + "revision": commit, o + "licenses": "Apache-2.0",
        o + "created": datetime.datetime.fromisoformat(date).astimezone(datetime.timezone.utc)
                       .strftime("%Y-%m-%dT%H:%M:%SZ")}
for k, v in want.items():
    assert labels.get(k) == v, "label %s is %r, not %r" % (k, labels.get(k), v)
assert labels.get(o + "description"), "no description label"
if source:
    assert labels.get(o + "source") == source, "source label %r, not %r" % (labels.get(o + "source"), source)
elif not origin:
    assert o + "source" not in labels, "a source label without a remote: %r" % labels[o + "source"]
assert labels.get("org.k8s-agent.inputs"), "no inputs label"
' "$title" "$version" "$commit" "$date" "${K8S_AGENT_SOURCE_URL:-}" "$origin"
}

# img_check_sbom ROOT SBOM SPDXID=PATH...: ROOT/SBOM (an image's files) is SPDX JSON that describes exactly
# the binaries named (PATH under ROOT), each with its checksum there and the agent's version; each licence
# it refers to is in licenses/ beside it, and nothing else is.
img_check_sbom() {
  local root="$1" sbom="$2" version
  shift 2
  read -r version _ < <(img_agent_info)
  /usr/bin/python3 -c '
import hashlib, json, os, re, sys
root, sbom, version, pairs = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
with open(os.path.join(root, sbom)) as f:
    doc = json.load(f)
assert doc["spdxVersion"] == "SPDX-2.3", doc["spdxVersion"]
by_id = {p["SPDXID"]: p for p in doc["packages"]}
described = {r["relatedSpdxElement"] for r in doc["relationships"]
             if r["spdxElementId"] == "SPDXRef-DOCUMENT" and r["relationshipType"] == "DESCRIBES"}
want = dict(p.split("=", 1) for p in pairs)
assert described == set(want), "%s describes %s, not %s" % (sbom, sorted(described), sorted(want))
for spdx_id, path in want.items():
    with open(os.path.join(root, path), "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()
    assert by_id[spdx_id]["checksums"] == [{"algorithm": "SHA256", "checksumValue": digest}], (path, by_id[spdx_id])
assert by_id["SPDXRef-k8s-agent"]["versionInfo"] == version, by_id["SPDXRef-k8s-agent"]
licenses = os.path.join(root, os.path.dirname(sbom), "licenses")
named = {m.group(1) for p in doc["packages"] for m in [re.fullmatch(r"see licenses/(.+)", p["copyrightText"])] if m}
assert named and named == set(os.listdir(licenses)), "licences named %s, there %s" % (sorted(named), sorted(os.listdir(licenses)))
' "$root" "$sbom" "$version" "$@"
}

# img_check_image IMAGE TITLE SBOM SPDXID=PATH...: IMAGE's labels (img_check_labels) and its SBOM, at SBOM
# in the image (img_check_sbom), with the files they name taken from the image.
img_check_image() {
  local image="$1" title="$2" sbom="$3" name="kab-check-$$" dir p
  local -a members
  shift 3
  podman image inspect -f '{{json .Labels}}' "$image" | img_check_labels "$title" || fail "$image: its labels (above)"
  members=("$sbom" "$(dirname "$sbom")/licenses")
  for p in "$@"; do members+=("${p#*=}"); done
  dir="$build_dir/images-test/check-$title"
  rm -rf "$dir"
  mkdir -p "$dir"
  podman rm -f -i "$name" >/dev/null 2>&1
  podman create --name "$name" "$image" >/dev/null || fail "podman create $image"
  podman export "$name" | tar -xf - -C "$dir" "${members[@]#./}"
  local rc=$?
  podman rm -f -i "$name" >/dev/null 2>&1
  ((rc == 0)) || fail "$image holds none of ${members[*]}"
  img_check_sbom "$dir" "$sbom" "$@" || fail "$image: its SBOM $sbom (above)"
  rm -rf "$dir"
  step "$image: labels of $(img_agent_info | cut -d' ' -f1,2), SBOM /$sbom of $* with its licences"
}

# The labels and SBOM of each image; the default tag (the release version); the labels among the inputs.
img_check_metadata() {
  local version out n ref
  img_check_image "$DELIVERY_IMAGE" k8s-agent sbom.spdx.json SPDXRef-k8s-agent=k8s-agent \
    SPDXRef-k8s-agent-sshd=k8s-agent-sshd SPDXRef-openssh-sshd=sshd SPDXRef-openssh-sshd-session=sshd-session \
    SPDXRef-openssh-sshd-auth=sshd-auth
  img_check_image "$WORKER_IMAGE" k8s-agent-worker usr/share/doc/k8s-agent/sbom.spdx.json \
    SPDXRef-k8s-agent=usr/local/bin/k8s-agent SPDXRef-k8s-agent-sshd=usr/local/bin/k8s-agent-sshd
  img_check_image "$LAUNCHER_IMAGE" k8s-agent-launcher usr/share/doc/k8s-agent/sbom.spdx.json \
    SPDXRef-k8s-agent=usr/local/bin/k8s-agent
  # Without --tag, the images are tagged the release version, "+" made "-" (--context prints the builds).
  read -r version _ < <(img_agent_info)
  out="$(bash "$repo/scripts/images.sh" --build-dir "$build_dir" --no-build --context "$build_dir/images-test/context")" ||
    fail "scripts/images.sh --context failed"
  for n in k8s-agent k8s-agent-worker k8s-agent-launcher; do
    grep -q -- " -t $n:${version//+/-} " <<<"$out" || fail "images.sh without --tag does not tag $n:${version//+/-}: $out"
  done
  rm -rf "$build_dir/images-test/context" "$build_dir/images-test/context-"*
  # The labels are inputs: another source URL rebuilds the image (under a tag of its own, removed after).
  ref="k8s-agent:labels-test"
  K8S_AGENT_SOURCE_URL=https://example.invalid/k8s-agent.git bash "$repo/scripts/images.sh" --build-dir "$build_dir" \
    --no-build --tag labels-test delivery || fail "scripts/images.sh --tag labels-test delivery failed"
  out="$(podman image inspect -f '{{index .Labels "org.opencontainers.image.source"}} {{index .Labels "org.k8s-agent.inputs"}}' "$ref")"
  podman rmi "$ref" >/dev/null 2>&1
  [[ "$out" == "https://example.invalid/k8s-agent.git "* ]] || fail "K8S_AGENT_SOURCE_URL: $ref has source and inputs $out"
  [[ "${out#* }" != "$(podman image inspect -f '{{index .Labels "org.k8s-agent.inputs"}}' "$DELIVERY_IMAGE")" ]] ||
    fail "another source label, the same inputs: ${out#* }"
  step "default tag ${version//+/-}; K8S_AGENT_SOURCE_URL is the source label, and an input"
}

# ---------------------------------------------------------------------------------------------------------

REL_TMP=""
REL_MADE=()
img_release_down() {
  ((${#REL_MADE[@]})) && podman rmi "${REL_MADE[@]}" >/dev/null 2>&1
  [[ -z "$REL_TMP" ]] || rm -rf "$REL_TMP"
}

# scripts/release.sh --images: the images of the release build as OCI archives, covered by SHA256SUMS, each
# archive's manifest digest the one IMAGES names, and the one podman load gives.
s_release() {
  local version tag dist n ref line file digest out want got
  local -a allow=()
  img_prereqs
  # The fixture's images: their base and layers, so release.sh's builds come from podman's cache.
  img_need_images "$WORKER_IMAGE" "$LAUNCHER_IMAGE" "$DELIVERY_IMAGE"
  read -r version _ < <(img_agent_info)
  tag="${version//+/-}"
  REL_TMP="$(mktemp -d /tmp/k8s-agent-images-release.XXXXXX)"
  trap 'img_release_down' EXIT
  trap 'img_release_down; trap - INT; kill -INT $$' INT
  trap 'img_release_down; trap - TERM; kill -TERM $$' TERM
  # The images the test makes (not those of the version that were there before) go after.
  for n in k8s-agent k8s-agent-worker k8s-agent-launcher; do
    podman image exists "$n:$tag" || REL_MADE+=("$n:$tag")
  done
  git -C "$repo" diff --quiet HEAD -- || allow=(--allow-dirty)
  dist="$REL_TMP/dist"
  step "scripts/release.sh --images --build-dir $build_dir --out $dist ${allow[*]}"
  "$repo/scripts/release.sh" --build-dir "$build_dir" --out "$dist" --images "${allow[@]}" >"$REL_TMP/out" 2>"$REL_TMP/err" ||
    fail "release.sh --images: $(tail -n 30 "$REL_TMP/err")"
  (cd "$dist" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not verify"
  want="IMAGES k8s-agent-$version-linux-x86_64.tar.gz"
  for n in k8s-agent k8s-agent-launcher k8s-agent-worker; do
    want+=" k8s-agent-images-$version/$n-$version-linux-amd64.oci.tar"
  done
  got="$(awk '{ print $2 }' "$dist/SHA256SUMS" | LC_ALL=C sort | tr '\n' ' ')"
  [[ "$got" == "$want " ]] || fail "SHA256SUMS lists: $got, not $want"
  [[ "$(wc -l <"$dist/IMAGES")" == 3 ]] || fail "IMAGES: $(cat "$dist/IMAGES")"
  # Each archive: one manifest, of the digest IMAGES names and the image named there, its blob that digest,
  # its config this build's labels.
  while read -r file ref digest; do
    n="${ref#localhost/}"
    n="${n%%:*}"
    [[ "$ref" == "localhost/$n:$tag" && "$file" == "k8s-agent-images-$version/$n-$version-linux-amd64.oci.tar" ]] ||
      fail "IMAGES: $file $ref $digest"
    /usr/bin/python3 -c '
import hashlib, json, sys, tarfile
path, ref, digest = sys.argv[1:]
def blob(t, d):
    data = t.extractfile("blobs/" + d.replace(":", "/")).read()
    assert "sha256:" + hashlib.sha256(data).hexdigest() == d, "blob %s does not hash to its name" % d
    return json.loads(data)
with tarfile.open(path) as t:
    index = json.load(t.extractfile("index.json"))
    assert len(index["manifests"]) == 1, index
    m = index["manifests"][0]
    assert m["digest"] == digest, "the archive holds manifest %s, IMAGES says %s" % (m["digest"], digest)
    assert m["annotations"]["org.opencontainers.image.ref.name"] == ref, m
    config = blob(t, blob(t, digest)["config"]["digest"])
print(json.dumps(config["config"]["Labels"]))' "$dist/$file" "$ref" "$digest" >"$REL_TMP/labels.json" ||
      fail "$file does not hold the image IMAGES names"
    img_check_labels "$n" <"$REL_TMP/labels.json" || fail "$file: the labels of its image (above)"
    # What a user does: load it; podman names it as IMAGES does, with IMAGES' digest (its only one in a
    # store that lacked the image; here, where release.sh built it, beside the stored image's own).
    out="$(podman load -q -i "$dist/$file" 2>&1)" || fail "podman load -i $file: $out"
    grep -qx "Loaded image: $ref" <<<"$out" || fail "podman load -i $file: $out"
    got="$(podman image inspect -f '{{range .RepoDigests}}{{.}} {{end}}' "$ref")"
    [[ " $got" == *" ${ref%:*}@$digest "* ]] || fail "loaded from $file, $ref has digests $got, IMAGES says $digest"
    step "$file: $ref $digest, loaded"
  done <"$dist/IMAGES"
  # A changed byte in an archive fails the check.
  file="k8s-agent-images-$version/k8s-agent-$version-linux-amd64.oci.tar"
  cp "$dist/$file" "$REL_TMP/keep.tar"
  printf 'x' | dd of="$dist/$file" bs=1 seek=4096 conv=notrunc status=none
  (cd "$dist" && sha256sum --quiet -c SHA256SUMS) >/dev/null 2>&1 && fail "a tampered OCI archive verified"
  mv "$REL_TMP/keep.tar" "$dist/$file"
  # A later run without --images (another arch's, say) keeps the images listed; IMAGES of another version
  # is removed, never listed.
  "$repo/scripts/release.sh" --build-dir "$build_dir" --out "$dist" "${allow[@]}" >"$REL_TMP/out" 2>"$REL_TMP/err" ||
    fail "release.sh: $(tail -n 30 "$REL_TMP/err")"
  got="$(awk '{ print $2 }' "$dist/SHA256SUMS" | LC_ALL=C sort | tr '\n' ' ')"
  [[ "$got" == "$want " ]] || fail "release.sh without --images: SHA256SUMS lists $got"
  (cd "$dist" && sha256sum --quiet -c SHA256SUMS) || fail "SHA256SUMS does not verify after a run without --images"
  sed -i "s|^k8s-agent-images-$version/|k8s-agent-images-0.0.1/|" "$dist/IMAGES"
  "$repo/scripts/release.sh" --build-dir "$build_dir" --out "$dist" "${allow[@]}" >"$REL_TMP/out" 2>"$REL_TMP/err" ||
    fail "release.sh: $(tail -n 30 "$REL_TMP/err")"
  if [[ -e "$dist/IMAGES" ]] || ! grep -q "removing $dist/IMAGES (another version's images)" "$REL_TMP/err"; then
    fail "an IMAGES of another version was kept: $(cat "$REL_TMP/err")"
  fi
  grep -q ' IMAGES$' "$dist/SHA256SUMS" && fail "SHA256SUMS lists the removed IMAGES"
  pass
}

case "$scenario" in
build | worker_sshd | launcher_tree_late | delivery_debian13 | stock_workers | stock_workers_userns | multiarch | release) "s_$scenario" ;;
*)
  sed -n '10,32p' "$0" >&2
  exit 2
  ;;
esac
