// SPDX-License-Identifier: Apache-2.0
#include "plugin/inject/workloads.h"

#include <algorithm>
#include <cctype>
#include <optional>
#include <string>
#include <vector>

#include "plugin/inject/node_edit.h"

namespace k8s_agent::inject {
namespace {

// Operators' defaults: mpi-operator v2beta1 and Trainer mount their
// generated key at sshAuthMountPath (default /root/.ssh), write the
// hostfile at /etc/mpi/hostfile and reach workers on port 22.
constexpr char kOperatorKeys[] = "/root/.ssh";
constexpr char kOperatorHostfile[] = "/etc/mpi/hostfile";

// Kinds that hold no pod template: passed through without a word.
constexpr const char* kPodless[] = {"ConfigMap",
                                    "Secret",
                                    "Service",
                                    "ServiceAccount",
                                    "Role",
                                    "RoleBinding",
                                    "ClusterRole",
                                    "ClusterRoleBinding",
                                    "Namespace",
                                    "PersistentVolumeClaim",
                                    "PersistentVolume",
                                    "NetworkPolicy",
                                    "PodDisruptionBudget",
                                    "PriorityClass",
                                    "LimitRange",
                                    "ResourceQuota",
                                    "StorageClass",
                                    "CustomResourceDefinition",
                                    "Endpoints",
                                    "EndpointSlice",
                                    "Ingress"};

std::string Group(const YAML::Node& object) {
  const std::string api = Text(Get(object, "apiVersion"));
  const size_t slash = api.find('/');
  return slash == std::string::npos ? "" : api.substr(0, slash);
}

std::string Lower(std::string s) {
  for (char& c : s) {
    c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return s;
}

std::string RoleAnnotation(const YAML::Node& meta) {
  return Text(Get(Get(meta, "annotations"), kRoleAnnotation));
}

class Finder {
 public:
  Finder(const YAML::Node& object, const AgentSettings& settings)
      : object_(object), settings_(settings) {
    name_ = Text(Get(Get(object, "metadata"), "name"));
  }

  Workload Find() {
    const std::string kind = Text(Get(object_, "kind"));
    const std::string group = Group(object_);
    YAML::Node spec = Get(object_, "spec");
    out_.known = true;
    if (group.empty() && kind == "Pod") {
      Add(object_, "", Role::kLauncher, Plain(), true);
    } else if (group == "batch" && kind == "Job") {
      Add(Get(spec, "template"), "spec.template", Role::kLauncher, Plain(),
          true);
    } else if (group == "apps" && kind == "StatefulSet") {
      if (Add(Get(spec, "template"), "spec.template", Role::kWorker, Plain(),
              false) == Role::kWorker) {
        out_.worker_selector = MatchLabels(Get(spec, "selector"));
      }
    } else if (group == "kubeflow.org" && kind == "MPIJob") {
      MpiJob(spec);
    } else if (group == "jobset.x-k8s.io" && kind == "JobSet") {
      ReplicatedJobs(Get(spec, "replicatedJobs"), "spec.replicatedJobs",
                     std::nullopt);
    } else if (group == "trainer.kubeflow.org" &&
               (kind == "TrainingRuntime" ||
                kind == "ClusterTrainingRuntime")) {
      YAML::Node mpi = Get(Get(spec, "mlPolicy"), "mpi");
      std::optional<std::string> keys;
      if (mpi.IsDefined()) {
        keys = Text(Get(mpi, "sshAuthMountPath"));
        if (keys->empty()) keys = kOperatorKeys;
      }
      ReplicatedJobs(Get(Get(Get(spec, "template"), "spec"), "replicatedJobs"),
                     "spec.template.spec.replicatedJobs", keys);
    } else if (group == "leaderworkerset.x-k8s.io" &&
               kind == "LeaderWorkerSet") {
      YAML::Node lwt = Get(spec, "leaderWorkerTemplate");
      YAML::Node leader = Get(lwt, "leaderTemplate");
      if (leader.IsDefined()) {
        Add(leader, "spec.leaderWorkerTemplate.leaderTemplate", Role::kLauncher,
            Plain(), false);
      } else {
        out_.warnings.push_back(
            "no leaderTemplate: the leader runs the workerTemplate, which "
            "gets no launcher settings (add a leaderTemplate for mpirun)");
      }
      Add(Get(lwt, "workerTemplate"),
          "spec.leaderWorkerTemplate.workerTemplate", Role::kWorker, Plain(),
          false);
    } else if (group == "trainer.kubeflow.org" && kind == "TrainJob") {
      YAML::Node ref = Get(spec, "runtimeRef");
      std::string runtime = Text(Get(ref, "kind"));
      if (runtime.empty()) runtime = "ClusterTrainingRuntime";
      out_.warnings.push_back(
          "a TrainJob has no pod template of its own: inject its runtime (" +
          runtime + "/" + Text(Get(ref, "name")) + ") instead; left as it is");
    } else if (std::find(std::begin(kPodless), std::end(kPodless), kind) ==
                   std::end(kPodless) ||
               (group.empty() && kind == "List")) {
      out_.known = false;
    }
    return std::move(out_);
  }

 private:
  TemplateSpec Plain() const {
    TemplateSpec spec;
    spec.sshd_args = {"--keys", settings_.sshd_keys};
    return spec;
  }

  TemplateSpec Operator(const std::string& keys) const {
    TemplateSpec spec;
    spec.operator_hostfile = kOperatorHostfile;
    spec.sshd_args = {"--port", "22", "--keys", keys};
    spec.ssh_config = settings_.sshd;
    return spec;
  }

  static std::string MatchLabels(const YAML::Node& selector) {
    YAML::Node labels = Get(selector, "matchLabels");
    if (!IsMap(labels) || Get(selector, "matchExpressions").IsDefined()) {
      return "";
    }
    std::string out;
    for (auto it = labels.begin(); it != labels.end(); ++it) {
      if (!out.empty()) out += ",";
      out += Text(it->first) + "=" + Text(it->second);
    }
    return out;
  }

  // Adds one template with the role its shape gives unless its annotation
  // (or, for the object's own template, the object's) says another.
  // Returns the role used, or nullopt when it is left alone.
  std::optional<Role> Add(const YAML::Node& pod_template,
                          const std::string& where, Role role,
                          TemplateSpec spec, bool plain_launcher,
                          bool object_annotation = true) {
    if (!IsMap(pod_template)) {
      out_.warnings.push_back(where + ": no pod template; left as it is");
      return std::nullopt;
    }
    std::string said = RoleAnnotation(Get(pod_template, "metadata"));
    if (said.empty() && object_annotation) {
      said = RoleAnnotation(Get(object_, "metadata"));
    }
    const std::string at = where.empty() ? "the pod" : where;
    if (said == "none") return std::nullopt;
    if (said == "launcher") {
      role = Role::kLauncher;
    } else if (said == "worker") {
      role = Role::kWorker;
    } else if (!said.empty()) {
      out_.warnings.push_back(at + ": " + kRoleAnnotation + ": " + said +
                              " is none of launcher, worker, none; taken as " +
                              RoleName(role));
    }
    spec.role = role;
    spec.where = at;
    out_.templates.push_back({pod_template, std::move(spec),
                              plain_launcher && role == Role::kLauncher});
    return role;
  }

  void MpiJob(const YAML::Node& spec) {
    std::string keys = Text(Get(spec, "sshAuthMountPath"));
    if (keys.empty()) keys = kOperatorKeys;
    YAML::Node replicas = Get(spec, "mpiReplicaSpecs");
    if (!IsMap(replicas)) {
      out_.warnings.push_back("spec.mpiReplicaSpecs: none; left as it is");
      return;
    }
    for (auto it = replicas.begin(); it != replicas.end(); ++it) {
      const std::string type = Text(it->first);
      const std::string where = "spec.mpiReplicaSpecs." + type + ".template";
      TemplateSpec base = Operator(keys);
      if (type == "Launcher") {
        base.selector = "training.kubeflow.org/job-name=" + name_ +
                        ",training.kubeflow.org/job-role=worker";
        Add(Get(it->second, "template"), where, Role::kLauncher, base, false,
            false);
      } else if (type == "Worker") {
        Add(Get(it->second, "template"), where, Role::kWorker, base, false,
            false);
      } else {
        out_.warnings.push_back("spec.mpiReplicaSpecs." + type +
                                ": neither Launcher nor Worker; left as it is");
      }
    }
  }

  // JobSet's, and Trainer's runtimes' (with `operator_keys`: an MPI
  // runtime, whose keys and hostfile Trainer makes).
  void ReplicatedJobs(const YAML::Node& jobs, const std::string& path,
                      const std::optional<std::string>& operator_keys) {
    if (!IsSeq(jobs)) {
      out_.warnings.push_back(path + ": none; left as it is");
      return;
    }
    std::vector<std::string> workers;
    size_t launchers_at = out_.templates.size();
    for (size_t i = 0; i < jobs.size(); ++i) {
      const YAML::Node job = jobs[i];
      const std::string rj = Text(Get(job, "name"));
      const std::string lower = Lower(rj);
      const std::string where = path + "[" + rj + "].template.spec.template";
      Role role = Role::kWorker;
      if (lower.rfind("launcher", 0) == 0) {
        role = Role::kLauncher;
      } else if (lower.find("initializer") != std::string::npos &&
                 RoleAnnotation(
                     Get(Get(Get(Get(job, "template"), "spec"), "template"),
                         "metadata"))
                     .empty()) {
        continue;  // Trainer's dataset/model initializers run no MPI.
      }
      TemplateSpec spec = operator_keys ? Operator(*operator_keys) : Plain();
      std::optional<Role> used =
          Add(Get(Get(Get(job, "template"), "spec"), "template"), where, role,
              spec, false, false);
      if (used == Role::kWorker) workers.push_back(rj);
    }
    // JobSet labels each pod with its JobSet's and replicated job's names;
    // Trainer's TrainJob name is not known from its runtime.
    if (operator_keys || workers.size() != 1 || name_.empty()) return;
    for (size_t i = launchers_at; i < out_.templates.size(); ++i) {
      TemplateSpec& spec = out_.templates[i].spec;
      if (spec.role != Role::kLauncher) continue;
      spec.selector = "jobset.sigs.k8s.io/jobset-name=" + name_ +
                      ",jobset.sigs.k8s.io/replicatedjob-name=" + workers[0];
    }
  }

  const YAML::Node& object_;
  const AgentSettings& settings_;
  std::string name_;
  Workload out_;
};

}  // namespace

Workload FindWorkload(const YAML::Node& object, const AgentSettings& settings) {
  return Finder(object, settings).Find();
}

}  // namespace k8s_agent::inject
