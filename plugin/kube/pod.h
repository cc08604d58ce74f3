// SPDX-License-Identifier: Apache-2.0
// The slice of a core/v1 Pod that k8s-agent acts on, parsed without throwing.

#ifndef K8S_AGENT_PLUGIN_KUBE_POD_H_
#define K8S_AGENT_PLUGIN_KUBE_POD_H_

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/base/status.h"

namespace k8s_agent::kube {

struct ContainerStatus {
  std::string name;
  bool init = false;  ///< From status.initContainerStatuses.
  /// An init container with restartPolicy Always in spec.initContainers: a
  /// native sidecar (beta 1.29, GA 1.33). It runs beside the main
  /// containers for the pod's life, so it is never "not finished".
  bool sidecar = false;
  /// status.started: the startup probe passed (a sidecar's start is what
  /// lets the next init container, and the main ones, begin).
  bool started = false;
  bool ready = false;
  int restart_count = 0;
  /// state.waiting: e.g. "ImagePullBackOff", "ContainerCreating".
  std::string waiting_reason;
  std::string waiting_message;
  /// state.terminated (or lastState.terminated when waiting in backoff).
  std::string terminated_reason;
  int terminated_exit_code = 0;
  /// state.running.startedAt, RFC 3339 as the API wrote it (node clock).
  std::string started_at;
};

/// One entry of spec.containers (init containers excluded): the resources
/// a hostfile's slots may be derived from.
struct ContainerSpec {
  std::string name;
  /// resources.limits / resources.requests: resource name -> quantity as
  /// the API wrote it ("2", "500m", "4Gi").
  std::map<std::string, std::string> limits;
  std::map<std::string, std::string> requests;
};

struct Pod {
  std::string name;
  std::string ns;
  std::string uid;
  std::string resource_version;
  std::map<std::string, std::string> labels;
  /// spec.hostname / spec.subdomain (Indexed Jobs, JobSet, StatefulSets).
  std::string hostname;
  std::string subdomain;
  std::vector<ContainerSpec> spec_containers;  ///< spec.containers.
  bool deleting = false;           ///< metadata.deletionTimestamp is set.
  std::string creation_timestamp;  ///< metadata.creationTimestamp, RFC 3339.
  std::string node_name;           ///< spec.nodeName, once scheduled.
  /// The ownerReference with controller=true as "Kind/name" (e.g.
  /// "StatefulSet/workers"); empty for a bare pod, which nothing recreates.
  std::string controller;

  std::string phase;    ///< "Pending", "Running", "Succeeded", "Failed", ...
  std::string reason;   ///< status.reason, e.g. "Evicted".
  std::string message;  ///< status.message.
  std::string pod_ip;
  std::vector<std::string> pod_ips;  ///< status.podIPs[].ip, incl. pod_ip.
  bool ready = false;                ///< Condition Ready == True.
  /// Condition PodScheduled == False: its reason ("Unschedulable") and message.
  std::string unschedulable_reason;
  std::string unschedulable_message;
  /// Condition type -> lastTransitionTime (RFC 3339, as written by the
  /// scheduler or kubelet) for conditions whose status is True: the pod's
  /// own account of when it was scheduled, initialized, ready. For --trace.
  std::map<std::string, std::string> true_since;
  std::vector<ContainerStatus> containers;  ///< Init containers first.

  /// Parses a Pod object. Missing optional fields are left empty; a wrong
  /// type on a field we use is kInternal naming the field.
  static StatusOr<Pod> FromJson(std::string_view json_text);
};

/// "Pending: ContainerCreating", "Failed: Evicted", "Pending: Unschedulable":
/// the phase plus the first reason that explains it, for humans.
std::string PhaseSummary(const Pod& pod);

/// One page of a list: items plus what is needed to continue or watch.
struct PodList {
  std::vector<Pod> items;
  std::string resource_version;  ///< metadata.resourceVersion of the list.
  std::string continue_token;    ///< metadata.continue; empty on last page.
  static StatusOr<PodList> FromJson(std::string_view json_text);
};

/// A decoded watch event.
struct WatchEvent {
  enum class Type { kAdded, kModified, kDeleted, kBookmark, kError };
  Type type = Type::kAdded;
  Pod pod;       ///< For ADDED/MODIFIED/DELETED; BOOKMARK sets
                 ///< only pod.resource_version.
  Status error;  ///< For ERROR: the embedded Status, classified.
};

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_POD_H_
