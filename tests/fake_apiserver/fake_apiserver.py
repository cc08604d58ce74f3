#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# A fake kube-apiserver for pods (stdlib only): TLS, tokens, watches, faults.
"""Fake Kubernetes API server for k8s-agent's tests.

Serves what kubectl 1.32, python-kubernetes and k8s-agent need for pods:
discovery (/version, /api, /apis, /api/v1), GET/LIST/WATCH pods with label
and field selectors, resourceVersions, bookmarks, 410 Expired, chunked
streaming, Table output (Accept: ...;as=Table), bearer tokens over TLS and
`kind: Status` errors. Test controls live under /_control (same token).

Usage:
  fake_apiserver.py --bind 127.0.0.1 --port 0 --cert server.crt --key server.key
                    --token-file token [--token-file more] [--pods pods.json]
                    [--bookmark-interval S] [--expired-mode event|http]
                    [--history-events N] [--history-seconds S]
                    [--start-rv N] [--port-file FILE] [--log FILE]
                    [--apf-seats N [--apf-queue M] [--apf-queue-wait S]
                     [--apf-retry-after S]]
Prints "READY <port>" on stdout once listening (and writes --port-file).
Token files are re-read on every request: rotating = rewriting the file.

Where kube-apiserver's behaviour matters to a client, the fake follows it:
resourceVersions are one counter across all pods, and watches replay from a
bounded history (like the watch cache: --history-events, --history-seconds),
so a pod's own RV goes stale and a watch from it gets an in-stream 410;
LIST with resourceVersion=0 is "from the cache" (counted apart from quorum
lists in stats); a label- or field-selector watch sends DELETED (with the
last matching object) when a pod stops matching and ADDED when it starts;
bookmarks carry the global version, come every --bookmark-interval and once
2 s before timeoutSeconds; --start-rv N plays a restart (etcd kept its
counter, the new watch cache starts with no history: older RVs get 410);
a deletion is MODIFIED with deletionTimestamp,
then DELETED after the grace period; a malformed resourceVersion is 500;
403 bodies carry `details`.

Pods file (--pods): a JSON list. Each element is either a full Pod object
(anything with "metadata"; missing uid/resourceVersion/namespace are filled
in) or the shorthand used by PUT /_control/pods:
  {"name": "w0", "namespace": "default", "phase": "Running",
   "podIP": "10.233.0.10", "labels": {"role": "worker"}, "ready": true,
   "hostname": "w0", "subdomain": "job"}

Test controls (bearer token required; not counted in stats, never faulted):
  PUT    /_control/pods/{ns}/{name}   shorthand merged into the pod (created
         with a new uid if absent). Keys: phase, podIP (null clears),
         hostname, subdomain, labels (object), ready (bool), waitingReason,
         waitingMessage (all containers), reason, message, unschedulable
         (message; PodScheduled=False reason Unschedulable; null clears),
         deleting (bool: deletionTimestamp), containerStatuses (raw),
         containers (raw spec.containers, e.g. with resources), owner
         ("StatefulSet/web": a controller ownerReference; null clears),
         ownerReferences (raw list), initContainers (a list of {"name",
         "restartPolicy": "Always" for a native sidecar (1.33), "state":
         "Running" | "Completed" | "Error" | a waiting reason such as
         "CrashLoopBackOff", "started": bool (default: Running)}: sets
         spec.initContainers, status.initContainerStatuses and the
         Initialized condition as the 1.33 kubelet does: True once every
         regular init container Completed and every sidecar has started).
         Bumps the RV and emits ADDED or MODIFIED. /_control/pods/{name}
         means namespace "default".
  DELETE /_control/pods/{ns}/{name}[?grace=S]  emits MODIFIED with
         deletionTimestamp, then DELETED S seconds later (default 0: at once).
  POST   /_control/replace/{ns}/{name} shorthand: MODIFIED (deleting),
         DELETED, then ADDED with a new uid (labels, hostname, subdomain and
         ownerReferences are kept).
         With ?as=NEW[&grace=S]: an overlapping replacement, as a Job makes
         under podReplacementPolicy TerminatingOrFailed (the 1.34 default;
         the 1.20 Job controller does the same): MODIFIED (the old pod
         deleting, still Running) and ADDED (pod NEW, same labels, hostname,
         subdomain and owner, the shorthand applied) while the old one
         lives; DELETED of the old one after S seconds (default: never).
  POST   /_control/faults  one object or a list:
         {"status": 429|500|503|410|401|403, "count": N, "retry_after": S,
          "path_prefix": "/api/v1/...", "method": "GET"|"LIST"|"WATCH"|...,
          "in_stream": bool}   next N matching requests fail (WATCH with
                               in_stream: 200 then an ERROR event);
         {"delay_ms": D, "count": N, "path_prefix", "method"}  delay answers;
         {"trickle_s": S, "count": N, ...}  headers at once, then the body
                               in 50 pieces spread over S seconds (a slow
                               but progressing answer);
         {"drop_watches": true}  close every open watch abruptly;
         {"compact": true}       every RV before now becomes 410 Expired;
         {"expired_mode": "event"|"http"}  how a too-old watch RV fails;
         {"history_events": N}   keep only the last N events (older: 410);
         {"clear": true}         forget pending faults.
  GET    /_control/apf     with --apf-seats: admitted/queued/rejected counts
         (POST /_control/apf/reset zeroes them); see apf.py. Requests the
         limit refuses (429) are counted there, not in /_control/stats.
  GET    /_control/stats   {"requests": {"GET /api/v1/.../pods/w0": 3,
         "LIST /api/v1/namespaces/default/pods": 1, "WATCH ...": 1}, "total": N,
         "quorum_lists": N (LISTs not served "from the cache": no
         resourceVersion=0), "expired_watches": N (watches answered 410),
         "max_pods_per_answer": N (the most pods one LIST page or one
         watch's initial ADDED events carried)}
  POST   /_control/stats/reset
"""

