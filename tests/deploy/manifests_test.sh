#!/bin/bash
# SPDX-License-Identifier: Apache-2.0
# Checks the Kubernetes manifests offline: the kustomize base renders, its
# Role grants only list/watch on pods, its objects fit together, and
# every example parses as Kubernetes YAML. kubectl converts YAML to JSON
# without a cluster ("kubectl label --local -o json"), so python3's stdlib
# json is enough.
# Usage: manifests_test.sh [REPO_DIR]
set -euo pipefail

repo="${1:-$(cd "$(dirname "$0")/../.." && pwd)}"
kubectl="${KUBECTL:-$(command -v kubectl || true)}"
if [[ -z "$kubectl" ]]; then
  echo "SKIP: kubectl not installed"
  exit 77
fi
tmp="$(mktemp -d /tmp/k8s-deploy-manifests.XXXXXX)"
trap 'rm -rf "$tmp"' EXIT
# No kubeconfig, no cache writes outside the temp dir.
export HOME="$tmp" KUBECONFIG="$tmp/none"

to_json() {  # file -> JSON objects on stdout
  "$kubectl" label --local -f "$1" -o json k8s-agent-manifest-test=1
}

"$kubectl" kustomize "$repo/images/k8s" >"$tmp/base.yaml"
to_json "$tmp/base.yaml" >"$tmp/base.json"
for f in "$repo"/images/k8s/examples/*.yaml "$repo/images/k8s/ssh-secret.example.yaml"; do
  to_json "$f" >"$tmp/$(basename "$f").json" || {
    echo "FAIL: $f is not valid Kubernetes YAML" >&2
    exit 1
  }
done

/usr/bin/python3 - "$tmp" "$repo/images/k8s/ssh-secret.example.yaml" <<'EOF'
import json, os, sys

tmp, secret_example = sys.argv[1], sys.argv[2]
failures = []

def check(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        failures.append(what)

def objects(path):
    text, dec, pos, out = open(path).read(), json.JSONDecoder(), 0, []
    while True:
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos == len(text):
            return out
        obj, pos = dec.raw_decode(text, pos)
        out.extend(obj.get("items", [obj]) if obj.get("kind") == "List" else [obj])

def rbac_ok(objs, where):
    roles = [o for o in objs if o["kind"] in ("Role", "ClusterRole")]
    for r in roles:
        rules = r.get("rules", [])
        only = all(ru.get("apiGroups") == [""] and ru.get("resources") == ["pods"]
                   and sorted(ru.get("verbs", [])) == ["list", "watch"]
                   and not ru.get("resourceNames") for ru in rules)
        check(r["kind"] == "Role" and len(rules) == 1 and only,
              f"{where}: {r['kind']} {r['metadata']['name']} grants only list/watch on pods")
    check(not any(o["kind"] == "ClusterRoleBinding" for o in objs),
          f"{where}: no ClusterRoleBinding")
    return roles

def pod_specs(o):
    """Yields (name, pod spec) for every pod template in a workload."""
    spec = o.get("spec", {})
    if o.get("apiVersion", "").startswith("batch.volcano.sh/"):
        for t in spec.get("tasks", []):
            yield t["name"], t["template"]["spec"]
    elif o["kind"] in ("StatefulSet", "Job"):
        yield o["metadata"]["name"], spec["template"]["spec"]
    elif o["kind"] == "MPIJob":
        for role, rs in spec.get("mpiReplicaSpecs", {}).items():
            yield role, rs["template"]["spec"]
    elif o["kind"] == "JobSet":
        for rj in spec.get("replicatedJobs", []):
            yield rj["name"], rj["template"]["spec"]["template"]["spec"]
    elif o["kind"] in ("ClusterTrainingRuntime", "TrainingRuntime"):
        # Kubeflow Trainer v2: a JobSet template.
        for rj in spec.get("template", {}).get("spec", {}).get("replicatedJobs", []):
            yield rj["name"], rj["template"]["spec"]["template"]["spec"]
    elif o["kind"] == "LeaderWorkerSet":
        lwt = spec.get("leaderWorkerTemplate", {})
        yield "leader", lwt["leaderTemplate"]["spec"]
        yield "worker", lwt["workerTemplate"]["spec"]

def env_of(container):
    return {e["name"]: e for e in container.get("env", [])}

def is_launcher(container):
    return "launcher" in container.get("image", "") or container.get("name") == "launcher"

def is_delivery_image(ref):
    return ref.rsplit("/", 1)[-1].split(":")[0] == "k8s-agent"

def agent_dir(spec, container):
    """Where the delivery image puts k8s-agent for this container: the mount
    of an image volume of it, or of an emptyDir that an init container of it
    fills (its args name the directory). None without delivery."""
    vols = {v["name"]: v for v in spec.get("volumes", [])}
    for m in container.get("volumeMounts", []):
        v = vols.get(m["name"], {})
        if is_delivery_image(v.get("image", {}).get("reference", "")):
            return m["mountPath"]
        if "emptyDir" not in v:
            continue
        for ic in spec.get("initContainers", []):
            mounts = [im["mountPath"] for im in ic.get("volumeMounts", []) if im["name"] == m["name"]]
            if is_delivery_image(ic.get("image", "")) and mounts == [m["mountPath"]] \
                    and ic.get("args") == mounts:
                return m["mountPath"]
    return None

# --- The base.
base = objects(os.path.join(tmp, "base.json"))
kinds = sorted(o["kind"] for o in base)
check(kinds == sorted(["ServiceAccount", "Role", "RoleBinding", "Service", "ConfigMap",
                       "StatefulSet", "Job"]), f"base kinds {kinds}")
check(not any(o["kind"] == "Secret" for o in base), "base holds no Secret")
by_kind = {o["kind"]: o for o in base}
roles = rbac_ok(base, "base")
check(len(roles) == 1, "base has one Role")
sa = by_kind["ServiceAccount"]["metadata"]["name"]
rb = by_kind["RoleBinding"]
check(rb["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                        "name": by_kind["Role"]["metadata"]["name"]}, "RoleBinding names the Role")
check(rb["subjects"] == [{"kind": "ServiceAccount", "name": sa}],
      "RoleBinding binds only the ServiceAccount")

svc, sts, job = by_kind["Service"], by_kind["StatefulSet"], by_kind["Job"]
check(svc["spec"].get("clusterIP") == "None", "Service is headless")
check(sts["spec"]["serviceName"] == svc["metadata"]["name"], "StatefulSet uses the Service")
pod_labels = sts["spec"]["template"]["metadata"]["labels"]
check(all(pod_labels.get(k) == v for k, v in svc["spec"]["selector"].items()),
      "Service selects the worker pods")
wspec = sts["spec"]["template"]["spec"]
w = wspec["containers"][0]
check(any(p.get("containerPort") == 2222 for p in w.get("ports", [])), "worker exposes 2222")
probe = w.get("readinessProbe", {}).get("tcpSocket", {}).get("port")
check(probe in (2222, "ssh"), "worker readinessProbe is tcpSocket 2222")
for name, spec in (("worker", wspec), ("launcher", job["spec"]["template"]["spec"])):
    sc = spec.get("securityContext", {})
    check(sc.get("runAsUser") == 1000 and sc.get("runAsNonRoot") is True,
          f"{name} runs as uid 1000, non-root")
    secrets = [v["secret"] for v in spec.get("volumes", []) if "secret" in v]
    check(len(secrets) == 1 and secrets[0].get("defaultMode") in (0o400, 0o440, 0o600),
          f"{name} mounts the ssh Secret with a private defaultMode")
jspec = job["spec"]["template"]["spec"]
check(jspec.get("serviceAccountName") == sa, "launcher uses the ServiceAccount")
env = env_of(jspec["containers"][0])
check(env.get("OMPI_MCA_plm_rsh_agent", {}).get("value") == "k8s-agent", "OMPI_MCA_plm_rsh_agent=k8s-agent")
check(env.get("PRTE_MCA_plm_ssh_agent", {}).get("value") == "k8s-agent", "PRTE_MCA_plm_ssh_agent=k8s-agent")
check(env.get("K8S_AGENT_NAMESPACE", {}).get("valueFrom", {}).get("fieldRef", {}).get("fieldPath")
      == "metadata.namespace", "K8S_AGENT_NAMESPACE from the pod's namespace")
check(jspec["containers"][0].get("args", [""])[0] == "mpirun", "launcher runs mpirun")
hostfile = by_kind["ConfigMap"]["data"]["hostfile"].split()
names = [h for h in hostfile if "=" not in h]
want = [f"{sts['metadata']['name']}-{i}" for i in range(sts["spec"]["replicas"])]
check(names == want, f"hostfile lists the worker pods {want}")
check(any(v.get("configMap", {}).get("name") == by_kind["ConfigMap"]["metadata"]["name"]
          for v in jspec.get("volumes", [])), "launcher mounts the hostfile")

# --- Examples.
for f in sorted(os.listdir(tmp)):
    if not f.endswith(".yaml.json") or f.startswith("ssh-secret"):
        continue
    objs = objects(os.path.join(tmp, f))
    rbac_ok(objs, f)
    launchers = [(n, c) for o in objs for n, s in pod_specs(o) for c in s["containers"]
                 if is_launcher(c)]
    check(len(launchers) == 1, f"{f}: one launcher container")
    for n, c in launchers:
        e = env_of(c)
        spec = next(s for o in objs for _, s in pod_specs(o) if c in s["containers"])
        where = agent_dir(spec, c)
        agent = "k8s-agent" if where is None else where + "/k8s-agent"
        check(e.get("OMPI_MCA_plm_rsh_agent", {}).get("value") == agent
              and e.get("PRTE_MCA_plm_ssh_agent", {}).get("value") == agent,
              f"{f}: launcher selects {agent} for Open MPI 4 and 5")
        if where is None:
            continue
        # Delivery into the user's image: every pod of the job (workers run
        # the agent under tree spawn) gets it at the same path.
        for o in objs:
            for pn, ps in pod_specs(o):
                for pc in ps["containers"]:
                    check(agent_dir(ps, pc) == where, f"{f}: {pn}/{pc['name']} gets k8s-agent in {where}")
    for o in objs:
        for n, s in pod_specs(o):
            if any(is_launcher(c) for c in s["containers"]):
                check(s.get("serviceAccountName") == "mpi-launcher",
                      f"{f}: {n} uses the pod-reading ServiceAccount")

# --- The Secret example: placeholders only.
text = open(secret_example).read()
secret = objects(os.path.join(tmp, "ssh-secret.example.yaml.json"))
check(len(secret) == 1 and secret[0]["kind"] == "Secret", "Secret example is one Secret")
values = list(secret[0].get("stringData", {}).values()) + list(secret[0].get("data", {}).values())
check(values and all(v.startswith("PLACEHOLDER") for v in values), "Secret values are placeholders")
check("PRIVATE KEY-----" not in text and "AAAAC3NzaC1lZDI1NTE5" not in text,
      "Secret example holds no key material")
check("ssh-keygen" in text and "kubectl create secret" in text,
      "Secret example shows how to create the real one")

if failures:
    print(f"{len(failures)} check(s) failed", file=sys.stderr)
    sys.exit(1)
print("PASS")
EOF
