# SPDX-License-Identifier: Apache-2.0
# Worker image: Debian's Open MPI and sshd on port 2222 as uid 1000
# (mpiuser), run by k8s-agent-sshd from the job's ssh Secret; also carries
# k8s-agent, which orted/prted runs here under tree spawn (more than 64
# hosts).
#
# Build with scripts/images.sh: it builds k8s-agent once on the host and
# stages this image's build context (k8s-agent, k8s-agent-sshd, the MCA
# presets), so no compiler runs in the image and a source change
# costs a COPY, not a rebuild. Run with the Secret mounted at /etc/ssh-secret
# (see images/k8s/).

ARG DEBIAN_IMAGE=debian:bookworm-slim
FROM ${DEBIAN_IMAGE}

# The same first layers as launcher.Dockerfile, so the two images share
# them. AGENT_PACKAGES is empty for the portable k8s-agent (only glibc);
# for a binary linked against the build machine's libraries images.sh names
# their packages (same Debian release only). openssh-server's postinst
# generates host keys; they are dropped because the job's Secret supplies
# the one host key all workers share (the launcher trusts exactly that key).
ARG AGENT_PACKAGES=""
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      openmpi-bin openssh-client openssh-server ca-certificates ${AGENT_PACKAGES} \
 && rm -rf /var/lib/apt/lists/* /etc/ssh/ssh_host_*
RUN useradd --uid 1000 --user-group --create-home --shell /bin/bash mpiuser

# No sshd beside k8s-agent-sshd here, so it runs Debian's /usr/sbin/sshd
# (the delivery image pairs it with the portable one instead).
COPY k8s-agent k8s-agent-sshd /usr/local/bin/
# Under tree spawn the orted here launches further daemons, and a preset in
# a config file is not forwarded to it: it reads this node's file. Debian's
# openmpi-common ships openmpi-mca-params.conf with only comments.
COPY openmpi-mca-params.conf prte-mca-params.conf /etc/openmpi/

# The SBOM of k8s-agent and k8s-agent-sshd as copied here (their checksums) and
# the licences of what they link statically (scripts/images.sh stages them).
COPY sbom.spdx.json /usr/share/doc/k8s-agent/
COPY licenses /usr/share/doc/k8s-agent/licenses

# sshd gives ssh sessions (orted, prted) only its compiled-in PATH and none of
# the container's environment; k8s-agent-sshd copies PATH, LD_LIBRARY_PATH
# (when set), KUBERNETES_SERVICE_* and K8S_AGENT_* into sshd's SetEnv. So an
# image built FROM this one sets e.g. ENV PATH=/opt/app/bin:$PATH or
# ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64 and remote daemons see it.
# Debian's Open MPI lives in /usr/bin and the default library path, so no
# LD_LIBRARY_PATH is set here (an empty one would mean ".").
ENV PATH=/usr/local/bin:/usr/bin:/bin

USER 1000:1000
WORKDIR /home/mpiuser
EXPOSE 2222
# Defaults: port 2222, the Secret at /etc/ssh-secret, its files in a fresh
# directory under $TMPDIR or /tmp (an emptyDir under readOnlyRootFilesystem).
# Arguments are its options (k8s-agent-sshd --help), e.g. --keys /etc/mpi.
ENTRYPOINT ["/usr/local/bin/k8s-agent-sshd"]
