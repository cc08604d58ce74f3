// SPDX-License-Identifier: Apache-2.0
#include "plugin/inject/pod_injector.h"

#include <string>
#include <vector>

#include "plugin/inject/node_edit.h"
#include "plugin/inject/yaml_document.h"

namespace k8s_agent::inject {
namespace {

// A node for a message: on one line, as flow YAML.
std::string OneLine(const YAML::Node& node) {
  YAML::Node copy = YAML::Clone(node);
  if (copy.IsSequence() || copy.IsMap()) {
    copy.SetStyle(YAML::EmitterStyle::Flow);
  }
  std::string text = EmitDocument(copy);
  while (!text.empty() && text.back() == '\n') text.pop_back();
  for (char& c : text) {
    if (c == '\n') c = ' ';
  }
  return text;
}

YAML::Node Entry(const std::string& name) {
  YAML::Node entry(YAML::NodeType::Map);
  entry["name"] = Str(name);
  return entry;
}

YAML::Node EnvValue(const std::string& name, const std::string& value) {
  YAML::Node env = Entry(name);
  env["value"] = Str(value);
  return env;
}

YAML::Node EnvField(const std::string& name, const std::string& path) {
  YAML::Node env = Entry(name);
  YAML::Node field(YAML::NodeType::Map);
  field["fieldPath"] = Str(path);
  YAML::Node from(YAML::NodeType::Map);
  from["fieldRef"] = field;
  env["valueFrom"] = from;
  return env;
}

YAML::Node Mount(const std::string& name, const std::string& path,
                 bool read_only) {
  YAML::Node mount = Entry(name);
  mount["mountPath"] = Str(path);
  if (read_only) mount["readOnly"] = true;
  return mount;
}

// The delivery image's init container, as the examples write it: its own
// uid 65532, writing only the emptyDir (Pod Security "restricted").
YAML::Node DeliveryContainer(const AgentSettings& settings) {
  YAML::Node init = Entry(kVolumeName);
  init["image"] = Str(settings.image);
  init["args"] = FlowList({settings.dir});
  YAML::Node caps(YAML::NodeType::Map);
  caps["drop"] = FlowList({"ALL"});
  YAML::Node security(YAML::NodeType::Map);
  security["runAsNonRoot"] = true;
  security["allowPrivilegeEscalation"] = false;
  security["readOnlyRootFilesystem"] = true;
  security["capabilities"] = caps;
  init["securityContext"] = security;
  YAML::Node mounts(YAML::NodeType::Sequence);
  mounts.push_back(Mount(kVolumeName, settings.dir, false));
  init["volumeMounts"] = mounts;
  return init;
}

class TemplateInjector {
 public:
  TemplateInjector(const TemplateSpec& spec, const AgentSettings& settings,
                   std::vector<std::string>* warnings)
      : spec_(spec), settings_(settings), warnings_(warnings) {}

  void Run(YAML::Node pod_template) {
    YAML::Node pod = Get(pod_template, "spec");
    if (!IsMap(pod)) {
      Warn("has no pod spec; left as it is");
      return;
    }
    YAML::Node containers = Get(pod, "containers");
    if (!IsSeq(containers) || containers.size() == 0) {
      Warn("has no containers; left as it is");
      return;
    }
    std::vector<std::string> only = Targets(pod_template);
    ServiceAccount(pod);
    bool delivered = Volumes(pod);
    if (delivered) InitContainer(pod);
    bool first = true;
    for (YAML::Node container : containers) {
      const std::string name = Text(Get(container, "name"));
      if (!only.empty() && !Contains(only, name)) continue;
      where_container_ = "container " + name;
      Mounts(container);
      if (spec_.role == Role::kLauncher) LauncherEnv(container);
      if (spec_.role == Role::kWorker && first) Sshd(container);
      first = false;
    }
    where_container_.clear();
    for (const std::string& name : only) {
      if (!FindByName(containers, name).IsDefined()) {
        Warn(std::string(kContainersAnnotation) + " names " + name +
             ", which is not a container here");
      }
    }
  }

