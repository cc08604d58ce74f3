# SPDX-License-Identifier: Apache-2.0
# Delivery image "k8s-agent" without the workers' side: the arm64 one that
# scripts/images.sh --arch ...,arm64 builds. The same as
# k8s-agent.Dockerfile (the agent, the static copier, the presets,
# ompi-env.sh, the SBOM and the licences, at the image root) but without
# k8s-agent-sshd and the portable sshd: scripts/sshd_build.sh builds that
# sshd for x86_64 only so far. Workers of an arm64 job need an sshd of
# their own (openssh-server in their image); k8s-agent-deliver then
# delivers the rest and says "no sshd side in this image".

FROM scratch
COPY k8s-agent k8s-agent-deliver openmpi-mca-params.conf prte-mca-params.conf ompi-env.sh sbom.spdx.json /
# What the binaries link statically, and their licences (scripts/lib/sbom.py).
COPY licenses /licenses
LABEL org.k8s-agent.sshd-side="none: no portable sshd for this architecture yet; workers need openssh-server"
# Any uid can fill an emptyDir (mode 0777); pods that require non-root
# accept this numeric one.
USER 65532:65532
ENTRYPOINT ["/k8s-agent-deliver"]
