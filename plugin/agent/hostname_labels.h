// SPDX-License-Identifier: Apache-2.0
// The labels a controller puts on the pod it gives a hostname, so a HOST
// that is a hostname rather than a pod name is found by a label-selected
// watch of the few pods that can match, not a namespace-wide LIST.

#ifndef K8S_AGENT_PLUGIN_AGENT_HOSTNAME_LABELS_H_
#define K8S_AGENT_PLUGIN_AGENT_HOSTNAME_LABELS_H_

#include <string>

#include "plugin/agent/host_name.h"

namespace k8s_agent {

/// The label selector for the pods that may carry HOST as spec.hostname
/// under a different name, or "" when HOST fits no such grammar.
///
/// Only the Job controller names a pod apart from its hostname: an Indexed
/// Job's pod is `<job>-<index>-<random>` with hostname `<job>-<index>`, and
/// since Kubernetes 1.28 it is labelled batch.kubernetes.io/job-name and
/// batch.kubernetes.io/job-completion-index. JobSet (and so Kubeflow
/// Trainer v2) makes Indexed Jobs named `<jobset>-<replicatedjob>-<index>`,
/// so its hostnames `<jobset>-<replicatedjob>-<jobindex>-<podindex>` are that
/// grammar too. StatefulSets (LeaderWorkerSet's groups), mpi-operator's and
/// Volcano's workers name the pod as its hostname: the name lookup finds
/// those.
///
/// `extra` (--selector) is AND-ed in. An index is decimal without leading
/// zeros, as the Job controller writes it.
std::string HostnameLabelSelector(const HostName& host,
                                  const std::string& extra);

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_AGENT_HOSTNAME_LABELS_H_
