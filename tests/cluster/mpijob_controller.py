#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""What kubeflow/mpi-operator v2beta1's controller makes of an MPIJob, without the operator.

The cluster tier has no MPIJob CRD or controller, so this writes the objects the controller would
create from the manifest's MPIJob (pkg/controller/mpi_job_controller.go, Open MPI implementation):
- Secret NAME-ssh (kubernetes.io/ssh-auth): one ECDSA P-521 key, "EC PRIVATE KEY" PEM as ssh-privatekey,
  its authorized_keys line as ssh-publickey; mounted at sshAuthMountPath (default /root/.ssh, mode 0600
  there) as id_rsa, id_rsa.pub and authorized_keys in the first container of every pod;
- ConfigMap NAME-config: hostfile "NAME-worker-I.NAME-worker.NS.svc slots=S" per worker and
  discover_hosts.sh, mounted at /etc/mpi in the launcher;
- headless Services NAME-worker and NAME-launcher on the operator's labels;
- worker Pods NAME-worker-I (hostname NAME-worker-I, subdomain NAME-worker, replica-index label,
  K_MPI_JOB_ROLE=worker appended, command "/usr/sbin/sshd -De" when the template gives none);
- Job NAME-launcher (hostname NAME-launcher, subdomain NAME-worker) whose first container gets, appended
  after the user's env in this order, K_MPI_JOB_ROLE, the Open MPI variables (keep_fqdn_hostnames,
  default_hostfile, plm_rsh_args "-o ConnectionAttempts=10"), orte_set_default_slots and the emptied
  NVIDIA variables: the kubelet lets the last duplicate win, which is what the scenario tests.
The manifest's other documents pass through unchanged, first. Output: one JSON List for kubectl apply -f -.

