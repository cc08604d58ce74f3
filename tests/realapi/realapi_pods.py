#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The bed's kubelet for a real kube-apiserver, and audit-log counting.

usage: realapi_pods.py --server URL --ca FILE --token-file FILE COMMAND ...
  set NS NAME SHORTHAND   create the pod if absent, then apply the fake server's
                          PUT /_control/pods shorthand (tests/fake_apiserver):
                          labels by a metadata patch, everything else through the
                          status subresource, as a kubelet reports it.
                          Extra keys: nodeName (create only; a bound pod stays
                          Terminating after delete until "finalize"),
                          ownerReferences (create only, raw list).
  set-many NS [SPREAD_S]  "NAME SHORTHAND" lines on stdin, each as set, the k-th of n
                          at k*SPREAD_S/n seconds (a wave); prints "NAME T_WALL_US"
                          once each is applied (one connection-free process for
                          hundreds of pods)
  delete NS NAME          graceful delete (MODIFIED with deletionTimestamp for a
                          bound pod; DELETED at once for an unbound one)
  finalize NS NAME        what the kubelet does once containers are gone: delete
                          with grace period 0 (DELETED)
  get NS NAME             print the pod as JSON
  touch NS NAME           create or bump a ConfigMap NAME: moves the cluster-wide
                          resourceVersion without touching any pod
  wait-rv NS NAME RV      wait until GET pod NAME?resourceVersion=0 (the watch
                          cache) reflects RV or newer; bounded
usage: realapi_pods.py audit FILE [--since-line N] [--user U]
  prints JSON: {"lines": total lines, "requests": [{"verb", "uri", "code",
  "name"}...]} for the RequestReceived/ResponseComplete pairs of U.

