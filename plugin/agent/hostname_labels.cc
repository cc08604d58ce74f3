// SPDX-License-Identifier: Apache-2.0
// HostnameLabelSelector; see hostname_labels.h.

#include "plugin/agent/hostname_labels.h"

namespace k8s_agent {
namespace {

bool IsIndex(const std::string& s) {
  if (s.empty() || s.size() > 9) return false;  // Completions fit an int32.
  if (s.size() > 1 && s[0] == '0') return false;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

}  // namespace

std::string HostnameLabelSelector(const HostName& host,
                                  const std::string& extra) {
  if (host.kind != HostName::Kind::kPodName) return "";
  const std::string& h = host.pod_name;
  size_t dash = h.rfind('-');
  if (dash == std::string::npos || dash == 0) return "";
  std::string job = h.substr(0, dash);
  std::string index = h.substr(dash + 1);
  if (!IsIndex(index) || job.back() == '-') return "";
  std::string selector = "batch.kubernetes.io/job-name=" + job +
                         ",batch.kubernetes.io/job-completion-index=" + index;
  return extra.empty() ? selector : extra + "," + selector;
}

}  // namespace k8s_agent
