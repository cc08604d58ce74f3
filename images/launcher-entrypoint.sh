#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Launcher entrypoint: writes ~/.ssh/config for the workers from the job's
# ssh Secret, then runs the given command (e.g. mpirun).
#
# The config names the job key (IdentityFile), Port 2222 and a known_hosts
# file that trusts the workers' shared host key (from the Secret's
# known_hosts, or generated for WORKER_HOST_PATTERN), with strict checking:
# k8s-agent checks host keys under the host name Open MPI passes.
# Environment: SECRET_DIR (/etc/ssh-secret), SSH_PORT (2222), HOME,
# WORKER_HOST_PATTERN ("*", e.g. "mpi-worker-*").
set -euo pipefail

here="$(dirname "$(readlink -f "$0")")"
# shellcheck source=images/ssh-setup.sh
source "${K8S_AGENT_SSH_SETUP:-$here/ssh-setup.sh}"

setup_ssh_client
[[ $# -gt 0 ]] || set -- bash
exec "$@"
