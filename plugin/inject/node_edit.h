// SPDX-License-Identifier: Apache-2.0
// Small edits on yaml-cpp node trees that never create what they only
// look at: yaml-cpp's non-const operator[] turns a null node into a map,
// so every lookup here goes through a const node.

#ifndef K8S_AGENT_PLUGIN_INJECT_NODE_EDIT_H_
#define K8S_AGENT_PLUGIN_INJECT_NODE_EDIT_H_

#include <yaml-cpp/yaml.h>

#include <string>

namespace k8s_agent::inject {

/// node[key] when node is a map holding key, else an undefined node.
YAML::Node Get(const YAML::Node& node, const std::string& key);
bool IsMap(const YAML::Node& node);
bool IsSeq(const YAML::Node& node);
/// The scalar's text, or "" for anything else.
std::string Text(const YAML::Node& node);

/// The first map in `seq` whose "name" is `name`, else undefined.
YAML::Node FindByName(const YAML::Node& seq, const std::string& name);

/// map[key] as a sequence (or map), made empty when absent or null. Before
/// `before` when that key exists, else at the end. Undefined when map[key]
/// exists as something else (the caller says so).
YAML::Node EnsureSeq(YAML::Node map, const std::string& key,
                     const std::string& before = "");
YAML::Node EnsureMap(YAML::Node map, const std::string& key,
                     const std::string& before = "");

/// Adds key: value to `map` before the key `before` (at the end when it is
/// absent, at the front when `before` is "^"), keeping every other pair and
/// its order. `map` must not hold `key`.
void InsertBefore(YAML::Node map, const std::string& key,
                  const YAML::Node& value, const std::string& before);

/// A string scalar of ours, quoted when plain YAML would read it as a
/// number, boolean or null ("22", "true").
YAML::Node Str(const std::string& value);
/// A flow sequence of string scalars: ["a", "b"].
YAML::Node FlowList(std::initializer_list<std::string> items,
                    bool quoted = true);

/// The same data: types, scalar texts (not their quoting), maps as sets of
/// pairs, sequences in order.
bool SameData(const YAML::Node& a, const YAML::Node& b);

}  // namespace k8s_agent::inject

#endif  // K8S_AGENT_PLUGIN_INJECT_NODE_EDIT_H_
