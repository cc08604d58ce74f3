// SPDX-License-Identifier: Apache-2.0
// Shared by the inject tests: running the injector on text, and reading
// its output back.

#ifndef K8S_AGENT_TESTS_INJECT_INJECT_TEST_UTIL_H_
#define K8S_AGENT_TESTS_INJECT_INJECT_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "plugin/inject/manifest_injector.h"

namespace k8s_agent::inject {

inline std::string ReadTestFile(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline InjectResult MustInject(const std::string& text,
                               const InjectOptions& options = {},
                               const std::string& name = "in.yaml") {
  StatusOr<InjectResult> result = InjectManifests({{name, text}}, options);
  EXPECT_TRUE(result.ok()) << result.status().message();
  return result.ok() ? *result : InjectResult{};
}

inline std::vector<YAML::Node> Docs(const std::string& text) {
  return YAML::LoadAll(text);
}

// The data as kubectl apply sees it: map keys sorted, lists of named
// entries (containers, env, volumes, mounts) sorted by name, scalars by
// text (quoting aside).
inline std::string Canonical(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Map: {
      std::vector<std::pair<std::string, std::string>> pairs;
      for (auto it = node.begin(); it != node.end(); ++it) {
        pairs.emplace_back(it->first.Scalar(), Canonical(it->second));
      }
      std::sort(pairs.begin(), pairs.end());
      std::string out = "{";
      for (const auto& [k, v] : pairs) out += k + ":" + v + ",";
      return out + "}";
    }
    case YAML::NodeType::Sequence: {
      std::vector<std::string> items;
      bool named = node.size() > 0;
      for (const YAML::Node& item : node) {
        named = named && item.IsMap() && item["name"].IsDefined();
        items.push_back(Canonical(item));
      }
      if (named) std::sort(items.begin(), items.end());
      std::string out = "[";
      for (const std::string& item : items) out += item + ",";
      return out + "]";
    }
    case YAML::NodeType::Scalar:
      return "'" + node.Scalar() + "'";
    default:
      return "~";
  }
}

inline std::string Canonical(const std::string& text) {
  std::string out;
  for (const YAML::Node& doc : Docs(text)) {
    if (doc.IsNull()) continue;
    out += Canonical(doc) + "\n";
  }
  return out;
}

inline bool AnyContains(const std::vector<std::string>& lines,
                        const std::string& part) {
  for (const std::string& line : lines) {
    if (line.find(part) != std::string::npos) return true;
  }
  return false;
}

}  // namespace k8s_agent::inject

#endif  // K8S_AGENT_TESTS_INJECT_INJECT_TEST_UTIL_H_
