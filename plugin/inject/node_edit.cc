// SPDX-License-Identifier: Apache-2.0
#include "plugin/inject/node_edit.h"

#include <cctype>
#include <string>

namespace k8s_agent::inject {
namespace {

// What a plain scalar would not read back as a string in YAML 1.1 or 1.2
// (kubectl's sigs.k8s.io/yaml follows 1.1 for booleans: yes/no/on/off).
bool NeedsQuotes(const std::string& s) {
  if (s.empty()) return true;
  const auto first = static_cast<unsigned char>(s[0]);
  if (std::isdigit(first) != 0 || s[0] == '+' || s[0] == '.') return true;
  if (s[0] == '-' && s.size() > 1 &&
      std::isdigit(static_cast<unsigned char>(s[1])) != 0) {
    return true;
  }
  std::string lower;
  for (char c : s) {
    lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  for (const char* word :
       {"true", "false", "yes", "no", "on", "off", "y", "n", "null", "~"}) {
    if (lower == word) return true;
  }
  return false;
}

YAML::Node Ensure(YAML::Node map, const std::string& key,
                  const std::string& before, YAML::NodeType::value type) {
  YAML::Node have = Get(map, key);
  if (have.IsDefined() && have.Type() == type) return have;
  if (have.IsDefined() && !have.IsNull())
    return YAML::Node(YAML::NodeType::Undefined);
  YAML::Node made(type);
  if (have.IsDefined()) {
    map[key] = made;  // `key:` with no value: the same place, now filled.
  } else {
    InsertBefore(map, key, made, before);
  }
  return made;
}

}  // namespace

YAML::Node Get(const YAML::Node& node, const std::string& key) {
  if (!node.IsDefined() || !node.IsMap()) {
    return YAML::Node(YAML::NodeType::Undefined);
  }
  const YAML::Node& constant = node;
  YAML::Node value = constant[key];
  return value;
}

bool IsMap(const YAML::Node& node) { return node.IsDefined() && node.IsMap(); }
bool IsSeq(const YAML::Node& node) {
  return node.IsDefined() && node.IsSequence();
}
std::string Text(const YAML::Node& node) {
  return node.IsDefined() && node.IsScalar() ? node.Scalar() : "";
}

YAML::Node FindByName(const YAML::Node& seq, const std::string& name) {
  if (IsSeq(seq)) {
    for (const YAML::Node& item : seq) {
      if (Text(Get(item, "name")) == name) return item;
    }
  }
  return YAML::Node(YAML::NodeType::Undefined);
}

YAML::Node EnsureSeq(YAML::Node map, const std::string& key,
                     const std::string& before) {
  return Ensure(map, key, before, YAML::NodeType::Sequence);
}
YAML::Node EnsureMap(YAML::Node map, const std::string& key,
                     const std::string& before) {
  return Ensure(map, key, before, YAML::NodeType::Map);
}

void InsertBefore(YAML::Node map, const std::string& key,
                  const YAML::Node& value, const std::string& before) {
  if (before.empty() || (before != "^" && !Get(map, before).IsDefined())) {
    map[key] = value;
    return;
  }
  // yaml-cpp appends to maps only: rebuild it in order. Assigning to `map`
  // rebinds the node itself, so its parent sees the new one.
  YAML::Node rebuilt(YAML::NodeType::Map);
  rebuilt.SetStyle(map.Style());
  bool done = false;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!done && (before == "^" || Text(it->first) == before)) {
      rebuilt[key] = value;
      done = true;
    }
    rebuilt.force_insert(it->first, it->second);
  }
  if (!done) rebuilt[key] = value;
  map = rebuilt;
}

YAML::Node Str(const std::string& value) {
  YAML::Node node(value);
  if (NeedsQuotes(value)) node.SetTag("!");
  return node;
}

YAML::Node FlowList(std::initializer_list<std::string> items, bool quoted) {
  YAML::Node list(YAML::NodeType::Sequence);
  list.SetStyle(YAML::EmitterStyle::Flow);
  for (const std::string& item : items) {
    YAML::Node node = Str(item);
    if (quoted) node.SetTag("!");
    list.push_back(node);
  }
  return list;
}

bool SameData(const YAML::Node& a, const YAML::Node& b) {
  if (a.Type() != b.Type()) return false;
  switch (a.Type()) {
    case YAML::NodeType::Scalar:
      return a.Scalar() == b.Scalar();
    case YAML::NodeType::Sequence: {
      if (a.size() != b.size()) return false;
      for (size_t i = 0; i < a.size(); ++i) {
        if (!SameData(a[i], b[i])) return false;
      }
      return true;
    }
    case YAML::NodeType::Map: {
      if (a.size() != b.size()) return false;
      for (auto it = a.begin(); it != a.end(); ++it) {
        YAML::Node other = Get(b, Text(it->first));
        if (!other.IsDefined() || !SameData(it->second, other)) return false;
      }
      return true;
    }
    default:
      return true;
  }
}

}  // namespace k8s_agent::inject
