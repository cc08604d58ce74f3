# SPDX-License-Identifier: Apache-2.0
# Launcher image: Debian's Open MPI (mpirun), k8s-agent as its remote launch
# agent (MCA presets for Open MPI 4 and 5 in /etc/openmpi), running as uid
# 1000 (mpiuser); the entrypoint writes ~/.ssh/config from the job's Secret.
#
# Build from the repository root:
#   docker build -f images/launcher.Dockerfile -t k8s-agent-launcher .
# Run with the Secret mounted at /etc/ssh-secret (see images/k8s/), e.g.
#   mpirun --hostfile /etc/mpi/hostfile -n 4 ./app

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
# openssh-client: ssh-keygen (public keys from private ones) and plain ssh
# for debugging; k8s-agent itself needs no ssh binary.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      openmpi-bin openssh-client \
      ca-certificates \
 && rm -rf /var/lib/apt/lists/*
RUN useradd --uid 1000 --user-group --create-home --shell /bin/bash mpiuser

COPY --from=build /src/build/launcher/k8s-agent /usr/local/bin/k8s-agent
COPY images/ssh-setup.sh images/launcher-entrypoint.sh /usr/local/lib/k8s-agent/
# Open MPI 4 reads openmpi-mca-params.conf (plm_rsh_agent = k8s-agent);
# Open MPI 5's mpirun ignores it and reads prte-mca-params.conf
# (plm_ssh_agent = k8s-agent). Debian's openmpi-common ships the first one
# with only comments; it is replaced.
COPY ompi-conf/openmpi-mca-params.conf ompi-conf/prte-mca-params.conf /etc/openmpi/
RUN chmod 0755 /usr/local/bin/k8s-agent /usr/local/lib/k8s-agent/*.sh \
 && chmod 0644 /etc/openmpi/openmpi-mca-params.conf /etc/openmpi/prte-mca-params.conf

ENV PATH=/usr/local/bin:/usr/bin:/bin \
    SECRET_DIR=/etc/ssh-secret \
    SSH_PORT=2222

USER 1000:1000
WORKDIR /home/mpiuser
ENTRYPOINT ["/usr/local/lib/k8s-agent/launcher-entrypoint.sh"]
CMD ["bash"]