import argparse
import base64
import bisect
import copy
import datetime
import http.server
import json
import os
import socket
import ssl
import sys
import threading
import time
import urllib.parse
import uuid

import apf  # The APF-like admission limit (--apf-seats), a module beside this.

CONTROL_KEYS = {
    "name", "namespace", "phase", "podIP", "hostname", "subdomain", "labels",
    "ready", "waitingReason", "waitingMessage", "reason", "message",
    "unschedulable", "deleting", "containerStatuses", "containers", "owner",
    "ownerReferences", "initContainers",
}
REASONS = {
    400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound",
    405: "MethodNotAllowed", 410: "Expired", 429: "TooManyRequests",
    500: "InternalError", 503: "ServiceUnavailable",
}


def now_rfc3339():
    return datetime.datetime.now(datetime.timezone.utc).strftime(
        "%Y-%m-%dT%H:%M:%SZ")


def status_object(code, message, reason=None, name=None, details=False):
    obj = {"kind": "Status", "apiVersion": "v1", "metadata": {},
           "status": "Failure", "message": message,
           "reason": reason or REASONS.get(code, "Unknown"), "code": code}
    if name or details:
        obj["details"] = {"kind": "pods"}
        if name:
            obj["details"]["name"] = name
    return obj


class State:
    """Pods, the event log, faults and stats, behind one condition."""

    def __init__(self, args):
        self.args = args
        self.cond = threading.Condition()
        self.rv = 100
        self.pods = {}           # (ns, name) -> pod
        # The watch history: (rv, type, pod, previous pod or None, time).
        self.log = []
        self.log_start_rv = self.rv  # Events after this are all in the log.
        self.history_events = args.history_events
        self.history_seconds = args.history_seconds
        self.compacted_rv = 0
        self.expired_mode = args.expired_mode
        self.faults = []
        self.stats = {}
        self.total = 0
        self.quorum_lists = 0
        self.expired_watches = 0
        self.max_pods_per_answer = 0  # One LIST page or a watch's initial ADDED.
        self.watch_flags = {}    # id -> {"drop": bool} of open watches

    # --- pods -------------------------------------------------------------
    def bump(self):
        self.rv += 1
        return self.rv

    def emit(self, kind, pod, prev=None):
        self.log.append((self.rv, kind, copy.deepcopy(pod),
                         copy.deepcopy(prev), time.monotonic()))
        self.trim()
        self.cond.notify_all()

    def trim(self):
        """Forgets events past the history bounds: watches from before the
        oldest kept event get 410, as from kube-apiserver's watch cache."""
        horizon = time.monotonic() - self.history_seconds
        drop = max(0, len(self.log) - self.history_events)
        while drop < len(self.log) and self.log[drop][4] < horizon:
            drop += 1
        if drop:
            self.log_start_rv = self.log[drop - 1][0]
            del self.log[:drop]

    def new_pod(self, ns, name):
        return {
            "apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": name, "namespace": ns,
                         "uid": str(uuid.uuid4()), "resourceVersion": "",
                         "creationTimestamp": now_rfc3339(), "labels": {}},
            "spec": {"containers": [{"name": "main",
                                     "image": "fake/image:latest"}],
                     "nodeName": "fake-node", "restartPolicy": "Always"},
            "status": {
                "phase": "Pending", "qosClass": "BestEffort",
                "conditions": [
                    {"type": "PodScheduled", "status": "True",
                     "lastTransitionTime": now_rfc3339()},
                    {"type": "Initialized", "status": "True",
                     "lastTransitionTime": now_rfc3339()},
                    {"type": "ContainersReady", "status": "False"},
                    {"type": "Ready", "status": "False"}],
                "containerStatuses": [self.container("main", "Pending", False)],
            },
        }

    @staticmethod
    def container(name, phase, ready):
        c = {"name": name, "ready": ready, "restartCount": 0,
             "image": "fake/image:latest",
             # python-kubernetes refuses a container status without imageID.
             "imageID": "docker.io/fake/image@sha256:0", "started": ready}
        if phase == "Running":
            c["state"] = {"running": {"startedAt": now_rfc3339()}}
            c["containerID"] = "containerd://" + uuid.uuid4().hex
        elif phase in ("Succeeded", "Failed"):
            code = 0 if phase == "Succeeded" else 1
            c["state"] = {"terminated": {
                "exitCode": code,
                "reason": "Completed" if code == 0 else "Error"}}
        else:
            c["state"] = {"waiting": {"reason": "ContainerCreating"}}
        return c

    @staticmethod
    def set_condition(pod, ctype, value, reason=None, message=None):
        conds = pod["status"].setdefault("conditions", [])
        cond = next((c for c in conds if c.get("type") == ctype), None)
        if cond is None:
            cond = {"type": ctype}
            conds.append(cond)
        # As the kubelet does: the time moves only when the status does.
        if cond.get("status") != value or "lastTransitionTime" not in cond:
            cond["lastTransitionTime"] = now_rfc3339()
        cond["status"] = value
        cond.pop("reason", None)
        cond.pop("message", None)
        if reason:
            cond["reason"] = reason
        if message:
            cond["message"] = message

    def apply(self, pod, sh):
        unknown = set(sh) - CONTROL_KEYS
        if unknown:
            raise ValueError("unknown keys: " + ", ".join(sorted(unknown)))
        meta, spec, status = pod["metadata"], pod["spec"], pod["status"]
        if "containers" in sh:
            spec["containers"] = copy.deepcopy(sh["containers"])
        names = [c.get("name", "main") for c in spec.get("containers", [])]
        if "phase" in sh:
            status["phase"] = sh["phase"]
            ready = sh.get("ready", sh["phase"] == "Running")
            status["containerStatuses"] = [
                self.container(n, sh["phase"], ready) for n in names]
            if sh["phase"] == "Running":
                status.setdefault("startTime", now_rfc3339())
        if "ready" in sh:
            for c in status.get("containerStatuses", []):
                c["ready"] = bool(sh["ready"])
                c["started"] = bool(sh["ready"])
        if "ready" in sh or "phase" in sh:
            ready = all(c.get("ready") for c in status.get(
                "containerStatuses", [])) and status.get("phase") == "Running"
            value = "True" if ready else "False"
            self.set_condition(pod, "Ready", value)
            self.set_condition(pod, "ContainersReady", value)
        if "podIP" in sh:
            if sh["podIP"] is None:
                status.pop("podIP", None)
                status.pop("podIPs", None)
            else:
                status["podIP"] = sh["podIP"]
                status["podIPs"] = [{"ip": sh["podIP"]}]
        for key in ("hostname", "subdomain"):
            if key in sh:
                if sh[key] is None:
                    spec.pop(key, None)
                else:
                    spec[key] = sh[key]
        if "labels" in sh:
            meta["labels"] = dict(sh["labels"] or {})
        if "waitingReason" in sh or "waitingMessage" in sh:
            waiting = {"reason": sh.get("waitingReason") or "ContainerCreating"}
            if sh.get("waitingMessage"):
                waiting["message"] = sh["waitingMessage"]
            for c in status.setdefault("containerStatuses", []):
                c["state"] = {"waiting": dict(waiting)}
                c["ready"] = False
            self.set_condition(pod, "Ready", "False", "ContainersNotReady")
        for key in ("reason", "message"):
            if key in sh:
                if sh[key] is None:
                    status.pop(key, None)
                else:
                    status[key] = sh[key]
        if "unschedulable" in sh:
            if sh["unschedulable"] is None:
                self.set_condition(pod, "PodScheduled", "True")
            else:
                self.set_condition(pod, "PodScheduled", "False",
                                   "Unschedulable", str(sh["unschedulable"]))
                status["phase"] = "Pending"
                status.pop("containerStatuses", None)
        if "deleting" in sh:
            if sh["deleting"]:
                meta["deletionTimestamp"] = now_rfc3339()
                meta["deletionGracePeriodSeconds"] = 30
            else:
                meta.pop("deletionTimestamp", None)
                meta.pop("deletionGracePeriodSeconds", None)
        if "containerStatuses" in sh:
            status["containerStatuses"] = sh["containerStatuses"]
        if "initContainers" in sh:
            self.apply_init_containers(pod, sh["initContainers"] or [])
        if "ownerReferences" in sh:
            meta["ownerReferences"] = copy.deepcopy(sh["ownerReferences"])
        if "owner" in sh:
            if sh["owner"] is None:
                meta.pop("ownerReferences", None)
            else:
                kind, _, owner = str(sh["owner"]).partition("/")
                meta["ownerReferences"] = [{
                    "apiVersion": "batch/v1" if kind == "Job" else "apps/v1",
                    "kind": kind, "name": owner,
                    "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, sh["owner"])),
                    "controller": True, "blockOwnerDeletion": True}]

    def apply_init_containers(self, pod, inits):
        """spec.initContainers and their statuses, 1.33 style: a native
        sidecar is an init container with restartPolicy Always; it keeps
        running beside the main containers, and Initialized turns True once
        the regular ones Completed and each sidecar has started."""
        specs, statuses, initialized = [], [], True
        for i in inits:
            sidecar = i.get("restartPolicy") == "Always"
            spec = {"name": i["name"], "image": "fake/init:latest"}
            if sidecar:
                spec["restartPolicy"] = "Always"
            specs.append(spec)
            state = i.get("state", "Running" if sidecar else "Completed")
            started = bool(i.get("started", state == "Running"))
            c = {"name": i["name"], "image": "fake/init:latest",
                 "imageID": "docker.io/fake/init@sha256:0",
                 "restartCount": int(i.get("restartCount", 0)),
                 "started": started if sidecar else False,
                 "ready": (state == "Running") if sidecar
                          else state == "Completed"}
            if state == "Running":
                c["state"] = {"running": {"startedAt": now_rfc3339()}}
            elif state in ("Completed", "Error"):
                c["state"] = {"terminated": {
                    "exitCode": 0 if state == "Completed" else 1,
                    "reason": state}}
            else:
                c["state"] = {"waiting": {
                    "reason": state,
                    "message": "back-off 5m0s restarting failed container=%s"
                               % i["name"]}}
                c["lastState"] = {"terminated": {"exitCode": 1,
                                                 "reason": "Error"}}
                c["restartCount"] = int(i.get("restartCount", 5))
            statuses.append(c)
            if sidecar:
                # A sidecar that started once keeps the pod initialized
                # through its restarts ("started" is of this instance).
                # A Running pod's sidecars have all started at least once.
                initialized &= started or (
                    pod["status"].get("phase") == "Running")
            else:
                initialized &= state == "Completed"
        pod["spec"]["initContainers"] = specs
        pod["status"]["initContainerStatuses"] = statuses
        self.set_condition(pod, "Initialized",
                           "True" if initialized else "False",
                           None if initialized else "ContainersNotInitialized")

    def load_pods(self, items):
        for item in items:
            if "metadata" in item:
                pod = copy.deepcopy(item)
                meta = pod["metadata"]
                meta.setdefault("namespace", "default")
                meta.setdefault("uid", str(uuid.uuid4()))
                meta.setdefault("creationTimestamp", now_rfc3339())
                pod.setdefault("spec", {}).setdefault(
                    "containers", [{"name": "main", "image": "fake/image"}])
                pod.setdefault("status", {})
            else:
                ns = item.get("namespace", "default")
                pod = self.new_pod(ns, item["name"])
                self.apply(pod, item)
            pod["metadata"]["resourceVersion"] = str(self.bump())
            key = (pod["metadata"]["namespace"], pod["metadata"]["name"])
            self.pods[key] = pod
            self.emit("ADDED", pod)

    def put(self, ns, name, sh):
        with self.cond:
            prev = self.pods.get((ns, name))
            kind = "MODIFIED"
            if prev is None:
                pod, kind = self.new_pod(ns, name), "ADDED"
            else:
                pod = copy.deepcopy(prev)
            self.apply(pod, sh)
            pod["metadata"]["resourceVersion"] = str(self.bump())
            self.pods[(ns, name)] = pod
            self.emit(kind, pod, prev)
            return pod

    def delete(self, ns, name, grace=0.0):
        """As kube-apiserver for a pod bound to a node: MODIFIED with
        deletionTimestamp now, DELETED when the kubelet would confirm, after
        `grace` seconds (at once for 0; never for None: a pod whose kubelet
        has not confirmed). Returns the terminating pod."""
        with self.cond:
            prev = self.pods.get((ns, name))
            if prev is None:
                return None
            pod = copy.deepcopy(prev)
            meta = pod["metadata"]
            if "deletionTimestamp" not in meta:
                meta["deletionTimestamp"] = now_rfc3339()
                meta["deletionGracePeriodSeconds"] = (
                    30 if grace is None else int(grace))
                meta["resourceVersion"] = str(self.bump())
                self.pods[(ns, name)] = pod
                self.emit("MODIFIED", pod, prev)
            if grace is not None and grace <= 0:
                self.finish_delete(ns, name, meta["uid"])
            elif grace is not None:
                timer = threading.Timer(grace, self.finish_delete,
                                        (ns, name, meta["uid"]))
                timer.daemon = True
                timer.start()
            return pod

    def finish_delete(self, ns, name, uid):
        with self.cond:
            pod = self.pods.get((ns, name))
            if pod is None or pod["metadata"]["uid"] != uid:
                return None  # Already gone, or replaced meanwhile.
            del self.pods[(ns, name)]
            pod = copy.deepcopy(pod)
            pod["metadata"]["resourceVersion"] = str(self.bump())
            self.emit("DELETED", pod)
            return pod

    def replace(self, ns, name, sh, new_name=None, grace=None):
        with self.cond:
            if new_name is None:
                old = self.delete(ns, name)
            elif (ns, name) not in self.pods:
                raise KeyError("no pod %s/%s to replace" % (ns, name))
            else:
                # The old pod stays, deleting, until `grace` passes.
                old = self.delete(ns, name, grace)
            name = new_name or name
            pod = self.new_pod(ns, name)
            if old is not None:
                pod["metadata"]["labels"] = old["metadata"].get("labels", {})
                if "ownerReferences" in old["metadata"]:
                    pod["metadata"]["ownerReferences"] = copy.deepcopy(
                        old["metadata"]["ownerReferences"])
                for key in ("hostname", "subdomain"):
                    if key in old["spec"]:
                        pod["spec"][key] = old["spec"][key]
            self.apply(pod, sh)
            pod["metadata"]["resourceVersion"] = str(self.bump())
            self.pods[(ns, name)] = pod
            self.emit("ADDED", pod)
            return pod

    # --- faults and stats -------------------------------------------------
    def take_fault(self, verb, path):
        with self.cond:
            for f in self.faults:
                if f.get("method", "any") not in ("any", verb):
                    continue
                if not path.startswith(f.get("path_prefix", "")):
                    continue
                f["count"] -= 1
                if f["count"] <= 0:
                    self.faults.remove(f)
                return dict(f)
            return None

    def count(self, verb, path):
        with self.cond:
            key = verb + " " + path
            self.stats[key] = self.stats.get(key, 0) + 1
            self.total += 1


