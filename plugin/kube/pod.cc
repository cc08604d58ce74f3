// SPDX-License-Identifier: Apache-2.0
// Pod and PodList decoding: type-checked field by field, never throws.

#include "plugin/kube/pod.h"

#include <nlohmann/json.hpp>
#include <set>

#include "plugin/base/strings.h"
#include "plugin/kube/json_depth.h"
#include "plugin/kube/pod_json.h"

namespace k8s_agent::kube {
namespace {

using nlohmann::json;

// Field access that treats absent and null alike and reports a wrong type
// as kInternal naming the field, e.g. "pod status.podIP: expected string".
class Fields {
 public:
  Fields(const json& object, std::string path)
      : object_(object), path_(std::move(path)) {}

  // Returns nullptr when absent or null.
  const json* Find(const char* key) const {
    if (!object_.is_object()) return nullptr;
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return nullptr;
    return &*it;
  }

  Status String(const char* key, std::string* out) const {
    const json* v = Find(key);
    if (v == nullptr) return OkStatus();
    if (!v->is_string()) return WrongType(key, "string");
    *out = v->get<std::string>();
    return OkStatus();
  }
  Status Bool(const char* key, bool* out) const {
    const json* v = Find(key);
    if (v == nullptr) return OkStatus();
    if (!v->is_boolean()) return WrongType(key, "boolean");
    *out = v->get<bool>();
    return OkStatus();
  }
  Status Int(const char* key, int* out) const {
    const json* v = Find(key);
    if (v == nullptr) return OkStatus();
    if (!v->is_number_integer()) return WrongType(key, "integer");
    *out = static_cast<int>(v->get<int64_t>());
    return OkStatus();
  }
  // Sub-object; an absent one yields an empty object.
  StatusOr<Fields> Object(const char* key) const {
    const json* v = Find(key);
    if (v == nullptr) return Fields(Empty(), Path(key));
    if (!v->is_object()) return WrongType(key, "object");
    return Fields(*v, Path(key));
  }
  StatusOr<const json*> Array(const char* key) const {
    const json* v = Find(key);
    if (v == nullptr) return static_cast<const json*>(&EmptyArray());
    if (!v->is_array()) return WrongType(key, "array");
    return v;
  }

  std::string Path(const std::string& key) const {
    return path_.empty() ? key : path_ + "." + key;
  }
  Status WrongType(const std::string& key, const char* expected) const {
    return InternalError("pod " + Path(key) + ": expected " + expected);
  }
  const json& value() const { return object_; }

 private:
  static const json& Empty() {
    static const json kEmpty = json::object();
    return kEmpty;
  }
  static const json& EmptyArray() {
    static const json kEmpty = json::array();
    return kEmpty;
  }