Usage: mpijob_controller.py MANIFEST NAMESPACE KEYDIR (KEYDIR/id: the ECDSA key, made if absent)
"""

import json
import os
import subprocess
import sys

import yaml

LABEL_PREFIX = "training.kubeflow.org/"
OMPI_ENV = [
    ("OMPI_MCA_orte_keep_fqdn_hostnames", "true"),
    ("OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile"),
    ("OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"),
]


def labels(job, role):
    return {
        LABEL_PREFIX + "operator-name": "mpi-operator",
        LABEL_PREFIX + "job-name": job,
        LABEL_PREFIX + "job-role": role,
    }


def key_pair(keydir):
    """An ECDSA P-521 key as the controller makes one: SEC1 PEM private key, OpenSSH public line."""
    key = os.path.join(keydir, "id")
    if not os.path.exists(key):
        subprocess.run(["ssh-keygen", "-q", "-t", "ecdsa", "-b", "521", "-m", "PEM", "-N", "", "-f", key],
                       check=True)
    with open(key) as f:
        private = f.read()
    with open(key + ".pub") as f:
        public = " ".join(f.read().split()[:2]) + "\n"
    if "BEGIN EC PRIVATE KEY" not in private:
        sys.exit(f"{key}: not an EC PRIVATE KEY PEM")
    return private, public


def setup_ssh(spec, job, mount_path):
    volume = {"name": "ssh-auth", "secret": {"secretName": job + "-ssh", "items": [
        {"key": "ssh-privatekey", "path": "id_rsa"},
        {"key": "ssh-publickey", "path": "id_rsa.pub"},
        {"key": "ssh-publickey", "path": "authorized_keys"}]}}
    if mount_path == "/root/.ssh":
        volume["secret"]["defaultMode"] = 0o600
    spec.setdefault("volumes", []).append(volume)
    spec["containers"][0].setdefault("volumeMounts", []).append({"name": "ssh-auth", "mountPath": mount_path})


def restart_policy(replica_spec, default):
    policy = replica_spec.get("restartPolicy", default)
    return "Never" if policy == "ExitCode" else policy


def render(mpijob, ns, keydir):
    name = mpijob["metadata"]["name"]
    spec = mpijob["spec"]
    if spec.get("mpiImplementation", "OpenMPI") != "OpenMPI":
        sys.exit("only mpiImplementation OpenMPI is rendered")
    slots = int(spec.get("slotsPerWorker", 1))
    mount_path = spec.get("sshAuthMountPath", "/root/.ssh")
    launcher = spec["mpiReplicaSpecs"]["Launcher"]
    worker = spec["mpiReplicaSpecs"]["Worker"]
    replicas = int(worker.get("replicas", 0))
    private, public = key_pair(keydir)
    meta = {"namespace": ns, "labels": {"app": name}}
    out = [
        {"apiVersion": "v1", "kind": "Secret", "type": "kubernetes.io/ssh-auth",
         "metadata": dict(meta, name=name + "-ssh"),
         "stringData": {"ssh-privatekey": private, "ssh-publickey": public}},
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": dict(meta, name=name + "-config"),
         "data": {"hostfile": "".join(f"{name}-worker-{i}.{name}-worker.{ns}.svc slots={slots}\n"
                                      for i in range(replicas)),
                  "discover_hosts.sh": "#!/bin/sh\n"}},
    ]
    for role in ("worker", "launcher"):
        out.append({"apiVersion": "v1", "kind": "Service", "metadata": dict(meta, name=f"{name}-{role}"),
                    "spec": {"clusterIP": "None", "selector": labels(name, role)}})
    for i in range(replicas):
        template = json.loads(json.dumps(worker["template"]))
        pod_labels = dict(template.get("metadata", {}).get("labels") or {}, **labels(name, "worker"))
        pod_labels[LABEL_PREFIX + "replica-index"] = str(i)
        pod_spec = template["spec"]
        pod_spec["hostname"] = f"{name}-worker-{i}"
        pod_spec["subdomain"] = name + "-worker"
        pod_spec["restartPolicy"] = restart_policy(worker, "Never")
        container = pod_spec["containers"][0]
        if not container.get("command") and not container.get("args"):
            container["command"] = ["/usr/sbin/sshd", "-De"]
        container.setdefault("env", []).append({"name": "K_MPI_JOB_ROLE", "value": "worker"})
        setup_ssh(pod_spec, name, mount_path)
        out.append({"apiVersion": "v1", "kind": "Pod",
                    "metadata": {"name": f"{name}-worker-{i}", "namespace": ns, "labels": pod_labels,
                                 "annotations": template.get("metadata", {}).get("annotations") or {}},
                    "spec": pod_spec})
    template = json.loads(json.dumps(launcher["template"]))
    pod_spec = template["spec"]
    pod_spec["hostname"] = name + "-launcher"
    pod_spec["subdomain"] = name + "-worker"
    container = pod_spec["containers"][0]
    env = container.setdefault("env", [])
    env.append({"name": "K_MPI_JOB_ROLE", "value": "launcher"})
    env.extend({"name": k, "value": v} for k, v in OMPI_ENV)
    env.append({"name": "OMPI_MCA_orte_set_default_slots", "value": str(slots)})
    env.extend({"name": k, "value": ""} for k in ("NVIDIA_VISIBLE_DEVICES", "NVIDIA_DRIVER_CAPABILITIES"))
    setup_ssh(pod_spec, name, mount_path)
    pod_spec["restartPolicy"] = restart_policy(launcher, "OnFailure")
    pod_spec.setdefault("volumes", []).append({"name": "mpi-job-config", "configMap": {
        "name": name + "-config", "items": [{"key": "hostfile", "path": "hostfile", "mode": 0o444},
                                            {"key": "discover_hosts.sh", "path": "discover_hosts.sh",
                                             "mode": 0o555}]}})
    container.setdefault("volumeMounts", []).append({"name": "mpi-job-config", "mountPath": "/etc/mpi"})
    run_policy = spec.get("runPolicy") or {}
    job_spec = {"template": {"metadata": {"labels": dict(template.get("metadata", {}).get("labels") or {},
                                                        **labels(name, "launcher"))},
                             "spec": pod_spec}}
    if "backoffLimit" in run_policy:
        job_spec["backoffLimit"] = run_policy["backoffLimit"]
    out.append({"apiVersion": "batch/v1", "kind": "Job", "metadata": dict(meta, name=name + "-launcher"),
                "spec": job_spec})
    return out


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__.strip().splitlines()[-1])
    manifest, ns, keydir = sys.argv[1:]
    items, made = [], []
    with open(manifest) as f:
        for doc in yaml.safe_load_all(f):
            if not doc:
                continue
            if doc.get("kind") == "MPIJob":
                made.extend(render(doc, ns, keydir))
            else:
                items.append(doc)
    # The controller makes its objects after the user's ServiceAccount and ConfigMaps exist.
    items.extend(made)
    json.dump({"apiVersion": "v1", "kind": "List", "items": items}, sys.stdout, indent=1)


if __name__ == "__main__":
    main()