 private:
  static bool Contains(const std::vector<std::string>& names,
                       const std::string& name) {
    for (const std::string& n : names) {
      if (n == name) return true;
    }
    return false;
  }

  void Warn(const std::string& what) {
    std::string line = spec_.where + " (" + RoleName(spec_.role) + ")";
    if (!where_container_.empty()) line += ", " + where_container_;
    warnings_->push_back(line + ": " + what);
  }

  static std::vector<std::string> Targets(const YAML::Node& pod_template) {
    std::string list =
        Text(Get(Get(Get(pod_template, "metadata"), "annotations"),
                 kContainersAnnotation));
    std::vector<std::string> names;
    std::string name;
    for (size_t i = 0; i <= list.size(); ++i) {
      if (i == list.size() || list[i] == ',') {
        if (!name.empty()) names.push_back(name);
        name.clear();
      } else if (list[i] != ' ') {
        name += list[i];
      }
    }
    return names;
  }

  void ServiceAccount(YAML::Node pod) {
    // Never `have = ...`: assigning a yaml-cpp node writes through it.
    const YAML::Node have = Get(pod, "serviceAccountName").IsDefined()
                                ? Get(pod, "serviceAccountName")
                                : Get(pod, "serviceAccount");
    if (!have.IsDefined() || have.IsNull()) {
      InsertBefore(pod, "serviceAccountName", Str(settings_.service_account),
                   "^");
    } else if (Text(have) != settings_.service_account) {
      Warn("keeps serviceAccountName " + OneLine(have) +
           ": it needs list and watch on pods (images/k8s/role.yaml; "
           "--rbac writes them for " +
           settings_.service_account + ")");
    }
    if (Text(Get(pod, "automountServiceAccountToken")) == "false") {
      Warn(
          "keeps automountServiceAccountToken: false: the agent then has no "
          "token to read pods with (give it --token-file or a kubeconfig)");
    }
  }

  // The emptyDir; false when the pod already has a k8s-agent volume of
  // another kind (an image volume: delivery-image-volume.yaml), which needs
  // no copy.
  bool Volumes(YAML::Node pod) {
    YAML::Node volumes = EnsureSeq(pod, "volumes");
    if (!volumes.IsDefined()) {
      Warn("volumes is not a list; left as it is");
      return false;
    }
    YAML::Node have = FindByName(volumes, kVolumeName);
    if (!have.IsDefined()) {
      YAML::Node volume = Entry(kVolumeName);
      volume["emptyDir"] = YAML::Node(YAML::NodeType::Map);
      volumes.push_back(volume);
    } else if (!Get(have, "emptyDir").IsDefined()) {
      return false;
    }
    if (spec_.ssh_config && !FindByName(volumes, kSshConfigName).IsDefined()) {
      YAML::Node ref(YAML::NodeType::Map);
      ref["name"] = Str(kSshConfigName);
      YAML::Node volume = Entry(kSshConfigName);
      volume["configMap"] = ref;
      volumes.push_back(volume);
    }
    return true;
  }

  void InitContainer(YAML::Node pod) {
    YAML::Node inits = EnsureSeq(pod, "initContainers", "containers");
    if (!inits.IsDefined()) {
      Warn("initContainers is not a list; left as it is");
      return;
    }
    if (FindByName(inits, kVolumeName).IsDefined()) return;
    inits.push_back(DeliveryContainer(settings_));
  }

  void AddMount(YAML::Node mounts, const std::string& name,
                const std::string& path) {
    if (FindByName(mounts, name).IsDefined()) return;
    for (const YAML::Node& mount : mounts) {
      if (Text(Get(mount, "mountPath")) == path) {
        Warn("already mounts " + Text(Get(mount, "name")) + " at " + path +
             "; " + name + " not mounted there");
        return;
      }
    }
    mounts.push_back(Mount(name, path, true));
  }