  const json& object_;
  std::string path_;
};

Status ParseContainer(const Fields& f, bool init, ContainerStatus* c) {
  c->init = init;
  K8S_RETURN_IF_ERROR(f.String("name", &c->name));
  K8S_RETURN_IF_ERROR(f.Bool("ready", &c->ready));
  K8S_RETURN_IF_ERROR(f.Bool("started", &c->started));
  K8S_RETURN_IF_ERROR(f.Int("restartCount", &c->restart_count));
  K8S_ASSIGN_OR_RETURN(Fields state, f.Object("state"));
  K8S_ASSIGN_OR_RETURN(Fields waiting, state.Object("waiting"));
  K8S_RETURN_IF_ERROR(waiting.String("reason", &c->waiting_reason));
  K8S_RETURN_IF_ERROR(waiting.String("message", &c->waiting_message));
  K8S_ASSIGN_OR_RETURN(Fields running, state.Object("running"));
  K8S_RETURN_IF_ERROR(running.String("startedAt", &c->started_at));
  K8S_ASSIGN_OR_RETURN(Fields terminated, state.Object("terminated"));
  K8S_ASSIGN_OR_RETURN(Fields last, f.Object("lastState"));
  K8S_ASSIGN_OR_RETURN(Fields last_terminated, last.Object("terminated"));
  // In CrashLoopBackOff the container waits; why it died is in lastState.
  const Fields& t = terminated.value().empty() ? last_terminated : terminated;
  K8S_RETURN_IF_ERROR(t.String("reason", &c->terminated_reason));
  K8S_RETURN_IF_ERROR(t.Int("exitCode", &c->terminated_exit_code));
  return OkStatus();
}

Status ParseContainers(const Fields& status, const char* key, bool init,
                       const std::set<std::string>& sidecars,
                       std::vector<ContainerStatus>* out) {
  K8S_ASSIGN_OR_RETURN(const json* list, status.Array(key));
  for (size_t i = 0; i < list->size(); ++i) {
    const json& item = (*list)[i];
    std::string path = status.Path(key) + "[" + std::to_string(i) + "]";
    if (!item.is_object()) {
      return InternalError("pod " + path + ": expected object");
    }
    ContainerStatus c;
    K8S_RETURN_IF_ERROR(ParseContainer(Fields(item, path), init, &c));
    c.sidecar = init && sidecars.count(c.name) > 0;
    out->push_back(std::move(c));
  }
  return OkStatus();
}

// Quantities are strings on the wire; a hand-written object may hold a
// bare number, which means the same.
Status ParseQuantities(const Fields& resources, const char* key,
                       std::map<std::string, std::string>* out) {
  K8S_ASSIGN_OR_RETURN(Fields map, resources.Object(key));
  for (const auto& [name, value] : map.value().items()) {
    if (value.is_string()) {
      (*out)[name] = value.get<std::string>();
    } else if (value.is_number_integer()) {
      (*out)[name] = std::to_string(value.get<int64_t>());
    } else if (!value.is_null()) {
      return map.WrongType(name, "quantity string");
    }
  }
  return OkStatus();
}

Status ParseSpecContainers(const Fields& spec, Pod* pod) {
  K8S_ASSIGN_OR_RETURN(const json* list, spec.Array("containers"));
  for (size_t i = 0; i < list->size(); ++i) {
    std::string path = spec.Path("containers") + "[" + std::to_string(i) + "]";
    Fields f((*list)[i], path);
    if (!f.value().is_object()) {
      return InternalError("pod " + path + ": expected object");
    }
    ContainerSpec c;
    K8S_RETURN_IF_ERROR(f.String("name", &c.name));
    K8S_ASSIGN_OR_RETURN(Fields resources, f.Object("resources"));
    K8S_RETURN_IF_ERROR(ParseQuantities(resources, "limits", &c.limits));
    K8S_RETURN_IF_ERROR(ParseQuantities(resources, "requests", &c.requests));
    pod->spec_containers.push_back(std::move(c));
  }
  return OkStatus();
}

// spec.initContainers with restartPolicy Always: the native sidecars, whose
// statuses are among initContainerStatuses.
Status ParseSidecars(const Fields& spec, std::set<std::string>* out) {
  K8S_ASSIGN_OR_RETURN(const json* list, spec.Array("initContainers"));
  for (size_t i = 0; i < list->size(); ++i) {
    std::string path =
        spec.Path("initContainers") + "[" + std::to_string(i) + "]";
    Fields f((*list)[i], path);
    if (!f.value().is_object()) {
      return InternalError("pod " + path + ": expected object");
    }
    std::string name, restart;
    K8S_RETURN_IF_ERROR(f.String("name", &name));
    K8S_RETURN_IF_ERROR(f.String("restartPolicy", &restart));
    if (restart == "Always") out->insert(name);
  }
  return OkStatus();
}

Status ParseConditions(const Fields& status, Pod* pod) {
  K8S_ASSIGN_OR_RETURN(const json* list, status.Array("conditions"));
  for (size_t i = 0; i < list->size(); ++i) {
    const json& item = (*list)[i];
    std::string path =
        status.Path("conditions") + "[" + std::to_string(i) + "]";
    if (!item.is_object()) {
      return InternalError("pod " + path + ": expected object");
    }
    Fields f(item, path);
    std::string type, value, reason, message, since;
    K8S_RETURN_IF_ERROR(f.String("type", &type));
    K8S_RETURN_IF_ERROR(f.String("lastTransitionTime", &since));
    K8S_RETURN_IF_ERROR(f.String("status", &value));
    K8S_RETURN_IF_ERROR(f.String("reason", &reason));
    K8S_RETURN_IF_ERROR(f.String("message", &message));
    if (value == "True" && !type.empty() && !since.empty()) {
      pod->true_since[type] = since;
    }
    if (type == "Ready") {
      pod->ready = value == "True";
    } else if (type == "PodScheduled" && value == "False") {
      pod->unschedulable_reason = reason;
      pod->unschedulable_message = message;
    }
  }
  return OkStatus();
}

Status ParsePodIps(const Fields& status, Pod* pod) {
  K8S_ASSIGN_OR_RETURN(const json* list, status.Array("podIPs"));
  for (size_t i = 0; i < list->size(); ++i) {
    std::string path = status.Path("podIPs") + "[" + std::to_string(i) + "]";
    Fields f((*list)[i], path);
    if (!f.value().is_object()) {
      return InternalError("pod " + path + ": expected object");
    }
    std::string ip;
    K8S_RETURN_IF_ERROR(f.String("ip", &ip));
    if (!ip.empty()) pod->pod_ips.push_back(ip);
  }
  if (!pod->pod_ip.empty() && pod->pod_ips.empty()) {
    pod->pod_ips.push_back(pod->pod_ip);
  }
  return OkStatus();
}

// metadata.ownerReferences: the one entry with controller=true, if any,
// as "Kind/name". Only a controller recreates a deleted pod.
Status ParseController(const Fields& meta, Pod* pod) {
  K8S_ASSIGN_OR_RETURN(const json* refs, meta.Array("ownerReferences"));
  for (size_t i = 0; i < refs->size(); ++i) {
    std::string path =
        meta.Path("ownerReferences") + "[" + std::to_string(i) + "]";
    if (!(*refs)[i].is_object()) {
      return InternalError("pod " + path + ": expected object");
    }
    Fields ref((*refs)[i], path);
    bool controller = false;
    std::string kind;
    std::string name;
    K8S_RETURN_IF_ERROR(ref.Bool("controller", &controller));
    K8S_RETURN_IF_ERROR(ref.String("kind", &kind));
    K8S_RETURN_IF_ERROR(ref.String("name", &name));
    if (controller) {
      pod->controller = kind + "/" + name;
      break;
    }
  }
  return OkStatus();
}

}  // namespace

StatusOr<Pod> PodFromJsonValue(const json& object, const std::string& where) {
  if (!object.is_object()) {
    return InternalError(where + ": pod is not a JSON object");
  }
  Pod pod;
  Fields root(object, "");
  K8S_ASSIGN_OR_RETURN(Fields meta, root.Object("metadata"));
  K8S_RETURN_IF_ERROR(meta.String("name", &pod.name));
  K8S_RETURN_IF_ERROR(meta.String("namespace", &pod.ns));
  K8S_RETURN_IF_ERROR(meta.String("uid", &pod.uid));
  K8S_RETURN_IF_ERROR(meta.String("resourceVersion", &pod.resource_version));
  K8S_RETURN_IF_ERROR(
      meta.String("creationTimestamp", &pod.creation_timestamp));
  std::string deletion;
  K8S_RETURN_IF_ERROR(meta.String("deletionTimestamp", &deletion));
  pod.deleting = !deletion.empty();
  K8S_RETURN_IF_ERROR(ParseController(meta, &pod));
  K8S_ASSIGN_OR_RETURN(Fields labels, meta.Object("labels"));
  for (const auto& [key, value] : labels.value().items()) {
    if (!value.is_string()) return labels.WrongType(key, "string");
    pod.labels[key] = value.get<std::string>();
  }

  K8S_ASSIGN_OR_RETURN(Fields spec, root.Object("spec"));
  K8S_RETURN_IF_ERROR(spec.String("hostname", &pod.hostname));
  K8S_RETURN_IF_ERROR(spec.String("subdomain", &pod.subdomain));
  K8S_RETURN_IF_ERROR(spec.String("nodeName", &pod.node_name));
  K8S_RETURN_IF_ERROR(ParseSpecContainers(spec, &pod));
  std::set<std::string> sidecars;
  K8S_RETURN_IF_ERROR(ParseSidecars(spec, &sidecars));

  K8S_ASSIGN_OR_RETURN(Fields status, root.Object("status"));
  K8S_RETURN_IF_ERROR(status.String("phase", &pod.phase));
  K8S_RETURN_IF_ERROR(status.String("reason", &pod.reason));
  K8S_RETURN_IF_ERROR(status.String("message", &pod.message));
  K8S_RETURN_IF_ERROR(status.String("podIP", &pod.pod_ip));
  K8S_RETURN_IF_ERROR(ParsePodIps(status, &pod));
  K8S_RETURN_IF_ERROR(ParseConditions(status, &pod));
  K8S_RETURN_IF_ERROR(ParseContainers(status, "initContainerStatuses", true,
                                      sidecars, &pod.containers));
  K8S_RETURN_IF_ERROR(
      ParseContainers(status, "containerStatuses", false, {}, &pod.containers));
  return pod;
}

StatusOr<Pod> Pod::FromJson(std::string_view json_text) {
  K8S_RETURN_IF_ERROR(CheckJsonDepth(json_text).WithContext("pod JSON"));
  json value = json::parse(json_text, nullptr, false);
  if (value.is_discarded()) {
    return InternalError("malformed pod JSON: \"" + Printable(json_text, 120) +
                         "\"");
  }
  auto pod = PodFromJsonValue(value, "pod");
  if (!pod.ok()) return pod.status();
  return pod;
}

StatusOr<PodList> PodList::FromJson(std::string_view json_text) {
  K8S_RETURN_IF_ERROR(CheckJsonDepth(json_text).WithContext("pod list JSON"));
  json value = json::parse(json_text, nullptr, false);
  if (value.is_discarded() || !value.is_object()) {
    return InternalError("malformed pod list JSON: \"" +
                         Printable(json_text, 120) + "\"");
  }
  PodList list;
  Fields root(value, "");
  K8S_ASSIGN_OR_RETURN(Fields meta, root.Object("metadata"));
  K8S_RETURN_IF_ERROR(meta.String("resourceVersion", &list.resource_version));
  K8S_RETURN_IF_ERROR(meta.String("continue", &list.continue_token));
  K8S_ASSIGN_OR_RETURN(const json* items, root.Array("items"));
  for (size_t i = 0; i < items->size(); ++i) {
    auto pod =
        PodFromJsonValue((*items)[i], "items[" + std::to_string(i) + "]");
    if (!pod.ok()) {
      return pod.status().WithContext("pod list items[" + std::to_string(i) +
                                      "]");
    }
    list.items.push_back(std::move(pod).value());
  }
  return list;
}

std::string PhaseSummary(const Pod& pod) {
  std::string s = pod.phase.empty() ? "Unknown" : pod.phase;
  if (!pod.reason.empty()) s += ": " + pod.reason;
  for (const ContainerStatus& c : pod.containers) {
    if (!c.waiting_reason.empty()) {
      s += ": " + c.waiting_reason;
      break;
    }
  }
  if (!pod.unschedulable_reason.empty()) s += ": " + pod.unschedulable_reason;
  return s;
}

}  // namespace k8s_agent::kube
