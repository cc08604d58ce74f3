#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Checks every pod template under images/k8s against the Pod Security
Standards' "restricted" profile (which includes "baseline"), plus this
project's rule that root file systems are read-only.

Walks the tree, reads every YAML document, finds each kind's pod templates
(Pod, PodTemplate, Job, CronJob, Deployment, ReplicaSet, StatefulSet,
DaemonSet, JobSet, MPIJob and Kubeflow's *ReplicaSpecs, TrainJob,
TrainingRuntime, ClusterTrainingRuntime, LeaderWorkerSet, Volcano Job) and
checks every container, init container and ephemeral container. Any other
object that holds a pod spec fails: the test must be taught its path. A
kustomization with patches is rendered (kubectl kustomize) and its output
checked too.

A pod template annotated `k8s-agent/pod-security: baseline` is one that
cannot be restricted (root sshd, an image volume): the manifest says why.
It is held to baseline, and to every restricted rule but running as
non-root, adding only NET_BIND_SERVICE and the volume types.

Usage: pod_security_test.py [REPO_DIR]. Each violation is one line
"FAIL: FILE doc N KIND NAME, pod P, CONTAINER: RULE: detail"; exit 1 on any.
"""
import os
import shutil
import subprocess
import sys

try:
    import yaml
except ImportError:
    print("SKIP: python3-yaml is not installed (scripts/deps.sh installs it)")
    sys.exit(77)

EXEMPT_ANNOTATION = "k8s-agent/pod-security"

# Baseline: capabilities.add may name only these (the container runtimes'
# default set minus NET_RAW).
BASELINE_CAPS = {"AUDIT_WRITE", "CHOWN", "DAC_OVERRIDE", "FOWNER", "FSETID", "KILL",
                 "MKNOD", "NET_BIND_SERVICE", "SETFCAP", "SETGID", "SETPCAP", "SETUID",
                 "SYS_CHROOT"}
RESTRICTED_CAPS = {"NET_BIND_SERVICE"}
RESTRICTED_VOLUMES = {"configMap", "csi", "downwardAPI", "emptyDir", "ephemeral",
                      "persistentVolumeClaim", "projected", "secret"}
SAFE_SYSCTLS = {"kernel.shm_rmid_forced", "net.ipv4.ip_local_port_range",
                "net.ipv4.ip_unprivileged_port_start", "net.ipv4.tcp_syncookies",
                "net.ipv4.ping_group_range", "net.ipv4.ip_local_reserved_ports",
                "net.ipv4.tcp_keepalive_time", "net.ipv4.tcp_fin_timeout",
                "net.ipv4.tcp_keepalive_intvl", "net.ipv4.tcp_keepalive_probes"}
SELINUX_TYPES = {"", "container_t", "container_init_t", "container_kvm_t",
                 "container_engine_t"}
SECCOMP_OK = {"RuntimeDefault", "Localhost"}
CONTAINER_LISTS = ("initContainers", "containers", "ephemeralContainers")

failures = []
checked = {"pods": 0, "containers": 0, "baseline": 0}


def fail(where, rule, detail):
    failures.append(f"FAIL: {where}: {rule}: {detail}")


# --- Where each kind keeps its pod templates: (label, template) pairs, a
# template being a dict with "metadata" and "spec".

def _replicated_jobs(jobset_spec, prefix):
    for i, rj in enumerate(jobset_spec.get("replicatedJobs") or []):
        job = (rj.get("template") or {}).get("spec") or {}
        yield f"{prefix}replicatedJobs[{i}] {rj.get('name', '?')}", job.get("template")


def pod_templates(obj):
    """Yields (label, template) for every pod template the kind defines;
    None when the kind is unknown."""
    kind, api = obj.get("kind", ""), obj.get("apiVersion", "")
    spec = obj.get("spec") or {}
    if kind == "Pod":
        yield "pod", {"metadata": obj.get("metadata") or {}, "spec": spec}
    elif kind == "PodTemplate":
        yield "template", obj.get("template")
    elif kind == "Job" and api.startswith("batch.volcano.sh/"):
        for i, t in enumerate(spec.get("tasks") or []):
            yield f"tasks[{i}] {t.get('name', '?')}", t.get("template")
    elif kind in ("Job", "Deployment", "ReplicaSet", "ReplicationController",
                  "StatefulSet", "DaemonSet"):
        yield "template", spec.get("template")
    elif kind == "CronJob":
        yield "jobTemplate", ((spec.get("jobTemplate") or {}).get("spec") or {}).get("template")
    elif kind == "JobSet":
        yield from _replicated_jobs(spec, "")
    elif kind in ("TrainingRuntime", "ClusterTrainingRuntime"):
        yield from _replicated_jobs((spec.get("template") or {}).get("spec") or {}, "template.spec.")
    elif kind == "TrainJob":
        # A TrainJob takes its pods from its runtime; pod overrides are
        # partial specs, checked as far as they go.
        for key in ("podTemplateOverrides", "podSpecOverrides"):
            for i, o in enumerate(spec.get(key) or []):
                yield f"{key}[{i}]", {"metadata": o.get("metadata") or {},
                                      "spec": o.get("spec", o), "partial": True}
    elif kind == "LeaderWorkerSet":
        lwt = spec.get("leaderWorkerTemplate") or {}
        for key in ("leaderTemplate", "workerTemplate"):
            if key in lwt:
                yield key, lwt[key]
    elif any(k.endswith("ReplicaSpecs") for k in spec):
        # mpi-operator's MPIJob, Kubeflow training's PyTorchJob, TFJob, ...
        for key, specs in spec.items():
            if key.endswith("ReplicaSpecs"):
                for role, rs in (specs or {}).items():
                    yield f"{key}.{role}", (rs or {}).get("template")
    else:
        return


def pod_specs_anywhere(node, path=""):
    """Every dict that looks like a pod spec (a list of containers with
    images), with its path: the net for kinds this test does not know."""
    if isinstance(node, dict):
        c = node.get("containers")
        if isinstance(c, list) and c and all(isinstance(x, dict) and "image" in x for x in c):
            yield path
        for k, v in node.items():
            yield from pod_specs_anywhere(v, f"{path}.{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from pod_specs_anywhere(v, f"{path}[{i}]")


def containers_of(spec):
    for key in CONTAINER_LISTS:
        for c in spec.get(key) or []:
            yield key, c


def check_pod(where, template):
    if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        fail(where, "pod template", "missing or not a mapping")
        return
    meta, spec = template.get("metadata") or {}, template["spec"]
    partial = template.get("partial", False)
    annotations = meta.get("annotations") or {}
    level = annotations.get(EXEMPT_ANNOTATION, "restricted")
    if level not in ("restricted", "baseline"):
        fail(where, EXEMPT_ANNOTATION, f"{level!r}: only baseline may be named")
        level = "restricted"
    restricted = level == "restricted"
    checked["pods"] += 1
    checked["baseline"] += not restricted
    psc = spec.get("securityContext") or {}

    # Baseline: host namespaces, volumes, sysctls, pod-level options.
    for field in ("hostNetwork", "hostPID", "hostIPC"):
        if spec.get(field):
            fail(where, "host namespaces", f"{field}: true")
    for v in spec.get("volumes") or []:
        types = [k for k in v if k != "name"]
        if "hostPath" in types:
            fail(where, "hostPath volumes", f"volume {v.get('name')}")
        elif restricted and not set(types) <= RESTRICTED_VOLUMES:
            fail(where, "volume types",
                 f"volume {v.get('name')} is {', '.join(types)} (restricted allows "
                 f"{', '.join(sorted(RESTRICTED_VOLUMES))})")
    for s in psc.get("sysctls") or []:
        if s.get("name") not in SAFE_SYSCTLS:
            fail(where, "sysctls", f"{s.get('name')} is not in the safe set")
    for key, value in annotations.items():
        if key.startswith("container.apparmor.security.beta.kubernetes.io/") and \
                value != "runtime/default" and not value.startswith("localhost/"):
            fail(where, "AppArmor", f"annotation {key}: {value}")
        if key.startswith(("seccomp.security.alpha.kubernetes.io/",
                           "container.seccomp.security.alpha.kubernetes.io/")):
            fail(where, "seccomp", f"annotation {key} (removed in 1.27; use securityContext.seccompProfile)")
    check_context(where, "pod securityContext", psc, restricted, pod_level=True)
    if restricted and psc.get("runAsGroup") == 0:
        fail(where, "non-root groups", "pod runAsGroup: 0")

    pod_seccomp = (psc.get("seccompProfile") or {}).get("type")
    pod_nonroot = psc.get("runAsNonRoot") is True
    emptydirs = {v["name"] for v in spec.get("volumes") or [] if "emptyDir" in v}
    if not list(containers_of(spec)) and not partial:
        fail(where, "containers", "none")
    for key, c in containers_of(spec):
        checked["containers"] += 1
        cw = f"{where}, {key} {c.get('name', '?')}"
        sc = c.get("securityContext") or {}
        check_context(cw, "securityContext", sc, restricted, pod_level=False)
        if sc.get("privileged"):
            fail(cw, "privileged", "privileged: true")
        if sc.get("procMount") not in (None, "Default"):
            fail(cw, "procMount", sc["procMount"])
        for p in c.get("ports") or []:
            if p.get("hostPort"):
                fail(cw, "host ports", f"hostPort {p['hostPort']}")
        for probe_key in ("livenessProbe", "readinessProbe", "startupProbe"):
            probe = c.get(probe_key) or {}
            for handler in ("httpGet", "tcpSocket"):
                if (probe.get(handler) or {}).get("host"):
                    fail(cw, "host probes", f"{probe_key}.{handler}.host")
        for hook in ("postStart", "preStop"):
            h = (c.get("lifecycle") or {}).get(hook) or {}
            for handler in ("httpGet", "tcpSocket"):
                if (h.get(handler) or {}).get("host"):
                    fail(cw, "host lifecycle hooks", f"lifecycle.{hook}.{handler}.host")
        caps = sc.get("capabilities") or {}
        allowed = RESTRICTED_CAPS if restricted else BASELINE_CAPS
        for cap in caps.get("add") or []:
            if cap.upper().removeprefix("CAP_") not in allowed:
                fail(cw, "capabilities", f"adds {cap} (allowed: {', '.join(sorted(allowed))})")
        if "ALL" not in (caps.get("drop") or []):
            fail(cw, "capabilities", "does not drop ALL")
        if sc.get("allowPrivilegeEscalation") is not False:
            fail(cw, "allowPrivilegeEscalation", "not set to false")
        if restricted and not (pod_nonroot or sc.get("runAsNonRoot") is True):
            fail(cw, "runAsNonRoot", "neither the pod nor the container sets runAsNonRoot: true")
        if restricted and sc.get("runAsNonRoot") is False:
            fail(cw, "runAsNonRoot", "container sets runAsNonRoot: false")
        if restricted and sc.get("runAsGroup") == 0:
            fail(cw, "non-root groups", "runAsGroup: 0")
        seccomp = (sc.get("seccompProfile") or {}).get("type")
        if not (seccomp in SECCOMP_OK or (seccomp is None and pod_seccomp in SECCOMP_OK)):
            fail(cw, "seccompProfile",
                 f"{seccomp or pod_seccomp or 'unset'} (RuntimeDefault or Localhost, on the pod or here)")
        if key == "ephemeralContainers":
            continue
        if sc.get("readOnlyRootFilesystem") is not True:
            fail(cw, "readOnlyRootFilesystem", "not true (mount emptyDirs where the container writes)")
        elif key == "containers" and not writable_tmp(c, emptydirs):
            fail(cw, "writable TMPDIR",
                 "read-only root with no writable emptyDir at /tmp or under $TMPDIR "
                 "(mpirun, sshd and the entrypoints write there)")


def writable_tmp(c, emptydirs):
    env = {e.get("name"): e.get("value") for e in c.get("env") or []}
    tmpdir = env.get("TMPDIR") or "/tmp"
    for m in c.get("volumeMounts") or []:
        mp = m.get("mountPath", "").rstrip("/")
        if m.get("name") in emptydirs and not m.get("readOnly") and \
                (tmpdir == mp or tmpdir.startswith(mp + "/")):
            return True
    return False


def check_context(where, what, sc, restricted, pod_level):
    """Rules shared by the pod's and the containers' securityContext."""
    if restricted and sc.get("runAsUser") == 0:
        fail(where, "runAsUser", f"{what} runAsUser: 0")
    seccomp = (sc.get("seccompProfile") or {}).get("type")
    if seccomp is not None and seccomp not in SECCOMP_OK:
        fail(where, "seccompProfile", f"{what} type {seccomp}")
    apparmor = (sc.get("appArmorProfile") or {}).get("type")
    if apparmor is not None and apparmor not in ("RuntimeDefault", "Localhost"):
        fail(where, "AppArmor", f"{what} appArmorProfile {apparmor}")
    se = sc.get("seLinuxOptions") or {}
    if se.get("type", "") not in SELINUX_TYPES or se.get("user") or se.get("role"):
        fail(where, "SELinux", f"{what} seLinuxOptions {se}")
    if (sc.get("windowsOptions") or {}).get("hostProcess"):
        fail(where, "HostProcess", f"{what} windowsOptions.hostProcess: true")
    if pod_level and restricted:
        for g in [sc.get("fsGroup")] + list(sc.get("supplementalGroups") or []):
            if g == 0:
                fail(where, "non-root groups", f"{what} group 0")


def check_documents(rel, docs):
    for n, obj in enumerate(docs, 1):
        if not isinstance(obj, dict):
            continue
        kind = obj.get("kind", "?")
        name = (obj.get("metadata") or {}).get("name", "?")
        where = f"{rel} doc {n} {kind} {name}"
        if kind == "List":
            check_documents(f"{where} items", obj.get("items") or [])
            continue
        if kind == "Kustomization":
            continue
        found = list(pod_templates(obj))
        for label, template in found:
            check_pod(f"{where}, pod {label}", template)
        paths = list(pod_specs_anywhere(obj))
        if paths and not found:
            fail(where, "unknown kind",
                 f"holds a pod spec at {', '.join(paths)}: teach pod_security_test.py its template path")
        elif len(paths) > len(found):
            fail(where, "unchecked pod specs",
                 f"{len(paths)} pod specs at {', '.join(paths)}, {len(found)} checked")


def kustomize_patches(docs):
    keys = ("patches", "patchesStrategicMerge", "patchesJson6902", "replacements", "components")
    return any(isinstance(d, dict) and d.get("kind") == "Kustomization" and
               any(d.get(k) for k in keys) for d in docs)


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else \
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    root = os.path.join(repo, "images", "k8s")
    files = sorted(os.path.join(d, f) for d, _, fs in os.walk(root) for f in fs
                   if f.endswith((".yaml", ".yml")))
    if not files:
        print(f"FAIL: no manifests under {root}")
        return 1
    for path in files:
        rel = os.path.relpath(path, repo)
        try:
            with open(path) as fh:
                docs = list(yaml.safe_load_all(fh))
        except yaml.YAMLError as e:
            fail(rel, "YAML", str(e).replace("\n", " "))
            continue
        check_documents(rel, docs)
        if kustomize_patches(docs):
            kubectl = shutil.which("kubectl")
            if not kubectl:
                print(f"SKIP: {rel} has patches and kubectl is not installed to render them")
                return 77
            out = subprocess.run([kubectl, "kustomize", os.path.dirname(path)],
                                 capture_output=True, text=True, env=dict(os.environ, HOME="/nonexistent"))
            if out.returncode != 0:
                fail(rel, "kustomize", out.stderr.strip())
            else:
                check_documents(f"{rel} (rendered)", list(yaml.safe_load_all(out.stdout)))
    for line in failures:
        print(line)
    print(f"{len(files)} files, {checked['pods']} pod templates ({checked['baseline']} marked "
          f"baseline), {checked['containers']} containers: {len(failures)} violations")
    if checked["pods"] == 0:
        print("FAIL: no pod template found")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
