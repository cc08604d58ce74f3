// SPDX-License-Identifier: Apache-2.0
// Reading and writing a stream of YAML documents with yaml-cpp, so that a
// document written and read again is the same node tree and written again
// the same bytes (k8s-agent inject is idempotent through it).

#ifndef K8S_AGENT_PLUGIN_INJECT_YAML_DOCUMENT_H_
#define K8S_AGENT_PLUGIN_INJECT_YAML_DOCUMENT_H_

#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "plugin/base/status.h"

namespace k8s_agent::inject {

/// Every document of `text`, in order; an empty one (a lone `---`, only
/// comments) is a null node, so indices stay those of the input. A syntax
/// error names `source`, the
/// 1-based document index and yaml-cpp's line and column.
StatusOr<std::vector<YAML::Node>> ParseDocuments(const std::string& text,
                                                 const std::string& source);

/// One document as block YAML, ending in a newline. Map order, flow style
/// and quoting are kept: a scalar that was quoted is written quoted (as a
/// literal block when it is multi-line text), so `value: "1"` stays a
/// string; a plain one stays plain. Comments and anchors are not kept
/// (yaml-cpp drops them on reading).
std::string EmitDocument(const YAML::Node& node);

}  // namespace k8s_agent::inject

#endif  // K8S_AGENT_PLUGIN_INJECT_YAML_DOCUMENT_H_
