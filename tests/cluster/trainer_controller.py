#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What Kubeflow Trainer v2's MPI runtime makes of a TrainJob, as plain Kubernetes 1.20 objects.

Trainer turns a TrainJob and its (Cluster)TrainingRuntime into a JobSet, which the JobSet controller turns
into Indexed Jobs; 1.20 has neither JobSet nor Indexed Jobs, so this writes what those would leave in the
namespace. Read from kubeflow/trainer (master at "chore(ci): add kep scope for PR titles"):
pkg/runtime/framework/plugins/mpi/mpi.go, pkg/constants/constants.go, pkg/apply/apply.go and
pkg/runtime/framework/plugins/jobset/jobset.go (syncPodNetwork); and kubernetes-sigs/jobset's
pkg/controllers/jobset_controller.go (constructJob, labelAndAnnotateObject, the headless Service) and
pkg/webhooks/jobset_webhook.go (its defaults):
- Secret TRAINJOB-mpi-ssh-auth (kubernetes.io/ssh-auth, immutable): one ECDSA P-521 key, "EC PRIVATE KEY"
  PEM as ssh-privatekey, its authorized_keys line as ssh-publickey; volume mpi-ssh-auth (defaultMode 0400,
  items id_rsa 0640, id_rsa.pub and authorized_keys 0644) in the launcher and node pods, mounted at
  sshAuthMountPath (default /root/.ssh) in their containers named "node";
- ConfigMap TRAINJOB-mpi-hostfile: "TRAINJOB-RJOB-J-P.SUBDOMAIN slots=S" for every node pod (and the
  launcher's with runLauncherAsNode), mounted as /etc/mpi/hostfile (0444) in the launcher;
- the headless Service SUBDOMAIN (default: the TrainJob's name) selecting jobset-name, with
  publishNotReadyAddresses (default true);
- for each replicated job J of RJOB, its pods as the Indexed Job TRAINJOB-RJOB-J would make them: named
  TRAINJOB-RJOB-J-P-xxxxx, hostname TRAINJOB-RJOB-J-P, the subdomain, JobSet's labels and annotations
  (jobset-name, jobset-uid, replicatedjob-name, replicatedjob-replicas, global-replicas, job-index,
  job-global-index, job-key, restart-attempt, group-*), the Job controller's (job-name, controller-uid,
  batch.kubernetes.io/job-completion-index as label and annotation) and JOB_COMPLETION_INDEX; restartPolicy
  OnFailure when the template gives none. The launcher, one pod, is a real Job of that name (1.20 gives its
  pod no hostname, so the template carries the one the Indexed Job would);
- the launcher's node container: Trainer UPSERTS by name (an existing entry is replaced where it stands,
  a new one appended) OMPI_MCA_orte_default_hostfile=/etc/mpi/hostfile, OMPI_MCA_orte_keep_fqdn_hostnames
  =true, OMPI_MCA_orte_set_default_slots=S, OMPI_MCA_plm_rsh_args="-o ConnectionAttempts=10", in that
  order. With --prte, then trainer PR #4029's (open; the order of its description's table):
  PRTE_MCA_prte_default_hostfile, PRTE_MCA_prte_keep_fqdn_hostnames=false (hostfile names are short),
  PRTE_MCA_prte_set_default_slots, PRTE_MCA_plm_ssh_args="-o ConnectionAttempts=10".
UIDs are fresh (no TrainJob or JobSet object exists here). Not rendered: TrainJob overrides other than
numNodes and numProcPerNode, initializers, numProcPerNode from GPUs, suspend and the success policy (the
scenario waits for the launcher Job). The manifest's other documents pass through unchanged, first.
Output: one JSON List for kubectl apply -f -.

Usage: trainer_controller.py [--prte] MANIFEST NAMESPACE KEYDIR (KEYDIR/id: the ECDSA key, made if absent)
"""

import hashlib
import json
import os
import secrets
import string
import sys
import uuid

import yaml

# Trainer makes its key as mpi-operator does: ECDSA P-521, SEC1 PEM, an authorized_keys line.
from mpijob_controller import key_pair

JOBSET = "jobset.sigs.k8s.io/"
HOSTFILE_DIR = "/etc/mpi"
SSH_VOLUME = "mpi-ssh-auth"
HOSTFILE_VOLUME = "mpi-hostfile"
RSH_ARGS = "-o ConnectionAttempts=10"
# What the Job controller gives every container of an Indexed Job's pod.
COMPLETION_INDEX_ENV = {"name": "JOB_COMPLETION_INDEX", "valueFrom": {
    "fieldRef": {"fieldPath": "metadata.annotations['batch.kubernetes.io/job-completion-index']"}}}


def upsert(items, item, key):
    """pkg/apply's upsert: replace the first entry with the same key in place, else append."""
    for i, old in enumerate(items):
        if old.get(key) == item[key]:
            items[i] = item
            return
    items.append(item)


