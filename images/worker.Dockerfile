# SPDX-License-Identifier: Apache-2.0
# Worker image: Debian's Open MPI and sshd on port 2222 as uid 1000
# (mpiuser), keys from the job's ssh Secret; also carries k8s-agent, which
# orted runs here under tree spawn (more than 64 hosts).
#
# Build from the repository root:
#   docker build -f images/worker.Dockerfile -t k8s-agent-worker .
# Run with the Secret mounted at /etc/ssh-secret (see images/k8s/).

ARG DEBIAN_IMAGE=debian:bookworm-slim

# --- k8s-agent, built from this repository.
FROM ${DEBIAN_IMAGE} AS build
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      ca-certificates cmake g++ make dpkg-dev xz-utils debian-archive-keyring \
      libssl-dev libnghttp2-dev nlohmann-json3-dev libyaml-cpp-dev \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY CMakeLists.txt ./
# libssh2 and libcurl from Debian 13's source packages (apt-get source).
COPY scripts/third_party.sh scripts/
COPY plugin/ plugin/
COPY launcher/ launcher/
COPY ompi-conf/ ompi-conf/
RUN cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DBUILD_TESTING=OFF \
 && cmake --build build -j"$(nproc)" --target k8s-agent \
 && strip build/launcher/k8s-agent \
 && build/launcher/k8s-agent --version

# --- Runtime.
FROM ${DEBIAN_IMAGE}
# openssh-server's postinst generates host keys; they are dropped because the
# job's Secret supplies the one host key all workers share (the launcher
# trusts exactly that key).
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      openmpi-bin openssh-server openssh-client \
      ca-certificates \
 && rm -rf /var/lib/apt/lists/* /etc/ssh/ssh_host_*
RUN useradd --uid 1000 --user-group --create-home --shell /bin/bash mpiuser

COPY --from=build /src/build/launcher/k8s-agent /usr/local/bin/k8s-agent
COPY images/ssh-setup.sh images/worker-entrypoint.sh /usr/local/lib/k8s-agent/
# Under tree spawn the orted here launches further daemons, and a preset in
# a config file is not forwarded to it: it reads this node's file.
COPY ompi-conf/openmpi-mca-params.conf ompi-conf/prte-mca-params.conf /etc/openmpi/
RUN chmod 0755 /usr/local/bin/k8s-agent /usr/local/lib/k8s-agent/*.sh \
 && chmod 0644 /etc/openmpi/openmpi-mca-params.conf /etc/openmpi/prte-mca-params.conf

# sshd gives ssh sessions (orted, prted) only its compiled-in PATH and none of
# the container's environment; the entrypoint copies PATH, LD_LIBRARY_PATH
# (when set) and K8S_AGENT_* into sshd's SetEnv. So an image built FROM this
# one sets e.g. ENV PATH=/opt/app/bin:$PATH or
# ENV LD_LIBRARY_PATH=/usr/local/cuda/lib64 and remote daemons see it.
# Debian's Open MPI lives in /usr/bin and the default library path, so no
# LD_LIBRARY_PATH is set here (an empty one would mean ".").
ENV PATH=/usr/local/bin:/usr/bin:/bin \
    SECRET_DIR=/etc/ssh-secret \
    SSH_PORT=2222

USER 1000:1000
WORKDIR /home/mpiuser
EXPOSE 2222
ENTRYPOINT ["/usr/local/lib/k8s-agent/worker-entrypoint.sh"]
