// SPDX-License-Identifier: Apache-2.0
// What one pod template gets, as images/k8s/examples/ give it by hand
// (delivery-job.yaml, mpijob-delivery.yaml, mpijob-stock-image.yaml):
//
// every role: the delivery image "k8s-agent" as an init container copying
//   the agent into an emptyDir "k8s-agent" mounted at --dir (read-only in
//   the pod's containers), and the ServiceAccount (tree spawn runs the
//   agent on workers too);
// launcher: OMPI_MCA_plm_rsh_agent (Open MPI 4) and PRTE_MCA_plm_ssh_agent
//   (Open MPI 5) naming the delivered agent, K8S_AGENT_NAMESPACE from the
//   downward API, and what the workload adds (the operator's hostfile under
//   its PRRTE name, K8S_AGENT_SELECTOR);
// worker, with --sshd: the command k8s-agent-sshd on the job's keys.
//
// Nothing the user wrote is removed, changed or reordered: additions go
// after the user's entries, an entry of the same name is kept as it is
// (with a warning when it differs from the agent's), and a second run
// finds everything in place and adds nothing.

#ifndef K8S_AGENT_PLUGIN_INJECT_POD_INJECTOR_H_
#define K8S_AGENT_PLUGIN_INJECT_POD_INJECTOR_H_

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

namespace k8s_agent::inject {

/// Pod template annotation overriding the role the workload's shape gives:
/// launcher, worker, or none (leave the template alone).
inline constexpr char kRoleAnnotation[] = "k8s-agent/role";
/// Pod template annotation naming the containers (comma-separated) that
/// get the environment and mounts; default: every container.
inline constexpr char kContainersAnnotation[] = "k8s-agent/containers";
/// The names the injector owns in a pod spec.
inline constexpr char kVolumeName[] = "k8s-agent";
inline constexpr char kSshConfigName[] = "k8s-agent-ssh";
inline constexpr char kSshConfigDir[] = "/etc/k8s-agent-ssh";

enum class Role { kLauncher, kWorker };
const char* RoleName(Role role);

/// The same for every template of one run (k8s-agent inject's flags).
struct AgentSettings {
  /// The release's delivery image (the project version, as the examples
  /// name it), never a moving tag.
  std::string image = std::string("k8s-agent:") + K8S_AGENT_IMAGE_TAG;
  std::string dir = "/opt/k8s-agent";
  std::string service_account = "mpi-launcher";
  /// Workers run dir/k8s-agent-sshd (images without an OpenSSH server).
  bool sshd = false;
  /// k8s-agent-sshd's --keys where the workload does not say (operators'
  /// sshAuthMountPath does).
  std::string sshd_keys = "/etc/ssh-secret";
};

/// One template: its role and what its workload adds.
struct TemplateSpec {
  Role role = Role::kLauncher;
  /// Where it is in the object, for messages ("spec.template").
  std::string where;
  /// Launcher: PRTE_MCA_prte_default_hostfile when the operator writes a
  /// hostfile there (mpi-operator, Trainer: /etc/mpi/hostfile).
  std::string operator_hostfile;
  /// Launcher: K8S_AGENT_SELECTOR, when the workers' labels are known.
  std::string selector;
  /// Worker with sshd: k8s-agent-sshd's arguments after the program.
  std::vector<std::string> sshd_args;
  /// Mount the k8s-agent-ssh ConfigMap (its ssh_config: no host key
  /// checks, for operators' Secrets, which hold no known_hosts) and point
  /// the launcher's agent at it.
  bool ssh_config = false;
};

/// Adds what `spec` needs to `pod_template` (a PodTemplateSpec: metadata
/// and spec; or a Pod). Appends one line per thing left as the user had it
/// that the job may need changed to `warnings`.
void InjectPodTemplate(YAML::Node pod_template, const TemplateSpec& spec,
                       const AgentSettings& settings,
                       std::vector<std::string>* warnings);

}  // namespace k8s_agent::inject

#endif  // K8S_AGENT_PLUGIN_INJECT_POD_INJECTOR_H_
