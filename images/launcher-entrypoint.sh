#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Launcher entrypoint: writes ~/.ssh/config for the workers from the job's
# ssh Secret, then runs the given command (e.g. mpirun). Without a Secret it
# runs the command all the same (with a note on stderr).
#
# The config names the job key (IdentityFile), Port 2222 and a known_hosts
# file that trusts the workers' shared host key (from the Secret's
# known_hosts, or generated for WORKER_HOST_PATTERN), with strict checking:
# k8s-agent checks host keys under the host name Open MPI passes.
# Environment: SECRET_DIR (/etc/ssh-secret), SSH_PORT (2222), HOME,
# WORKER_HOST_PATTERN ("*", e.g. "mpi-worker-*").
# Under Open MPI 5 it first copies the operators' OMPI_MCA_ launch settings
# (hostfile, plm_rsh_agent, plm_rsh_args, slots) to the PRTE_MCA_ names
# PRRTE reads (ompi-env.sh, one stderr line each); mpirun 5.x would
# otherwise run every rank on the launcher.
set -euo pipefail

here="$(dirname "$(readlink -f "$0")")"
# shellcheck source=images/ssh-setup.sh
source "${K8S_AGENT_SSH_SETUP:-$here/ssh-setup.sh}"

# Without the Secret (e.g. an init container that only runs
# `k8s-agent --hostfile`) there is nothing to set up: say so and run the
# command; a later login to a worker fails with the agent's own message.
if user_key_file >/dev/null; then
  if prepare_ssh_dir; then
    setup_ssh_client
  else
    # Read-only HOME (readOnlyRootFilesystem): the settings go to a writable
    # /tmp, and mpirun's agents find them through the environment.
    dir="${TMPDIR:-/tmp}/k8s-agent-ssh-$(id -u)"
    echo "${0##*/}: $HOME is not writable; ssh settings for k8s-agent in $dir (K8S_AGENT_SSH_CONFIG)" >&2
    setup_ssh_client "$dir"
    export K8S_AGENT_SSH_CONFIG="$dir/config"
  fi
else
  echo "${0##*/}: no ssh Secret in $SECRET_DIR (no id_ed25519, id_ecdsa, id_rsa or ssh-privatekey): ~/.ssh/config not written; logins to workers need it" >&2
fi
# shellcheck source=images/ompi-env.sh
. "${K8S_AGENT_OMPI_ENV:-$here/ompi-env.sh}"
[[ $# -gt 0 ]] || set -- bash
exec "$@"