# --- selectors --------------------------------------------------------------
def parse_selector(text):
    terms = []
    for part in (text or "").split(","):
        part = part.strip()
        if not part:
            continue
        for op in ("!=", "==", "="):
            if op in part:
                key, value = part.split(op, 1)
                terms.append((key.strip(), "!=" if op == "!=" else "=",
                              value.strip()))
                break
        else:
            if part.startswith("!"):
                terms.append((part[1:], "absent", None))
            else:
                terms.append((part, "exists", None))
    return terms


def labels_match(pod, terms):
    labels = pod["metadata"].get("labels") or {}
    for key, op, value in terms:
        if op == "=" and labels.get(key) != value:
            return False
        if op == "!=" and labels.get(key) == value:
            return False
        if op == "exists" and key not in labels:
            return False
        if op == "absent" and key in labels:
            return False
    return True


FIELDS = {
    "metadata.name": lambda p: p["metadata"].get("name", ""),
    "metadata.namespace": lambda p: p["metadata"].get("namespace", ""),
    "status.phase": lambda p: p.get("status", {}).get("phase", ""),
    "spec.nodeName": lambda p: p.get("spec", {}).get("nodeName", ""),
}


def fields_match(pod, terms):
    for key, op, value in terms:
        getter = FIELDS.get(key)
        if getter is None:
            raise ValueError('field label not supported: "%s"' % key)
        actual = getter(pod)
        if op == "=" and actual != value:
            return False
        if op == "!=" and actual == value:
            return False
    return True


