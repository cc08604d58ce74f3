# SPDX-License-Identifier: Apache-2.0
"""An API Priority and Fairness-like admission limit for the fake server.

kube-apiserver puts every ServiceAccount in FlowSchema `service-accounts`
(priority level `workload-low`), one flow per user: all agents of one job
share it. Within a flow a bounded number of requests execute at once (the
flow's share of seats), more wait in a FIFO queue (APF's queue length is 50),
and the rest, or a request that waited too long, get 429 with Retry-After.
A watch holds its seat only while it starts (kube-apiserver frees it once
the initial events are sent).

This models that per user, with one queue per flow (no shuffle sharding:
the fake serves one job): `seats` in flight, `queue` waiting for at most
`queue_wait` seconds, then 429 `Retry-After: retry_after`. A seat is held
from admission until the answer's headers are written: for a GET or LIST
that is all of its work; for a watch, its start (the fake writes its few
initial events right after). Off unless --apf-seats is given.
"""

import collections
import hashlib
import threading
import time


def add_arguments(parser):
    parser.add_argument("--apf-seats", type=int, default=0,
                        help="APF-like limit: requests in flight per user "
                        "(bearer token); 0 = no limit")
    parser.add_argument("--apf-queue", type=int, default=50,
                        help="requests that may wait for a seat, per user")
    parser.add_argument("--apf-queue-wait", type=float, default=5.0,
                        help="seconds a request may wait before 429")
    parser.add_argument("--apf-retry-after", type=int, default=1,
                        help="Retry-After seconds on a 429")


def from_args(args):
    if args.apf_seats <= 0:
        return None
    return ApfLimiter(args.apf_seats, args.apf_queue, args.apf_queue_wait,
                      args.apf_retry_after)


class ApfLimiter:
    """Seats and a FIFO queue per user; see the module docstring."""

    def __init__(self, seats, queue, queue_wait, retry_after):
        self.seats = seats
        self.queue = queue
        self.queue_wait = queue_wait
        self.retry_after = retry_after
        self.cond = threading.Condition()
        self.flows = {}  # user -> {"in_flight": n, "waiting": deque}
        self.reset()

    def reset(self):
        with self.cond:
            self.counts = {"admitted": 0, "admitted_after_wait": 0,
                           "rejected_queue_full": 0,
                           "rejected_wait_timeout": 0,
                           "max_in_flight": 0, "max_waiting": 0}

    @staticmethod
    def user_of(authorization):
        # The flow is the user; the token stands for it (never stored).
        return hashlib.sha256(authorization.encode()).hexdigest()[:16]

    def admit(self, user):
        """Blocks until a seat is free (True) or the request is refused."""
        with self.cond:
            flow = self.flows.setdefault(
                user, {"in_flight": 0, "waiting": collections.deque()})
            if flow["in_flight"] < self.seats and not flow["waiting"]:
                self.take(flow, waited=False)
                return True
            if len(flow["waiting"]) >= self.queue:
                self.counts["rejected_queue_full"] += 1
                return False
            ticket = object()
            flow["waiting"].append(ticket)
            self.counts["max_waiting"] = max(self.counts["max_waiting"],
                                             len(flow["waiting"]))
            deadline = time.monotonic() + self.queue_wait
            while True:
                if flow["waiting"][0] is ticket and \
                        flow["in_flight"] < self.seats:
                    flow["waiting"].popleft()
                    self.take(flow, waited=True)
                    self.cond.notify_all()  # The next in line may fit too.
                    return True
                left = deadline - time.monotonic()
                if left <= 0:
                    flow["waiting"].remove(ticket)
                    self.counts["rejected_wait_timeout"] += 1
                    self.cond.notify_all()
                    return False
                self.cond.wait(left)

    def take(self, flow, waited):
        flow["in_flight"] += 1
        self.counts["admitted"] += 1
        if waited:
            self.counts["admitted_after_wait"] += 1
        self.counts["max_in_flight"] = max(self.counts["max_in_flight"],
                                           flow["in_flight"])

    def release(self, user):
        with self.cond:
            self.flows[user]["in_flight"] -= 1
            self.cond.notify_all()

    def stats(self):
        with self.cond:
            out = dict(self.counts)
            out["rejected"] = (out["rejected_queue_full"]
                               + out["rejected_wait_timeout"])
            out["config"] = {"seats": self.seats, "queue": self.queue,
                             "queue_wait": self.queue_wait,
                             "retry_after": self.retry_after}
            return out


def serve(handler, answer):
    """Runs `answer()` for `handler`'s API request under the limit, or
    answers 429. The seat goes back when the headers are written (see
    `headers_sent`) or, failing that, when `answer` returns."""
    apf = getattr(handler.server, "apf", None)
    if apf is None:
        return answer()
    user = ApfLimiter.user_of(handler.headers.get("Authorization", ""))
    if not apf.admit(user):
        return handler.send_status(
            429, "Too many requests, please try again later.",
            headers={"Retry-After": apf.retry_after})
    handler.apf_seat = (apf, user)
    try:
        return answer()
    finally:
        headers_sent(handler)


def headers_sent(handler):
    """Gives the handler's seat back, once."""
    seat = getattr(handler, "apf_seat", None)
    if seat is not None:
        handler.apf_seat = None
        seat[0].release(seat[1])
