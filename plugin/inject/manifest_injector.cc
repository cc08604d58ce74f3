// SPDX-License-Identifier: Apache-2.0
#include "plugin/inject/manifest_injector.h"

#include <set>
#include <string>
#include <utility>
#include <vector>

#include "plugin/inject/node_edit.h"
#include "plugin/inject/workloads.h"
#include "plugin/inject/yaml_document.h"

namespace k8s_agent::inject {
namespace {

struct Object {
  YAML::Node node;
  std::string where;  // "SOURCE: document N[ item I] (Kind/name)"
  Workload workload;
};

std::string Describe(const YAML::Node& object) {
  return Text(Get(object, "kind")) + "/" +
         Text(Get(Get(object, "metadata"), "name"));
}

YAML::Node Meta(const std::string& name, const std::string& ns) {
  YAML::Node meta(YAML::NodeType::Map);
  meta["name"] = Str(name);
  if (!ns.empty()) meta["namespace"] = Str(ns);
  return meta;
}

YAML::Node Head(const std::string& api, const std::string& kind,
                const std::string& name, const std::string& ns) {
  YAML::Node object(YAML::NodeType::Map);
  object["apiVersion"] = Str(api);
  object["kind"] = Str(kind);
  object["metadata"] = Meta(name, ns);
  return object;
}

// images/k8s/{serviceaccount,role,rolebinding}.yaml for `account`.
std::vector<YAML::Node> Rbac(const std::string& account,
                             const std::string& ns) {
  const std::string role = account + "-pods";
  YAML::Node sa = Head("v1", "ServiceAccount", account, ns);
  YAML::Node rule(YAML::NodeType::Map);
  rule["apiGroups"] = FlowList({""});
  rule["resources"] = FlowList({"pods"});
  rule["verbs"] = FlowList({"list", "watch"});
  YAML::Node rules(YAML::NodeType::Sequence);
  rules.push_back(rule);
  YAML::Node r = Head("rbac.authorization.k8s.io/v1", "Role", role, ns);
  r["rules"] = rules;
  YAML::Node binding =
      Head("rbac.authorization.k8s.io/v1", "RoleBinding", role, ns);
  YAML::Node ref(YAML::NodeType::Map);
  ref["apiGroup"] = Str("rbac.authorization.k8s.io");
  ref["kind"] = Str("Role");
  ref["name"] = Str(role);
  binding["roleRef"] = ref;
  YAML::Node subject(YAML::NodeType::Map);
  subject["kind"] = Str("ServiceAccount");
  subject["name"] = Str(account);
  YAML::Node subjects(YAML::NodeType::Sequence);
  subjects.push_back(subject);
  binding["subjects"] = subjects;
  return {sa, r, binding};
}

// mpijob-stock-image.yaml's ConfigMap: operators' Secrets hold no
// known_hosts, so the agent checks no host key (as their images' ssh does).
YAML::Node SshConfigMap(const std::string& ns) {
  YAML::Node map = Head("v1", "ConfigMap", kSshConfigName, ns);
  YAML::Node text(
      "Host *\n  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n");
  text.SetTag("!");
  YAML::Node data(YAML::NodeType::Map);
  data["ssh_config"] = text;
  map["data"] = data;
  return map;
}

class Run {
 public:
  explicit Run(const InjectOptions& options) : options_(options) {}

  Status Read(const Source& source) {
    StatusOr<std::vector<YAML::Node>> docs =
        ParseDocuments(source.text, source.name);
    if (!docs.ok()) return docs.status();
    for (size_t i = 0; i < docs->size(); ++i) {
      YAML::Node doc = (*docs)[i];
      if (!doc.IsDefined() || doc.IsNull()) continue;
      const std::string where =
          source.name + ": document " + std::to_string(i + 1);
      if (!IsMap(doc) || !Get(doc, "kind").IsDefined()) {
        return InvalidArgumentError(
            where +
            ": not a Kubernetes object (a map with apiVersion and "
            "kind); fix the manifest");
      }
      docs_.push_back(doc);
      if (Text(Get(doc, "kind")) == "List" && IsSeq(Get(doc, "items"))) {
        YAML::Node items = Get(doc, "items");
        for (size_t j = 0; j < items.size(); ++j) {
          YAML::Node item = items[j];
          if (!IsMap(item)) continue;
          Add(item, where + " item " + std::to_string(j + 1));
        }
      } else {
        Add(doc, where);
      }
    }
    return OkStatus();
  }

  InjectResult Finish() {
    InjectResult result;
    // A Job's launcher and a StatefulSet of workers in one input: the
    // launcher's lookups are narrowed to the StatefulSet's pods.
    std::string selector;
    int sets = 0;
    for (const Object& object : objects_) {
      if (!object.workload.worker_selector.empty()) {
        selector = object.workload.worker_selector;
        ++sets;
      }
    }
    bool ssh_config = false;
    for (Object& object : objects_) {
      std::vector<std::string> notes = object.workload.warnings;
      if (!object.workload.known) {
        notes.push_back("kind " + Text(Get(object.node, "kind")) + " (" +
                        Text(Get(object.node, "apiVersion")) +
                        ") is not one k8s-agent inject knows; left as it is");
      }
      for (PodTemplateRef& ref : object.workload.templates) {
        if (ref.plain_launcher && sets == 1) ref.spec.selector = selector;
        ssh_config = ssh_config || ref.spec.ssh_config;
        InjectPodTemplate(ref.node, ref.spec, options_.agent, &notes);
      }
      for (const std::string& note : notes) {
        result.warnings.push_back(object.where + ": " + note);
      }
    }
    std::vector<YAML::Node> added;
    if (options_.rbac) added = Rbac(options_.agent.service_account, ns_);
    if (ssh_config) added.push_back(SshConfigMap(ns_));
    std::string text;
    for (const YAML::Node& doc : docs_) Append(&text, doc);
    for (const YAML::Node& doc : added) {
      if (!Has(doc)) Append(&text, doc);
    }
    result.yaml = std::move(text);
    return result;
  }

 private:
  void Add(const YAML::Node& object, const std::string& where) {
    const std::string name = Describe(object);
    const std::string ns = Text(Get(Get(object, "metadata"), "namespace"));
    if (!ns.empty()) {
      namespaces_.insert(ns);
      ns_ = namespaces_.size() == 1 ? ns : "";
    }
    present_.insert(Text(Get(object, "kind")) + "/" +
                    Text(Get(Get(object, "metadata"), "name")));
    objects_.push_back({object, where + " (" + name + ")",
                        FindWorkload(object, options_.agent)});
  }

  bool Has(const YAML::Node& doc) const {
    return present_.count(Describe(doc)) > 0;
  }

  static void Append(std::string* text, const YAML::Node& doc) {
    if (!text->empty()) *text += "---\n";
    *text += EmitDocument(doc);
  }

  const InjectOptions& options_;
  std::vector<YAML::Node> docs_;
  std::vector<Object> objects_;
  std::set<std::string> present_;
  std::set<std::string> namespaces_;
  std::string ns_;
};

}  // namespace

StatusOr<InjectResult> InjectManifests(const std::vector<Source>& sources,
                                       const InjectOptions& options) {
  Run run(options);
  for (const Source& source : sources) {
    if (Status read = run.Read(source); !read.ok()) return read;
  }
  return run.Finish();
}

}  // namespace k8s_agent::inject
