# SPDX-License-Identifier: Apache-2.0
# shellcheck shell=sh
# Sourced (`. ompi-env.sh`, POSIX sh): under Open MPI 5 copies the
# OMPI_MCA_* launch settings that operators set (mpi-operator, Kubeflow
# Trainer) to the PRTE_MCA_* names PRRTE reads. Plain `mpirun` 5.x ignores
# the OMPI_MCA_ spellings, so without this it finds no hostfile and no
# agent and runs every rank on the launcher, reporting success
# (mpi-operator#842, trainer#4028).
#
# A PRTE_MCA_* name that is already set is kept (and wins over the OMPI_MCA_
# one). One line per translation goes to stderr. Under Open MPI 4 nothing
# changes. Sourcing it twice changes nothing more.
#
# OMPI_MCA_orte_keep_fqdn_hostnames is not translated: PRRTE's mpirun keeps
# the host names as given anyway, and prte_keep_fqdn_hostnames=true makes it
# ssh to the launcher itself (trainer#4028).
#
# Detection: K8S_AGENT_OMPI_MAJOR (e.g. 4 or 5) if set; else 5 when
# prte_info or prterun is on PATH or `ompi_info --version` says v5.

_k8s_agent_ompi_major() {
  if [ -n "${K8S_AGENT_OMPI_MAJOR:-}" ]; then
    echo "$K8S_AGENT_OMPI_MAJOR"
  elif command -v prte_info >/dev/null 2>&1 || command -v prterun >/dev/null 2>&1; then
    echo 5
  elif command -v ompi_info >/dev/null 2>&1; then
    case "$(ompi_info --version 2>/dev/null)" in
      *"Open MPI v5."*) echo 5 ;;
      *"Open MPI v"[0-9]*) echo 4 ;;
      *) echo unknown ;;
    esac
  else
    echo unknown
  fi
}

# _k8s_agent_prte OMPI_NAME PRTE_NAME: the names are fixed strings below,
# never user input, so eval only reads and exports those variables.
_k8s_agent_prte() {
  eval "_k8s_agent_o=\${$1:-}"
  eval "_k8s_agent_p=\${$2:-}"
  if [ -z "$_k8s_agent_o" ] || [ "$_k8s_agent_o" = "$_k8s_agent_p" ]; then
    :
  elif [ -z "$_k8s_agent_p" ]; then
    eval "$2=\$_k8s_agent_o; export $2"
    echo "k8s-agent: Open MPI 5 (PRRTE) ignores $1; set $2=$_k8s_agent_o" >&2
  else
    echo "k8s-agent: Open MPI 5 (PRRTE) ignores $1=$_k8s_agent_o; $2=$_k8s_agent_p is already set and is the one used" >&2
  fi
}

if [ -n "${OMPI_MCA_orte_default_hostfile:-}${OMPI_MCA_plm_rsh_agent:-}${OMPI_MCA_plm_rsh_args:-}${OMPI_MCA_orte_set_default_slots:-}${OMPI_MCA_orte_keep_fqdn_hostnames:-}" ] &&
   [ "$(_k8s_agent_ompi_major)" = 5 ]; then
  _k8s_agent_prte OMPI_MCA_orte_default_hostfile PRTE_MCA_prte_default_hostfile
  _k8s_agent_prte OMPI_MCA_plm_rsh_agent PRTE_MCA_plm_ssh_agent
  _k8s_agent_prte OMPI_MCA_plm_rsh_args PRTE_MCA_plm_ssh_args
  _k8s_agent_prte OMPI_MCA_orte_set_default_slots PRTE_MCA_prte_set_default_slots
  if [ -n "${OMPI_MCA_orte_keep_fqdn_hostnames:-}" ] && [ -z "${K8S_AGENT_OMPI_ENV_FQDN_NOTED:-}" ]; then
    echo "k8s-agent: Open MPI 5 (PRRTE) ignores OMPI_MCA_orte_keep_fqdn_hostnames; not translated (PRRTE keeps host names as given; prte_keep_fqdn_hostnames=true would make it ssh to the launcher)" >&2
    K8S_AGENT_OMPI_ENV_FQDN_NOTED=1
  fi
fi
unset -f _k8s_agent_ompi_major _k8s_agent_prte
unset _k8s_agent_o _k8s_agent_p