Objects are what the agent reads: plain Pods with automountServiceAccountToken
false (no controller-manager runs, so ServiceAccount admission would refuse a
token mount), no scheduler or kubelet, so the status is ours to write.
"""

import json
import os
import ssl
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "fake_apiserver"))
import fake_apiserver  # noqa: E402  # the shorthand's meaning lives there

CREATE_ONLY = {"nodeName", "ownerReferences"}


class Api:
    def __init__(self, server, ca, token_file):
        self.server = server.rstrip("/")
        self.ctx = ssl.create_default_context(cafile=ca)
        with open(token_file) as f:
            self.token = f.read().strip()

    def call(self, method, path, body=None, ctype="application/json"):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.server + path, data=data,
                                     method=method)
        req.add_header("Authorization", "Bearer " + self.token)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", ctype)
        try:
            with urllib.request.urlopen(req, context=self.ctx,
                                        timeout=10) as r:
                return r.status, json.loads(r.read() or b"{}")
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                return e.code, json.loads(raw)
            except ValueError:
                return e.code, {"message": raw.decode(errors="replace")}

    def must(self, method, path, body=None, ctype="application/json",
             ok=(200, 201)):
        code, obj = self.call(method, path, body, ctype)
        if code not in ok:
            raise SystemExit("%s %s: HTTP %d: %s" % (
                method, path, code, obj.get("message", obj)))
        return obj


def pods_path(ns, name=""):
    return "/api/v1/namespaces/%s/pods%s" % (ns, "/" + name if name else "")


def skeleton(ns, name, sh):
    spec = {
        "automountServiceAccountToken": False,
        "containers": [{"name": "main", "image": "k8s-agent-worker:test"}],
        "terminationGracePeriodSeconds": 30,
    }
    for key in ("hostname", "subdomain"):
        if sh.get(key):
            spec[key] = sh[key]
    if sh.get("nodeName"):
        spec["nodeName"] = sh["nodeName"]
    meta = {"name": name, "namespace": ns,
            "labels": dict(sh.get("labels") or {})}
    if sh.get("ownerReferences"):
        meta["ownerReferences"] = sh["ownerReferences"]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta,
            "spec": spec}


def cmd_set(api, ns, name, sh):
    code, pod = api.call("GET", pods_path(ns, name))
    if code == 404:
        pod = api.must("POST", pods_path(ns), skeleton(ns, name, sh))
    elif code != 200:
        raise SystemExit("GET pod %s: HTTP %d" % (name, code))
    if "labels" in sh and (pod["metadata"].get("labels") or {}) != \
            (sh["labels"] or {}):
        # A merge patch only adds keys: replace the whole label map.
        api.must("PATCH", pods_path(ns, name),
                 [{"op": "replace", "path": "/metadata/labels",
                   "value": dict(sh["labels"] or {})}],
                 ctype="application/json-patch+json")
    rest = {k: v for k, v in sh.items()
            if k not in CREATE_ONLY | {"labels", "hostname", "subdomain",
                                       "deleting"}}
    if sh.get("deleting"):
        cmd_delete(api, ns, name)
    if not rest:
        return
    pod.setdefault("status", {})
    pod["spec"].setdefault("containers", [{"name": "main"}])
    state = fake_apiserver.State.__new__(fake_apiserver.State)
    state.apply(pod, rest)
    status = pod["status"]
    if status.get("phase") == "Running":
        status.setdefault("hostIP", "10.233.255.1")
    # The status subresource ignores everything but .status; a merge patch
    # with the full status replaces lists and sets keys; null drops the rest.
    patch = {k: None for k in ("podIP", "podIPs", "reason", "message")}
    patch.update(status)
    api.must("PATCH", pods_path(ns, name) + "/status", {"status": patch},
             ctype="application/merge-patch+json")


def cmd_set_many(api, ns, spread_s, lines):
    items = [line.split(" ", 1) for line in lines if line.strip()]
    t0 = time.monotonic()
    for k, (name, sh) in enumerate(items):
        delay = t0 + spread_s * k / max(1, len(items)) - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        cmd_set(api, ns, name, json.loads(sh))
        print("%s %d" % (name, time.time_ns() // 1000), flush=True)


def cmd_delete(api, ns, name):
    api.must("DELETE", pods_path(ns, name), ok=(200, 202))


def cmd_finalize(api, ns, name):
    api.must("DELETE", pods_path(ns, name),
             {"kind": "DeleteOptions", "apiVersion": "v1",
              "gracePeriodSeconds": 0}, ok=(200, 202, 404))


def cmd_touch(api, ns, name):
    path = "/api/v1/namespaces/%s/configmaps" % ns
    code, _ = api.call("GET", path + "/" + name)
    body = {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name}, "data": {"v": str(uuid.uuid4())}}
    if code == 404:
        api.must("POST", path, body)
    else:
        api.must("PATCH", path + "/" + name, {"data": body["data"]},
                 ctype="application/merge-patch+json")


def cmd_wait_rv(api, ns, name, rv):
    deadline = time.monotonic() + 20
    while True:
        code, pod = api.call("GET", pods_path(ns, name) +
                             "?resourceVersion=0")
        got = int(pod.get("metadata", {}).get("resourceVersion") or 0) \
            if code == 200 else -1
        if got >= int(rv):
            return
        if time.monotonic() > deadline:
            raise SystemExit("watch cache never reached rv %s (at %d)" %
                             (rv, got))
        time.sleep(0.05)


def cmd_audit(path, since, user):
    total, reqs, by_id = 0, [], {}
    with open(path) as f:
        for total, line in enumerate(f, 1):
            if total <= since:
                continue
            try:
                ev = json.loads(line)
            except ValueError:
                continue
            if ev.get("user", {}).get("username") != user:
                continue
            stage, aid = ev.get("stage"), ev.get("auditID")
            if stage == "RequestReceived":
                r = {"verb": ev.get("verb"), "uri": ev.get("requestURI"),
                     "name": ev.get("objectRef", {}).get("name", ""),
                     "source": (ev.get("sourceIPs") or [""])[0],
                     "code": None}
                by_id[aid] = r
                reqs.append(r)
            elif stage in ("ResponseComplete", "Panic") and aid in by_id:
                by_id[aid]["code"] = ev.get("responseStatus", {}).get("code")
    print(json.dumps({"lines": total, "requests": reqs}))


def main(argv):
    if argv and argv[0] == "audit":
        since, user = 0, ""
        args = argv[2:]
        while args:
            if args[0] == "--since-line":
                since = int(args[1])
            elif args[0] == "--user":
                user = args[1]
            args = args[2:]
        cmd_audit(argv[1], since, user)
        return 0
    opts = {}
    while argv and argv[0].startswith("--"):
        opts[argv[0][2:]] = argv[1]
        argv = argv[2:]
    api = Api(opts["server"], opts["ca"], opts["token-file"])
    cmd, args = argv[0], argv[1:]
    if cmd == "set":
        cmd_set(api, args[0], args[1], json.loads(args[2]))
    elif cmd == "set-many":
        cmd_set_many(api, args[0], float(args[1]) if len(args) > 1 else 0.0,
                     sys.stdin.read().splitlines())
    elif cmd == "delete":
        cmd_delete(api, args[0], args[1])
    elif cmd == "finalize":
        cmd_finalize(api, args[0], args[1])
    elif cmd == "get":
        print(json.dumps(api.must("GET", pods_path(args[0], args[1]))))
    elif cmd == "touch":
        cmd_touch(api, args[0], args[1])
    elif cmd == "wait-rv":
        cmd_wait_rv(api, args[0], args[1], args[2])
    else:
        raise SystemExit("unknown command " + cmd)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