def mpi_env(slots, prte):
    env = [
        ("OMPI_MCA_orte_default_hostfile", f"{HOSTFILE_DIR}/hostfile"),
        ("OMPI_MCA_orte_keep_fqdn_hostnames", "true"),
        ("OMPI_MCA_orte_set_default_slots", str(slots)),
        ("OMPI_MCA_plm_rsh_args", RSH_ARGS),
    ]
    if prte:
        env += [
            ("PRTE_MCA_prte_default_hostfile", f"{HOSTFILE_DIR}/hostfile"),
            ("PRTE_MCA_prte_keep_fqdn_hostnames", "false"),
            ("PRTE_MCA_prte_set_default_slots", str(slots)),
            ("PRTE_MCA_plm_ssh_args", RSH_ARGS),
        ]
    return env


def enforce_mpi(rjob, pod_spec, name, mpi, slots, prte):
    """mpi.go EnforceMLPolicy for the launcher and node pod sets."""
    volumes = pod_spec.setdefault("volumes", [])
    upsert(volumes, {"name": SSH_VOLUME, "secret": {
        "secretName": name + "-mpi-ssh-auth", "defaultMode": 0o400, "items": [
            {"key": "ssh-privatekey", "path": "id_rsa", "mode": 0o640},
            {"key": "ssh-publickey", "path": "id_rsa.pub", "mode": 0o644},
            {"key": "ssh-publickey", "path": "authorized_keys", "mode": 0o644}]}}, "name")
    if rjob == "launcher":
        upsert(volumes, {"name": HOSTFILE_VOLUME, "configMap": {
            "name": name + "-mpi-hostfile",
            "items": [{"key": "hostfile", "path": "hostfile", "mode": 0o444}]}}, "name")
    for container in pod_spec["containers"]:
        if container["name"] != "node":
            continue
        mounts = container.setdefault("volumeMounts", [])
        upsert(mounts, {"name": SSH_VOLUME, "mountPath": mpi.get("sshAuthMountPath", "/root/.ssh")}, "mountPath")
        if rjob == "launcher":
            upsert(mounts, {"name": HOSTFILE_VOLUME, "mountPath": HOSTFILE_DIR}, "mountPath")
            env = container.setdefault("env", [])
            for k, v in mpi_env(slots, prte):
                upsert(env, {"name": k, "value": v}, "name")


def jobset_meta(js, uid, rjobs, rjob, job_idx, ns):
    """labelAndAnnotateObject: the same keys as labels and as annotations (no groups: "default")."""
    job_name = f"{js}-{rjob['name']}-{job_idx}"
    replicas = {r["name"]: int(r.get("replicas", 1)) for r in rjobs}
    global_idx = sum(replicas[r["name"]] for r in rjobs[:rjobs.index(rjob)]) + job_idx
    total = str(sum(replicas.values()))
    return {
        JOBSET + "jobset-name": js,
        JOBSET + "jobset-uid": uid,
        JOBSET + "replicatedjob-name": rjob["name"],
        JOBSET + "restart-attempt": "0",
        JOBSET + "replicatedjob-replicas": str(replicas[rjob["name"]]),
        JOBSET + "global-replicas": total,
        JOBSET + "job-index": str(job_idx),
        JOBSET + "job-key": hashlib.sha1(f"{ns}/{job_name}".encode()).hexdigest(),
        JOBSET + "job-global-index": str(global_idx),
        JOBSET + "group-name": "default",
        JOBSET + "group-replicas": total,
        JOBSET + "job-group-index": str(global_idx),
    }


def pod_suffix():
    """The 5 characters the API server's generateName adds (its alphabet: no vowels, no 0, 1, 3)."""
    alphabet = "".join(c for c in string.ascii_lowercase + string.digits if c not in "aeiou013")
    return "".join(secrets.choice(alphabet) for _ in range(5))


