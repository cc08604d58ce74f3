# SPDX-License-Identifier: Apache-2.0
# Delivery image "k8s-agent": the portable k8s-agent binary, the workers'
# k8s-agent-sshd with a portable sshd (sshd, sshd-session, sshd-auth), the
# Open MPI presets, ompi-env.sh, a static copier, the SBOM and the licences,
# nothing else (no shell, no libc). It puts the agent, and an sshd, into
# images you do not rebuild:
#   - as an init container, `k8s-agent-deliver DIR` (the default command,
#     given DIR) copies them, the presets and ompi-env.sh (for the
#     launcher to source under Open MPI 5) into an emptyDir that the
#     training containers mount at the same DIR; a worker whose image has
#     no sshd runs `DIR/k8s-agent-sshd --keys SECRET_DIR`;
#   - as a Kubernetes image volume, the files are at the volume's root.
# Either way plm_rsh_agent points at DIR/k8s-agent (images/k8s/examples/).
#
# Build with scripts/images.sh (it stages the binaries, the portable sshd
# from scripts/sshd_build.sh and the presets as the build context).

FROM scratch
COPY k8s-agent k8s-agent-deliver k8s-agent-sshd sshd sshd-session sshd-auth \
     openmpi-mca-params.conf prte-mca-params.conf ompi-env.sh sbom.spdx.json /
# What the binaries link statically, and their licences (scripts/lib/sbom.py).
COPY licenses /licenses
# Any uid can fill an emptyDir (mode 0777); pods that require non-root
# accept this numeric one.
USER 65532:65532
ENTRYPOINT ["/k8s-agent-deliver"]