  void Mounts(YAML::Node container) {
    YAML::Node mounts = EnsureSeq(container, "volumeMounts");
    if (!mounts.IsDefined()) {
      Warn("volumeMounts is not a list; left as it is");
      return;
    }
    AddMount(mounts, kVolumeName, settings_.dir);
    if (spec_.ssh_config) AddMount(mounts, kSshConfigName, kSshConfigDir);
  }

  void AddEnv(YAML::Node env, const YAML::Node& want) {
    const std::string name = Text(Get(want, "name"));
    YAML::Node have = FindByName(env, name);
    if (!have.IsDefined()) {
      env.push_back(want);
      return;
    }
    if (SameData(have, want)) return;
    const YAML::Node value = Get(have, "value").IsDefined()
                                 ? Get(have, "value")
                                 : Get(have, "valueFrom");
    Warn("keeps " + name + "=" + OneLine(value) + "; the agent's would be " +
         OneLine(Get(want,
                     Get(want, "value").IsDefined() ? "value" : "valueFrom")));
  }

  void LauncherEnv(YAML::Node container) {
    YAML::Node env = EnsureSeq(container, "env");
    if (!env.IsDefined()) {
      Warn("env is not a list; left as it is");
      return;
    }
    const std::string agent = settings_.dir + "/k8s-agent";
    // Open MPI 4 reads the first, Open MPI 5 (PRRTE) the second.
    AddEnv(env, EnvValue("OMPI_MCA_plm_rsh_agent", agent));
    AddEnv(env, EnvValue("PRTE_MCA_plm_ssh_agent", agent));
    if (!spec_.operator_hostfile.empty()) {
      AddEnv(env, EnvValue("PRTE_MCA_prte_default_hostfile",
                           spec_.operator_hostfile));
    }
    if (spec_.ssh_config) {
      AddEnv(env, EnvValue("K8S_AGENT_SSH_CONFIG",
                           std::string(kSshConfigDir) + "/ssh_config"));
    }
    AddEnv(env, EnvField("K8S_AGENT_NAMESPACE", "metadata.namespace"));
    // mpirun starts the agents in bursts here: one namespace list for all
    // of them (SharedLookupTransport), not one TLS connection each.
    AddEnv(env, EnvValue("K8S_AGENT_LOOKUP_CACHE", "5s"));
    if (!spec_.selector.empty()) {
      AddEnv(env, EnvValue("K8S_AGENT_SELECTOR", spec_.selector));
    }
  }

  void Sshd(YAML::Node container) {
    if (!settings_.sshd) return;
    const std::string program = settings_.dir + "/k8s-agent-sshd";
    YAML::Node command = Get(container, "command");
    if (command.IsDefined()) {
      if (IsSeq(command) && command.size() > 0 && Text(command[0]) == program) {
        return;
      }
      Warn("keeps its command " + OneLine(command) +
           " (its own sshd?); k8s-agent-sshd not set");
      return;
    }
    if (Get(container, "args").IsDefined()) {
      Warn(
          "has args but no command (its image's entrypoint runs them); "
          "k8s-agent-sshd not set");
      return;
    }
    YAML::Node run(YAML::NodeType::Sequence);
    run.SetStyle(YAML::EmitterStyle::Flow);
    run.push_back(Str(program));
    for (const std::string& arg : spec_.sshd_args) run.push_back(Str(arg));
    for (YAML::Node item : run) item.SetTag("!");
    container["command"] = run;
  }

  const TemplateSpec& spec_;
  const AgentSettings& settings_;
  std::vector<std::string>* warnings_;
  std::string where_container_;
};

}  // namespace

const char* RoleName(Role role) {
  return role == Role::kLauncher ? "launcher" : "worker";
}

void InjectPodTemplate(YAML::Node pod_template, const TemplateSpec& spec,
                       const AgentSettings& settings,
                       std::vector<std::string>* warnings) {
  TemplateInjector(spec, settings, warnings).Run(pod_template);
}

}  // namespace k8s_agent::inject