# --- table output -----------------------------------------------------------
COLUMNS = [
    ("Name", "string", "name", 0), ("Ready", "string", "", 0),
    ("Status", "string", "", 0), ("Restarts", "string", "", 0),
    ("Age", "string", "", 0), ("IP", "string", "", 1),
    ("Node", "string", "", 1), ("Nominated Node", "string", "", 1),
    ("Readiness Gates", "string", "", 1),
]


def age(pod):
    created = pod["metadata"].get("creationTimestamp")
    try:
        t = datetime.datetime.strptime(created, "%Y-%m-%dT%H:%M:%SZ").replace(
            tzinfo=datetime.timezone.utc)
    except (TypeError, ValueError):
        return "<unknown>"
    s = int((datetime.datetime.now(datetime.timezone.utc) - t).total_seconds())
    if s < 120:
        return "%ds" % max(s, 0)
    if s < 7200:
        return "%dm" % (s // 60)
    return "%dh" % (s // 3600)


def display_status(pod):
    status = pod.get("status", {})
    if pod["metadata"].get("deletionTimestamp"):
        return "Terminating"
    if status.get("reason"):
        return status["reason"]
    shown = status.get("phase", "Unknown")
    for c in status.get("containerStatuses") or []:
        state = c.get("state") or {}
        if state.get("waiting", {}).get("reason") and shown != "Pending":
            return state["waiting"]["reason"]
        if state.get("waiting", {}).get("reason") not in (None,
                                                           "ContainerCreating"):
            return state["waiting"]["reason"]
    for cond in status.get("conditions") or []:
        if cond.get("type") == "PodScheduled" and cond.get("status") == "False":
            return "Pending"
    return shown


def table_row(pod):
    statuses = pod.get("status", {}).get("containerStatuses") or []
    total = len(pod.get("spec", {}).get("containers") or statuses or [1])
    ready = sum(1 for c in statuses if c.get("ready"))
    restarts = sum(int(c.get("restartCount", 0)) for c in statuses)
    meta = {k: v for k, v in pod["metadata"].items()}
    return {
        "cells": [pod["metadata"]["name"], "%d/%d" % (ready, total),
                  display_status(pod), str(restarts), age(pod),
                  pod.get("status", {}).get("podIP", "<none>"),
                  pod.get("spec", {}).get("nodeName", "<none>"), "<none>",
                  "<none>"],
        "object": {"kind": "PartialObjectMetadata",
                   "apiVersion": "meta.k8s.io/v1", "metadata": meta},
    }


def table(pods, rv, cont=""):
    metadata = {"resourceVersion": str(rv)}
    if cont:
        metadata["continue"] = cont
    return {
        "kind": "Table", "apiVersion": "meta.k8s.io/v1", "metadata": metadata,
        "columnDefinitions": [
            {"name": n, "type": t, "format": f, "description": n,
             "priority": p} for n, t, f, p in COLUMNS],
        "rows": [table_row(p) for p in pods],
    }


# --- HTTP -------------------------------------------------------------------
class DropWatch(Exception):
    pass


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    # Without this, headers and body go out as two TLS records and delayed
    # ACKs cost ~40 ms per request (testbed gotcha G5).
    disable_nagle_algorithm = True
    server_version = "fake-apiserver/0.1"

    def log_message(self, fmt, *args):  # noqa: N802 (stdlib name)
        log = self.server.logfile
        if log:
            log.write("%s %s\n" % (time.strftime("%H:%M:%S"), fmt % args))
            log.flush()

    def setup(self):
        super().setup()
        if isinstance(self.connection, ssl.SSLSocket):
            # Handshake here, in the handler thread, with a bound.
            self.connection.settimeout(10)
            self.connection.do_handshake()
            self.connection.settimeout(None)

    @property
    def state(self):
        return self.server.state

    # --- plumbing -----------------------------------------------------------
    def end_headers(self):
        super().end_headers()
        apf.headers_sent(self)  # A watch keeps no APF seat while it streams.

    def send_json(self, code, obj, headers=None):
        body = (json.dumps(obj) + "\n").encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-cache, private")
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        self.end_headers()
        trickle = getattr(self, "trickle_s", None)
        if not trickle:
            self.wfile.write(body)
            return
        self.trickle_s = None
        pieces = 50
        step = max(1, -(-len(body) // pieces))
        for i in range(0, len(body), step):
            self.wfile.write(body[i:i + step])
            self.wfile.flush()
            if i + step < len(body):
                time.sleep(trickle / pieces)

    def send_status(self, code, message, reason=None, name=None, headers=None,
                    details=False):
        self.send_json(code, status_object(code, message, reason, name,
                                           details), headers)

    def read_body(self):
        n = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(n) if n else b""
        if not raw.strip():
            return {}
        return json.loads(raw)

    def tokens(self):
        valid = set()
        for path in self.server.token_files:
            try:
                with open(path) as f:
                    token = f.read().strip()
            except OSError:
                continue
            if token:
                valid.add(token)
        return valid

    def authorized(self):
        auth = self.headers.get("Authorization", "")
        scheme, _, token = auth.partition(" ")
        return scheme.lower() == "bearer" and token.strip() in self.tokens()

    def wants_table(self):
        return "as=Table" in self.headers.get("Accept", "")

    # --- dispatch -----------------------------------------------------------
    def do_GET(self):  # noqa: N802
        self.dispatch("GET")

    def do_PUT(self):  # noqa: N802
        self.dispatch("PUT")

    def do_POST(self):  # noqa: N802
        self.dispatch("POST")

    def do_DELETE(self):  # noqa: N802
        self.dispatch("DELETE")

    def dispatch(self, method):
        url = urllib.parse.urlsplit(self.path)
        path = url.path.rstrip("/") or "/"
        query = {k: v[-1] for k, v in urllib.parse.parse_qs(
            url.query, keep_blank_values=True).items()}
        try:
            if path == "/version":
                self.state.count("GET", path)
                return self.send_json(200, {
                    "major": "1", "minor": "32", "gitVersion": "v1.32.4-fake",
                    "platform": "linux/amd64"})
            if not self.authorized():
                if not path.startswith("/_control"):
                    self.state.count(method, path)
                return self.send_status(401, "Unauthorized")
            if path.startswith("/_control"):
                return self.control(method, path)
            apf.serve(self, lambda: self.api(method, path, query))
        except DropWatch:
            self.close_connection = True
            try:
                self.connection.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        except (BrokenPipeError, ConnectionResetError, ssl.SSLError):
            self.close_connection = True

    def api(self, method, path, query):
        parts = path.strip("/").split("/")
        watch = query.get("watch", "") in ("true", "1", "True")
        verb = method
        ns = name = None
        # /api/v1/namespaces/NS/pods[/NAME] or /api/v1/pods
        if parts[:3] == ["api", "v1", "namespaces"] and len(parts) >= 5 \
                and parts[4] == "pods" and len(parts) <= 6:
            ns = parts[3]
            name = parts[5] if len(parts) == 6 else None
        elif parts == ["api", "v1", "pods"]:
            pass
        elif method == "GET" and path in ("/api", "/apis", "/api/v1"):
            self.state.count("GET", path)
            return self.discovery(path)
        else:
            self.state.count(method, path)
            return self.send_status(404, "the server could not find the "
                                    "requested resource")
        if method != "GET":
            self.state.count(method, path)
            return self.send_status(405, "fake apiserver: pods are read-only "
                                    "(use /_control)")
        verb = "GET" if name else ("WATCH" if watch else "LIST")
        self.state.count(verb, path)
        fault = self.state.take_fault(verb, path)
        self.trickle_s = fault.get("trickle_s") if fault else None
        if fault and fault.get("delay_ms"):
            time.sleep(fault["delay_ms"] / 1000.0)
        elif fault and fault.get("status"):
            if not (verb == "WATCH" and fault.get("in_stream")):
                return self.fault_answer(fault, verb, ns, name)
        if name:
            return self.get_pod(ns, name)
        try:
            labels = parse_selector(query.get("labelSelector"))
            fields = parse_selector(query.get("fieldSelector"))
            for key, op, _ in fields:
                if op not in ("=", "!="):
                    raise ValueError("invalid field selector")
                if key not in FIELDS:
                    raise ValueError('field label not supported: "%s"' % key)
        except ValueError as e:
            return self.send_status(400, str(e))
        if ns is not None:
            fields = fields + [("metadata.namespace", "=", ns)]
        if watch:
            return self.watch(query, labels, fields, fault)
        return self.list(query, labels, fields)

    def fault_answer(self, fault, verb, ns, name):
        code = int(fault["status"])
        headers = {}
        if fault.get("retry_after") is not None:
            headers["Retry-After"] = fault["retry_after"]
        messages = {
            401: "Unauthorized",
            403: '%s is forbidden: User "system:serviceaccount:default:'
                 'fake" cannot %s resource "pods" in API group "" in the '
                 'namespace "%s"' % ('pods "%s"' % name if name else "pods",
                                     verb.lower(), ns or ""),
            410: "too old resource version: 1 (%d)" % self.state.rv,
            429: "Too many requests, please try again later.",
            500: "Internal error occurred: injected fault",
            503: "the server is currently unable to handle the request",
        }
        return self.send_status(code, messages.get(code, "injected fault"),
                                name=name, headers=headers,
                                details=code == 403)

    def discovery(self, path):
        if path == "/api":
            host = self.server.server_address[0]
            return self.send_json(200, {
                "kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": [{
                    "clientCIDR": "0.0.0.0/0",
                    "serverAddress": "%s:%d" % (host,
                                                self.server.server_port)}]})
        if path == "/apis":
            return self.send_json(200, {"kind": "APIGroupList",
                                        "apiVersion": "v1", "groups": []})
        return self.send_json(200, {
            "kind": "APIResourceList", "apiVersion": "v1", "groupVersion": "v1",
            "resources": [{
                "name": "pods", "singularName": "pod", "namespaced": True,
                "kind": "Pod", "verbs": ["get", "list", "watch"],
                "shortNames": ["po"], "categories": ["all"]}]})

    def get_pod(self, ns, name):
        with self.state.cond:
            pod = copy.deepcopy(self.state.pods.get((ns, name)))
            rv = self.state.rv
        if pod is None:
            return self.send_status(404, 'pods "%s" not found' % name,
                                    name=name)
        if self.wants_table():
            return self.send_json(200, table([pod], rv))
        return self.send_json(200, pod)

    def list(self, query, labels, fields):
        raw_rv = query.get("resourceVersion", "")
        if raw_rv not in ("", "0"):
            try:
                int(raw_rv)
            except ValueError:
                return self.bad_resource_version(raw_rv)
        with self.state.cond:
            if raw_rv != "0" and not query.get("continue"):
                self.state.quorum_lists += 1  # A read etcd would serve.
            pods = [copy.deepcopy(p) for _, p in sorted(self.state.pods.items())
                    if labels_match(p, labels) and fields_match(p, fields)]
            rv = self.state.rv
        start = 0
        if query.get("continue"):
            try:
                token = json.loads(base64.urlsafe_b64decode(
                    query["continue"].encode()))
                start, rv = int(token["start"]), int(token["rv"])
            except (ValueError, KeyError, TypeError):
                return self.send_status(400, "invalid continue token")
            if rv < self.state.compacted_rv:
                return self.send_status(410, "The provided continue parameter "
                                        "is too old", reason="Expired")
        limit = int(query.get("limit") or 0)
        cont = ""
        if limit > 0 and start + limit < len(pods):
            cont = base64.urlsafe_b64encode(json.dumps(
                {"start": start + limit, "rv": rv}).encode()).decode()
            pods = pods[start:start + limit]
        else:
            pods = pods[start:]
        with self.state.cond:
            self.state.max_pods_per_answer = max(
                self.state.max_pods_per_answer, len(pods))
        if self.wants_table():
            return self.send_json(200, table(pods, rv, cont))
        metadata = {"resourceVersion": str(rv)}
        if cont:
            metadata["continue"] = cont
        self.send_json(200, {"kind": "PodList", "apiVersion": "v1",
                             "metadata": metadata, "items": pods})

    # --- watch --------------------------------------------------------------
    def write_chunk(self, obj):
        data = (json.dumps(obj) + "\n").encode()
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))

    def event_object(self, pod, rv):
        return table([pod], rv) if self.wants_table() else pod

    def watch(self, query, labels, fields, fault):
        st = self.state
        raw_rv = query.get("resourceVersion", "")
        timeout = int(query.get("timeoutSeconds") or 1800)
        bookmarks = query.get("allowWatchBookmarks") in ("true", "1", "True")
        interval = self.server.bookmark_interval if bookmarks else 0
        try:
            start_rv = int(raw_rv) if raw_rv not in ("", "0") else None
        except ValueError:
            return self.bad_resource_version(raw_rv)
        with st.cond:
            st.trim()
            expired = start_rv is not None and (
                start_rv < st.compacted_rv or start_rv < st.log_start_rv)
            if expired:
                st.expired_watches += 1
            mode = st.expired_mode
            current = st.rv
        expired_status = status_object(
            410, "too old resource version: %s (%d)" % (raw_rv, current),
            "Expired")
        if expired and mode == "http":
            return self.send_json(410, expired_status)
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.send_header("Cache-Control", "no-cache, private")
        self.end_headers()
        if fault and fault.get("status"):
            code = int(fault["status"])
            self.write_chunk({"type": "ERROR", "object": status_object(
                code, "injected in-stream fault", REASONS.get(code))})
            return self.end_stream()
        if expired:
            self.write_chunk({"type": "ERROR", "object": expired_status})
            return self.end_stream()
        start = time.monotonic()
        deadline = start + timeout
        next_bookmark = start + interval if interval > 0 else None
        # kube-apiserver also sends a bookmark 2 s before timeoutSeconds, so
        # a client resumes from a version the cache surely still holds.
        final_bookmark = deadline - 2 if bookmarks and timeout > 2 else None
        me = {"drop": False}

        def matches(p):
            return p is not None and labels_match(p, labels) and \
                fields_match(p, fields)

        with st.cond:
            st.watch_flags[id(me)] = me
            if start_rv is None:
                last = st.rv
                initial = [("ADDED", copy.deepcopy(p), st.rv)
                           for _, p in sorted(st.pods.items()) if matches(p)]
                st.max_pods_per_answer = max(st.max_pods_per_answer,
                                             len(initial))
            else:
                last = start_rv
                initial = []
        try:
            for kind, pod, rv in initial:
                self.write_chunk({"type": kind,
                                  "object": self.event_object(pod, rv)})
            while True:
                with st.cond:
                    while True:
                        if me["drop"]:
                            raise DropWatch()
                        if st.log and st.log[-1][0] > last:
                            break
                        now = time.monotonic()
                        wake = min(t for t in (deadline, next_bookmark,
                                               final_bookmark)
                                   if t is not None)
                        if now >= wake:
                            break
                        st.cond.wait(wake - now)
                    first = bisect.bisect_right(st.log, last,
                                                key=lambda e: e[0])
                    events = [(kind, pod, prev, rv)
                              for rv, kind, pod, prev, _ in st.log[first:]]
                    if events:
                        last = events[-1][3]
                    current = st.rv
                for kind, pod, prev, rv in events:
                    now_in, was_in = matches(pod), matches(prev)
                    if kind == "MODIFIED" and was_in and not now_in:
                        # Left the selection: DELETED with the last object
                        # that matched, at this event's version.
                        kind, pod = "DELETED", copy.deepcopy(prev)
                        pod["metadata"]["resourceVersion"] = str(rv)
                    elif kind == "MODIFIED" and now_in and not was_in:
                        kind = "ADDED"
                    elif not now_in:
                        continue
                    self.write_chunk({"type": kind,
                                      "object": self.event_object(pod, rv)})
                now = time.monotonic()
                due = next_bookmark is not None and now >= next_bookmark
                if final_bookmark is not None and now >= final_bookmark:
                    due, final_bookmark = True, None
                if due:
                    # A bare Pod with only the version, which is global:
                    # often newer than any pod this watch selects.
                    self.write_chunk({"type": "BOOKMARK", "object": {
                        "kind": "Pod", "apiVersion": "v1",
                        "metadata": {"resourceVersion": str(current)}}})
                    if next_bookmark is not None and now >= next_bookmark:
                        next_bookmark = now + interval
                if now >= deadline:
                    return self.end_stream()
        finally:
            with st.cond:
                st.watch_flags.pop(id(me), None)

    def bad_resource_version(self, raw_rv):
        # kube-apiserver answers 500 here, not 400.
        return self.send_status(
            500, 'Internal error occurred: resourceVersion: Invalid value: '
            '"%s": strconv.ParseUint: parsing "%s": invalid syntax'
            % (raw_rv, raw_rv), reason="InternalError")

    def end_stream(self):
        self.wfile.write(b"0\r\n\r\n")

    # --- control ------------------------------------------------------------
    def control(self, method, path):
        st = self.state
        parts = path.strip("/").split("/")[1:]
        try:
            body = self.read_body() if method in ("PUT", "POST") else {}
        except ValueError as e:
            return self.send_status(400, "bad JSON: %s" % e)
        if parts[:1] in (["pods"], ["replace"]) and len(parts) in (2, 3):
            ns, name = (parts[1], parts[2]) if len(parts) == 3 else (
                "default", parts[1])
            try:
                if parts[0] == "pods" and method == "PUT":
                    return self.send_json(200, st.put(ns, name, body))
                if parts[0] == "pods" and method == "DELETE":
                    grace = float(urllib.parse.parse_qs(urllib.parse.urlsplit(
                        self.path).query).get("grace", ["0"])[-1])
                    pod = st.delete(ns, name, grace)
                    if pod is None:
                        return self.send_status(404, 'pods "%s" not found'
                                                % name, name=name)
                    return self.send_json(200, pod)
                if parts[0] == "replace" and method == "POST":
                    query = urllib.parse.parse_qs(
                        urllib.parse.urlsplit(self.path).query)
                    grace = query.get("grace")
                    return self.send_json(200, st.replace(
                        ns, name, body, query.get("as", [None])[-1],
                        float(grace[-1]) if grace else None))
            except (ValueError, TypeError, KeyError, AttributeError) as e:
                return self.send_status(400, "bad shorthand: %s" % e)
        if parts == ["faults"] and method == "POST":
            return self.faults(body if isinstance(body, list) else [body])
        if parts == ["stats"] and method == "GET":
            with st.cond:
                return self.send_json(200, {"requests": dict(st.stats),
                                            "total": st.total,
                                            "quorum_lists": st.quorum_lists,
                                            "expired_watches":
                                                st.expired_watches,
                                            "max_pods_per_answer":
                                                st.max_pods_per_answer})
        if parts[:1] == ["apf"] and self.server.apf is not None:
            if method == "POST" and parts[1:] == ["reset"]:
                self.server.apf.reset()
            return self.send_json(200, self.server.apf.stats())
        if parts == ["stats", "reset"] and method == "POST":
            with st.cond:
                st.stats.clear()
                st.total = 0
                st.quorum_lists = st.expired_watches = 0
                st.max_pods_per_answer = 0
            return self.send_json(200, {"requests": {}, "total": 0})
        return self.send_status(404, "unknown control %s %s" % (method, path))

    def faults(self, items):
        st = self.state
        with st.cond:
            for f in items:
                if not isinstance(f, dict):
                    return self.send_status(400, "a fault is a JSON object")
                if f.get("clear"):
                    st.faults.clear()
                if f.get("drop_watches"):
                    for flag in st.watch_flags.values():
                        flag["drop"] = True
                    st.cond.notify_all()
                if f.get("compact"):
                    st.compacted_rv = st.rv  # Older RVs are gone.
                if f.get("expired_mode") in ("event", "http"):
                    st.expired_mode = f["expired_mode"]
                if f.get("history_events") is not None:
                    st.history_events = int(f["history_events"])
                    st.trim()
                if f.get("status") or f.get("delay_ms") or \
                        f.get("trickle_s"):
                    fault = dict(f)
                    fault["count"] = int(f.get("count", 1))
                    fault.setdefault("method", "any")
                    st.faults.append(fault)
            return self.send_json(200, {"faults": st.faults,
                                        "compacted_rv": st.compacted_rv})


class Server(http.server.ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 1024  # listen() backlog: 1,000 agents connect at once.

    def handle_error(self, request, client_address):
        # A client that gives up mid-handshake (wrong CA) is normal here.
        exc = sys.exc_info()[1]
        if isinstance(exc, (ssl.SSLError, ConnectionError, OSError)):
            return
        super().handle_error(request, client_address)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--bind", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--port-file")
    p.add_argument("--cert")
    p.add_argument("--key")
    p.add_argument("--token-file", action="append", default=[],
                   help="accepted bearer token(s); re-read on every request")
    p.add_argument("--pods")
    p.add_argument("--bookmark-interval", type=float, default=60.0,
                   help="seconds between BOOKMARK events (0 = never)")
    p.add_argument("--expired-mode", choices=("event", "http"),
                   default="event",
                   help="too-old watch RV: in-stream ERROR (as kube-apiserver)"
                   " or HTTP 410")
    p.add_argument("--history-events", type=int, default=1000,
                   help="watch history kept, in events (older RVs: 410)")
    p.add_argument("--history-seconds", type=float, default=75.0,
                   help="watch history kept, in seconds (kube-apiserver's "
                   "watch cache keeps about 75 s)")
    p.add_argument("--start-rv", type=int,
                   help="a restart: versions continue from N (etcd kept "
                   "them) and the watch history starts empty, after --pods")
    p.add_argument("--log")
    apf.add_arguments(p)
    args = p.parse_args()

    state = State(args)
    if args.start_rv is not None:
        state.rv = max(state.rv, args.start_rv)
    if args.pods:
        with open(args.pods) as f, state.cond:
            state.load_pods(json.load(f))
    if args.start_rv is not None:
        state.log.clear()
        state.log_start_rv = state.rv
    server = Server((args.bind, args.port), Handler)
    server.state = state
    server.token_files = args.token_file
    server.bookmark_interval = args.bookmark_interval
    server.logfile = open(args.log, "a") if args.log else None
    server.apf = apf.from_args(args)
    if args.cert:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(args.cert, args.key)
        ctx.set_alpn_protocols(["http/1.1"])
        # The handshake runs in the handler thread, so a bad client cannot
        # stall accept().
        server.socket = ctx.wrap_socket(server.socket, server_side=True,
                                        do_handshake_on_connect=False)
    port = server.server_address[1]
    if args.port_file:
        tmp = args.port_file + ".tmp"
        with open(tmp, "w") as f:
            f.write("%d\n" % port)
        os.rename(tmp, args.port_file)
    print("READY %d" % port, flush=True)
    try:
        server.serve_forever(poll_interval=3600)
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
