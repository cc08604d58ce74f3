#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Worker entrypoint: installs the job's ssh Secret and runs sshd in the
# foreground on $SSH_PORT (2222) as the container's own, non-root user.
#
# Environment: SECRET_DIR (/etc/ssh-secret), SSH_PORT (2222), HOME,
# SSHD_DIR (sshd_config, host key, pid file; default ~/.sshd), SSHD
# (/usr/sbin/sshd), SSHD_LOG_LEVEL (INFO), WORKER_HOST_PATTERN ("*"),
# SESSION_ENV (extra variable names to hand to ssh sessions).
# Arguments are passed on to sshd (e.g. -d).
# shellcheck disable=SC2015 # "a && b || die": die on any failure
set -euo pipefail

here="$(dirname "$(readlink -f "$0")")"
# shellcheck source=images/ssh-setup.sh
source "${K8S_AGENT_SSH_SETUP:-$here/ssh-setup.sh}"

SSHD="${SSHD:-/usr/sbin/sshd}"
uid="$(id -u)"

# Prints the SetEnv line for ssh sessions. sshd gives non-interactive
# sessions (orted, prted, k8s-agent under tree spawn) only its compiled-in
# PATH and nothing of the container's environment, and bash reads no profile
# for them; PAM (and so /etc/environment) is off for a non-root sshd. SetEnv
# (OpenSSH >= 7.8) is the one place that reaches every session: it passes on
# the image's PATH and LD_LIBRARY_PATH (ENV in the Dockerfile) and the
# agent's settings, so tree-spawned k8s-agent sees the same config as the
# launcher's.
session_setenv() {
  local name value out=""
  local names=(PATH LD_LIBRARY_PATH KUBERNETES_SERVICE_HOST KUBERNETES_SERVICE_PORT)
  mapfile -t -O "${#names[@]}" names < <(compgen -e K8S_AGENT_ || true)
  # shellcheck disable=SC2206 # word splitting of the name list is intended
  names+=(${SESSION_ENV:-})
  for name in "${names[@]}"; do
    value="${!name:-}"
    [[ -n "$value" ]] || continue  # An empty LD_LIBRARY_PATH means ".".
    if [[ "$value" == *[\"\\]* ]]; then
      echo "${0##*/}: not passing $name to ssh sessions: its value has a quote or backslash" >&2
      continue
    fi
    out+=" \"$name=$value\""
  done
  [[ -z "$out" ]] || echo "SetEnv$out"
}

strict_modes=yes
if prepare_ssh_dir; then
  # Tree spawn (more than 64 hosts): orted on this worker runs k8s-agent to
  # reach other workers, so it needs the same client setup as the launcher.
  setup_ssh_client
  sshd_dir="${SSHD_DIR:-$HOME/.sshd}"
  mkdir -p "$sshd_dir" && chmod 0700 "$sshd_dir" || die "cannot create $sshd_dir"
  src="$(secret_file ssh_host_ed25519_key ssh_host_ecdsa_key ssh_host_rsa_key || user_key_file)" ||
    die "no host key (ssh_host_ed25519_key) or user key in $SECRET_DIR"
  host_key="$sshd_dir/ssh_host_key"
  # sshd refuses a host key that is readable by others and owned by us.
  install_file "$src" "$host_key" 0600
  auth_keys="$SSH_DIR/authorized_keys"
  if [[ -f "$SECRET_DIR/authorized_keys" ]]; then
    install_file "$SECRET_DIR/authorized_keys" "$auth_keys" 0600
  else
    public_key_of "$(user_key_file)" >"$auth_keys" && chmod 0600 "$auth_keys" ||
      die "cannot write $auth_keys"
  fi
else
  # HOME is read-only (readOnlyRootFilesystem without an emptyDir on HOME):
  # use the Secret's files where they are mounted. Only here is StrictModes
  # off, because a Secret volume's directory is root-owned and world-writable
  # (sticky), which StrictModes rejects for authorized_keys however the
  # files' modes are set. The host key needs no copy: sshd only insists on
  # 0600 for key files that the sshd user owns, and Secret files are root's.
  strict_modes=no
  sshd_dir="${SSHD_DIR:-${TMPDIR:-/tmp}/sshd-$uid}"
  mkdir -p "$sshd_dir" && chmod 0700 "$sshd_dir" ||
    die "cannot create $sshd_dir for sshd's config and pid file: mount an emptyDir on $HOME (or on ${TMPDIR:-/tmp})"
  # No ~/.ssh/config either: the client settings for k8s-agent run by orted
  # here (tree spawn, beyond 64 hosts) go beside sshd's files, and sessions
  # get K8S_AGENT_SSH_CONFIG through SetEnv below.
  setup_ssh_client "$sshd_dir/ssh"
  export K8S_AGENT_SSH_CONFIG="$sshd_dir/ssh/config"
  echo "${0##*/}: $HOME is not writable; using $SECRET_DIR in place (StrictModes no)," \
    "ssh settings for k8s-agent in $K8S_AGENT_SSH_CONFIG" >&2
  host_key="$(secret_file ssh_host_ed25519_key ssh_host_ecdsa_key ssh_host_rsa_key || user_key_file)" ||
    die "no host key (ssh_host_ed25519_key) or user key in $SECRET_DIR"
  auth_keys="$(secret_file authorized_keys id_ed25519.pub id_ecdsa.pub id_rsa.pub ssh-publickey)" ||
    die "no authorized_keys or public user key in $SECRET_DIR"
fi

if [[ "$uid" == 0 ]]; then
  mkdir -p /run/sshd  # Privilege separation directory; only root needs it.
fi

config="$sshd_dir/sshd_config"
{
  echo "# Written by ${0##*/}; rewritten at every start."
  echo "Port $SSH_PORT"
  echo "HostKey $host_key"
  echo "PidFile $sshd_dir/sshd.pid"
  echo "AuthorizedKeysFile $auth_keys"
  echo "StrictModes $strict_modes"
  echo "PubkeyAuthentication yes"
  echo "PasswordAuthentication no"
  echo "KbdInteractiveAuthentication no"
  # PAM needs root; a non-root sshd can only log in its own user anyway.
  echo "UsePAM no"
  echo "PermitRootLogin prohibit-password"
  echo "PermitUserEnvironment no"
  echo "X11Forwarding no"
  echo "AllowTcpForwarding no"
  echo "AllowAgentForwarding no"
  echo "PrintMotd no"
  echo "PrintLastLog no"
  # mpirun starts up to 128 launches at once (plm_rsh_num_concurrent), plus
  # readiness probes: do not drop unauthenticated connections at 10.
  echo "MaxStartups 200:30:400"
  echo "LogLevel ${SSHD_LOG_LEVEL:-INFO}"
  session_setenv
} >"$config.tmp" && mv -f "$config.tmp" "$config" || die "cannot write $config"

exec "$SSHD" -D -e -f "$config" "$@"
