# SPDX-License-Identifier: Apache-2.0
# Launcher image: Debian's Open MPI (mpirun), k8s-agent as its remote launch
# agent (MCA presets for Open MPI 4 and 5 in /etc/openmpi), running as uid
# 1000 (mpiuser); the entrypoint writes ~/.ssh/config from the job's Secret.
#
# Build with scripts/images.sh (it stages the build context: k8s-agent built
# once on the host, the presets, the entrypoint scripts).
# Run with the Secret mounted at /etc/ssh-secret (see images/k8s/), e.g.
#   mpirun --hostfile /etc/mpi/hostfile -n 4 ./app

ARG DEBIAN_IMAGE=debian:bookworm-slim
FROM ${DEBIAN_IMAGE}

# Kept identical to worker.Dockerfile's first layers so both images share
# them (the launcher never starts the sshd it carries). openssh-client gives
# ssh-keygen (public keys from private ones) and plain ssh for debugging;
# k8s-agent itself needs no ssh binary.
ARG AGENT_PACKAGES=""
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      openmpi-bin openssh-client openssh-server ca-certificates ${AGENT_PACKAGES} \
 && rm -rf /var/lib/apt/lists/* /etc/ssh/ssh_host_*
RUN useradd --uid 1000 --user-group --create-home --shell /bin/bash mpiuser

COPY k8s-agent /usr/local/bin/k8s-agent
# ompi-env.sh: sourced by the entrypoint (or `. ompi-env.sh` in your own
# command); under Open MPI 5 it maps OMPI_MCA_orte_default_hostfile,
# plm_rsh_agent, plm_rsh_args to their PRTE_MCA_ names.
COPY ssh-setup.sh ompi-env.sh launcher-entrypoint.sh /usr/local/lib/k8s-agent/
# Open MPI 4 reads openmpi-mca-params.conf (plm_rsh_agent = k8s-agent);
# Open MPI 5's mpirun ignores it and reads prte-mca-params.conf
# (plm_ssh_agent = k8s-agent). Debian's openmpi-common ships the first one
# with only comments; it is replaced.
COPY openmpi-mca-params.conf prte-mca-params.conf /etc/openmpi/

# The SBOM of k8s-agent as copied here (its checksum) and the licences of
# what it links statically (scripts/images.sh stages them).
COPY sbom.spdx.json /usr/share/doc/k8s-agent/
COPY licenses /usr/share/doc/k8s-agent/licenses

ENV PATH=/usr/local/bin:/usr/bin:/bin \
    SECRET_DIR=/etc/ssh-secret \
    SSH_PORT=2222

USER 1000:1000
WORKDIR /home/mpiuser
ENTRYPOINT ["/usr/local/lib/k8s-agent/launcher-entrypoint.sh"]
CMD ["bash"]