def render(runtime, trainjob, ns, keydir, prte):
    name = trainjob["metadata"]["name"]
    policy = runtime["spec"]["mlPolicy"]
    mpi = dict(policy.get("mpi") or {})
    if mpi.get("mpiImplementation", "OpenMPI") != "OpenMPI":
        sys.exit("only mpiImplementation OpenMPI is rendered (the MPI plugin supports no other)")
    trainer = trainjob["spec"].get("trainer") or {}
    for field in trainer:
        if field not in ("numNodes", "numProcPerNode"):
            sys.exit(f"TrainJob spec.trainer.{field} is not rendered")
    as_node = bool(mpi.get("runLauncherAsNode", False))
    num_nodes = int(trainer.get("numNodes", policy.get("numNodes", 1)))
    slots = int(trainer.get("numProcPerNode", mpi.get("numProcPerNode", 1)))
    spec = runtime["spec"]["template"]["spec"]
    network = spec.get("network") or {}
    subdomain = network.get("subdomain", name)
    rjobs = json.loads(json.dumps(spec["replicatedJobs"]))
    counts = {}
    for rjob in rjobs:
        counts[rjob["name"]] = (max(num_nodes - 1, 1) if as_node else num_nodes) if rjob["name"] == "node" else 1
    hosts = [f"{name}-{r['name']}-{j}-{p}.{subdomain} slots={slots}\n"
             for r in rjobs if r["name"] == "node" or (as_node and r["name"] == "launcher")
             for j in range(int(r.get("replicas", 1))) for p in range(counts[r["name"]])]
    private, public = key_pair(keydir)
    js_uid = str(uuid.uuid4())
    out = [
        {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/ssh-auth", "immutable": True,
         "metadata": {"name": name + "-mpi-ssh-auth", "namespace": ns},
         "stringData": {"ssh-privatekey": private, "ssh-publickey": public}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name + "-mpi-hostfile", "namespace": ns},
         "data": {"hostfile": "".join(hosts)}},
        {"apiVersion": "v1", "kind": "Service", "metadata": {"name": subdomain, "namespace": ns},
         "spec": {"clusterIP": "None", "selector": {JOBSET + "jobset-name": name},
                  "publishNotReadyAddresses": network.get("publishNotReadyAddresses", True)}},
    ]
    for rjob in rjobs:
        job_template = rjob["template"]
        pod_template = job_template["spec"]["template"]
        pod_spec = pod_template["spec"]
        if rjob["name"] in ("launcher", "node"):
            enforce_mpi(rjob["name"], pod_spec, name, mpi, slots, prte)
        if network.get("enableDNSHostnames", True):
            pod_spec["subdomain"] = subdomain
        pod_spec.setdefault("restartPolicy", "OnFailure")
        count = counts[rjob["name"]]
        for job_idx in range(int(rjob.get("replicas", 1))):
            job_name = f"{name}-{rjob['name']}-{job_idx}"
            meta = jobset_meta(name, js_uid, rjobs, rjob, job_idx, ns)
            controller_uid = str(uuid.uuid4())
            for pod_idx in range(count):
                spec_i = json.loads(json.dumps(pod_spec))
                spec_i["hostname"] = f"{job_name}-{pod_idx}"
                for container in spec_i["containers"]:
                    upsert(container.setdefault("env", []), dict(COMPLETION_INDEX_ENV), "name")
                labels = dict(pod_template.get("metadata", {}).get("labels") or {}, **meta)
                labels.update({"job-name": job_name, "batch.kubernetes.io/job-name": job_name,
                               "batch.kubernetes.io/job-completion-index": str(pod_idx)})
                annotations = dict(pod_template.get("metadata", {}).get("annotations") or {}, **meta)
                annotations["batch.kubernetes.io/job-completion-index"] = str(pod_idx)
                if rjob["name"] == "launcher" and count == 1:
                    # A real Job: its controller adds job-name and controller-uid itself.
                    del labels["job-name"]
                    job_meta = dict(job_template.get("metadata") or {}, name=job_name, namespace=ns)
                    job_meta["labels"] = dict(job_meta.get("labels") or {}, **meta)
                    job_meta["annotations"] = dict(job_meta.get("annotations") or {}, **meta)
                    job_spec = {k: v for k, v in job_template["spec"].items() if k != "template"}
                    job_spec.update(parallelism=1, completions=1, template={
                        "metadata": {"labels": labels, "annotations": annotations}, "spec": spec_i})
                    out.append({"apiVersion": "batch/v1", "kind": "Job", "metadata": job_meta, "spec": job_spec})
                    continue
                labels.update({"controller-uid": controller_uid,
                               "batch.kubernetes.io/controller-uid": controller_uid})
                out.append({"apiVersion": "v1", "kind": "Pod",
                            "metadata": {"name": f"{job_name}-{pod_idx}-{pod_suffix()}", "namespace": ns,
                                         "labels": labels, "annotations": annotations},
                            "spec": spec_i})
    return out


def main():
    args = sys.argv[1:]
    prte = bool(args) and args[0] == "--prte"
    if prte:
        args = args[1:]
    if len(args) != 3:
        sys.exit(__doc__.strip().splitlines()[-1])
    manifest, ns, keydir = args
    items, runtimes, trainjobs = [], {}, []
    with open(manifest) as f:
        for doc in yaml.safe_load_all(f):
            if not doc:
                continue
            kind = doc.get("kind")
            if kind in ("ClusterTrainingRuntime", "TrainingRuntime"):
                runtimes[(kind, doc["metadata"]["name"])] = doc
            elif kind == "TrainJob":
                trainjobs.append(doc)
            else:
                items.append(doc)
    for trainjob in trainjobs:
        ref = trainjob["spec"]["runtimeRef"]
        runtime = runtimes.get((ref.get("kind", "ClusterTrainingRuntime"), ref["name"]))
        if runtime is None:
            sys.exit(f"TrainJob {trainjob['metadata']['name']}: no runtime {ref['name']} in {manifest}")
        items.extend(render(runtime, trainjob, ns, keydir, prte))
    json.dump({"apiVersion": "v1", "kind": "List", "items": items}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
