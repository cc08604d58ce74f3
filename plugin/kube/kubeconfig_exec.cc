// SPDX-License-Identifier: Apache-2.0
// ParseExecStanza: users[].user.exec, checked before anything runs.

#include "plugin/kube/kubeconfig_exec.h"

#include <string>

#include <yaml-cpp/yaml.h>

#include "plugin/base/strings.h"

namespace k8s_agent::kube {
namespace {

std::string Scalar(const YAML::Node& node, const char* key) {
  if (!node.IsMap()) return "";
  YAML::Node v = node[key];
  if (!v || !v.IsScalar()) return "";
  return v.as<std::string>();
}

}  // namespace

StatusOr<ExecConfig> ParseExecStanza(const YAML::Node& node,
                                     const std::string& dir,
                                     const std::string& where) {
  ExecConfig exec;
  exec.where = where;
  const std::string prefix = where + ": exec ";
  if (!node.IsMap()) return InvalidArgumentError(prefix + "is not a map");
  exec.api_version = Scalar(node, "apiVersion");
  if (exec.api_version != kExecApiV1 && exec.api_version != kExecApiV1beta1) {
    return InvalidArgumentError(
        prefix + "apiVersion \"" + Printable(exec.api_version) +
        "\" is not supported (use " + kExecApiV1 + " or " + kExecApiV1beta1 +
        ", as kubectl 1.24+ does)");
  }
  exec.command = Scalar(node, "command");
  if (exec.command.empty()) {
    return InvalidArgumentError(prefix + "has no command");
  }
  // As kubectl: a relative path with a slash is the kubeconfig's; a bare
  // name is looked up in $PATH when it runs.
  if (exec.command[0] != '/' && exec.command.find('/') != std::string::npos) {
    exec.command = dir + "/" + exec.command;
  }
  if (YAML::Node args = node["args"]; args) {
    if (!args.IsSequence())
      return InvalidArgumentError(prefix + "args: not a list");
    for (const YAML::Node& a : args) {
      if (!a.IsScalar())
        return InvalidArgumentError(prefix + "args: not a string");
      exec.args.push_back(a.as<std::string>());
    }
  }
  if (YAML::Node env = node["env"]; env && !env.IsNull()) {
    if (!env.IsSequence())
      return InvalidArgumentError(prefix + "env: not a list");
    for (const YAML::Node& e : env) {
      std::string name = Scalar(e, "name");
      if (name.empty() || name.find('=') != std::string::npos) {
        return InvalidArgumentError(prefix +
                                    "env: an entry without a valid name");
      }
      exec.env.emplace_back(name, Scalar(e, "value"));
    }
  }
  exec.install_hint = Scalar(node, "installHint");
  exec.provide_cluster_info = Scalar(node, "provideClusterInfo") == "true";
  exec.interactive_mode = Scalar(node, "interactiveMode");
  if (exec.interactive_mode.empty()) {
    if (exec.api_version == kExecApiV1) {
      // client-go's validation refuses this too.
      return InvalidArgumentError(
          prefix +
          "interactiveMode must be specified to use exec "
          "authentication plugin " +
          kExecApiV1 + " (Never, for k8s-agent)");
    }
    exec.interactive_mode = "IfAvailable";
  }
  if (exec.interactive_mode != "Never" &&
      exec.interactive_mode != "IfAvailable" &&
      exec.interactive_mode != "Always") {
    return InvalidArgumentError(prefix + "interactiveMode \"" +
                                Printable(exec.interactive_mode) +
                                "\" is not Never, IfAvailable or Always");
  }
  return exec;
}

}  // namespace k8s_agent::kube
