# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=bash disable=SC2015 # "a && b || die": die on any failure
# Shared by the image entrypoints (sourced, not run): installs the job's ssh
# Secret into ~/.ssh with the modes ssh and sshd insist on.
#
# The Secret (mounted at $SECRET_DIR, default /etc/ssh-secret) holds:
#   id_ed25519, id_ed25519.pub      the job's user key pair (id_ecdsa/id_rsa,
#                                   or mpi-operator's ssh-privatekey /
#                                   ssh-publickey, work too)
#   ssh_host_ed25519_key[.pub]      ONE host key shared by every worker
#                                   (ecdsa/rsa accepted); without it the user
#                                   key doubles as host key, as mpi-operator
#                                   does
#   authorized_keys (optional)      default: the user public key
#   known_hosts (optional)          default: a line trusting the shared host
#                                   key for $WORKER_HOST_PATTERN
#
# Secret volumes are root-owned, read-only, and their directory is
# world-writable (sticky), so neither sshd's StrictModes nor ssh's key-file
# checks accept them in place: everything is copied into a 0700 ~/.ssh that
# belongs to the running user.

SECRET_DIR="${SECRET_DIR:-/etc/ssh-secret}"
SSH_PORT="${SSH_PORT:-2222}"
# Host patterns (space separated, ssh_config syntax) the job's ssh settings
# and the shared host key apply to. "*" is safe: the known_hosts file is
# private to the job and holds only the job's own host key.
WORKER_HOST_PATTERN="${WORKER_HOST_PATTERN:-*}"

die() {
  echo "${0##*/}: $*" >&2
  exit 1
}

# Prints the path of the first existing file among $SECRET_DIR/<names>.
secret_file() {
  local name
  for name in "$@"; do
    if [[ -f "$SECRET_DIR/$name" ]]; then
      echo "$SECRET_DIR/$name"
      return 0
    fi
  done
  return 1
}

# The user private key in the Secret.
user_key_file() {
  secret_file id_ed25519 id_ecdsa id_rsa ssh-privatekey
}

# Prints the public key matching private key file $1: the .pub beside it
# (or mpi-operator's ssh-publickey), else derived with ssh-keygen -y.
public_key_of() {
  local key="$1" pub
  for pub in "$key.pub" "${key%ssh-privatekey}ssh-publickey"; do
    if [[ "$pub" != "$key" && -f "$pub" ]]; then
      head -n 1 "$pub"
      return 0
    fi
  done
  ssh-keygen -y -f "$key" || die "cannot read the public key of $key"
}

# Copies file $1 to $2 with mode $3, atomically enough for a fresh start.
install_file() {
  install -m "$3" /dev/null "$2.tmp" && cat "$1" >"$2.tmp" &&
    mv -f "$2.tmp" "$2" || die "cannot install $1 as $2"
}

# Creates ~/.ssh (0700). Returns non-zero if $HOME is not writable.
prepare_ssh_dir() {
  SSH_DIR="$HOME/.ssh"
  mkdir -p "$SSH_DIR" 2>/dev/null && chmod 0700 "$SSH_DIR" 2>/dev/null &&
    [[ -w "$SSH_DIR" ]]
}

# Writes ~/.ssh/<key>, known_hosts_workers and config so that ssh and
# k8s-agent reach the workers on $SSH_PORT with the job key, checking the
# host key strictly. Paths are absolute: OpenSSH expands "~" from the passwd
# entry, which need not match $HOME in a container. With a directory as $1
# (HOME is read-only) the files go there instead; only k8s-agent then finds
# them, through K8S_AGENT_SSH_CONFIG=$1/config.
setup_ssh_client() {
  local key pattern pattern_list patterns="" known line host_key host_pub
  key="$(user_key_file)" || die "no user key (id_ed25519, id_ecdsa, id_rsa or ssh-privatekey) in $SECRET_DIR"
  if [[ -n "${1:-}" ]]; then
    SSH_DIR="$1"
    mkdir -p "$SSH_DIR" && chmod 0700 "$SSH_DIR" ||
      die "cannot create $SSH_DIR: neither HOME nor ${TMPDIR:-/tmp} is writable (mount an emptyDir on one)"
  else
    prepare_ssh_dir || die "cannot create $HOME/.ssh: HOME is not writable (mount an emptyDir on $HOME)"
  fi
  local id_name="${key##*/}"
  [[ "$id_name" == id_* ]] || id_name=id_job
  install_file "$key" "$SSH_DIR/$id_name" 0600
  public_key_of "$key" >"$SSH_DIR/$id_name.pub"

  known="$SSH_DIR/known_hosts_workers"
  if [[ -f "$SECRET_DIR/known_hosts" ]]; then
    install_file "$SECRET_DIR/known_hosts" "$known" 0600
  else
    # One host key shared by all workers: trust it for every worker name,
    # bare ("w-0") and with the port ("[w-0]:2222", how ssh and k8s-agent
    # look a host up when the port is not 22).
    if host_key="$(secret_file ssh_host_ed25519_key ssh_host_ecdsa_key ssh_host_rsa_key)"; then
      host_pub="$(public_key_of "$host_key")"
    elif host_pub="$(secret_file ssh_host_ed25519_key.pub ssh_host_ecdsa_key.pub ssh_host_rsa_key.pub)"; then
      host_pub="$(head -n 1 "$host_pub")"
    else
      host_pub="$(public_key_of "$key")"  # mpi-operator: user key = host key
    fi
    read -r -a pattern_list <<<"$WORKER_HOST_PATTERN"  # No globbing.
    for pattern in "${pattern_list[@]}"; do
      patterns+="${patterns:+,}$pattern,[$pattern]:$SSH_PORT"
    done
    # Keep "type base64", drop the comment.
    read -r -a line <<<"$host_pub"
    [[ ${#line[@]} -ge 2 ]] || die "malformed host public key in $SECRET_DIR"
    echo "$patterns ${line[0]} ${line[1]}" >"$known.tmp" && chmod 0600 "$known.tmp" &&
      mv -f "$known.tmp" "$known" || die "cannot write $known"
  fi

  {
    echo "# Written by ${0##*/} from $SECRET_DIR; rewritten at every start."
    echo "Host $WORKER_HOST_PATTERN"
    echo "  Port $SSH_PORT"
    echo "  IdentityFile $SSH_DIR/$id_name"
    echo "  IdentitiesOnly yes"
    echo "  UserKnownHostsFile $known"
    echo "  StrictHostKeyChecking yes"
    echo "  BatchMode yes"
  } >"$SSH_DIR/config.tmp" && chmod 0600 "$SSH_DIR/config.tmp" &&
    mv -f "$SSH_DIR/config.tmp" "$SSH_DIR/config" || die "cannot write $SSH_DIR/config"
}
