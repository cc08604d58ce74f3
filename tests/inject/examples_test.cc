// SPDX-License-Identifier: Apache-2.0
// The injector against the project's own examples: the hand-written
// delivery examples are what it makes of the same manifests without the
// agent's parts, and every example survives a second run byte for byte.

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "plugin/inject/yaml_document.h"
#include "tests/inject/inject_test_util.h"

namespace k8s_agent::inject {
namespace {

const std::string kExamples = K8S_EXAMPLES_DIR;

// A sequence without the entries whose name is in `names`.
void DropNamed(YAML::Node map, const std::string& key,
               const std::set<std::string>& names) {
  if (!map[key].IsDefined() || !map[key].IsSequence()) return;
  YAML::Node kept(YAML::NodeType::Sequence);
  for (const YAML::Node& item : map[key]) {
    if (names.count(item["name"].as<std::string>("")) == 0) {
      kept.push_back(item);
    }
  }
  if (kept.size() == 0) {
    map.remove(key);
  } else {
    map[key] = kept;
  }
}

// The example as its user had it before the agent: every pod spec without
// the ServiceAccount, the delivery init container, volume and mounts, and
// the launcher's agent variables.
void StripAgent(YAML::Node node) {
  if (node.IsSequence()) {
    for (YAML::Node item : node) StripAgent(item);
    return;
  }
  if (!node.IsMap()) return;
  if (node["containers"].IsDefined()) {
    node.remove("serviceAccountName");
    DropNamed(node, "initContainers", {"k8s-agent"});
    DropNamed(node, "volumes", {"k8s-agent"});
    for (YAML::Node container : node["containers"]) {
      DropNamed(container, "volumeMounts", {"k8s-agent"});
      DropNamed(container, "env",
                {"OMPI_MCA_plm_rsh_agent", "PRTE_MCA_plm_ssh_agent",
                 "PRTE_MCA_prte_default_hostfile", "K8S_AGENT_NAMESPACE",
                 "K8S_AGENT_LOOKUP_CACHE", "K8S_AGENT_SELECTOR"});
    }
    return;
  }
  for (auto it = node.begin(); it != node.end(); ++it) StripAgent(it->second);
}

std::string Stripped(const std::string& file) {
  std::string out;
  for (YAML::Node doc : YAML::LoadAll(ReadTestFile(kExamples + "/" + file))) {
    StripAgent(doc);
    if (!out.empty()) out += "---\n";
    out += EmitDocument(doc);
  }
  return out;
}

TEST(ExamplesTest, DeliveryJobIsTheInjectedBareJobAndStatefulSet) {
  const std::string bare = Stripped("delivery-job.yaml");
  ASSERT_EQ(bare.find("/opt/k8s-agent"), std::string::npos) << bare;
  ASSERT_EQ(bare.find("serviceAccountName"), std::string::npos) << bare;
  InjectResult result = MustInject(bare);
  EXPECT_EQ(Canonical(result.yaml),
            Canonical(ReadTestFile(kExamples + "/delivery-job.yaml")));
  EXPECT_TRUE(result.warnings.empty()) << result.warnings[0];
}

TEST(ExamplesTest, MpiJobDeliveryIsTheInjectedBareMpiJob) {
  const std::string bare = Stripped("mpijob-delivery.yaml");
  InjectOptions options;
  options.rbac = true;  // The example has them: not written twice.
  InjectResult result = MustInject(bare, options);
  EXPECT_EQ(Canonical(result.yaml),
            Canonical(ReadTestFile(kExamples + "/mpijob-delivery.yaml")));
  EXPECT_TRUE(result.warnings.empty()) << result.warnings[0];
}

TEST(ExamplesTest, HandWrittenDeliveryExamplesGetNothingMore) {
  for (const char* file : {"delivery-job.yaml", "mpijob-delivery.yaml"}) {
    const std::string text = ReadTestFile(kExamples + "/" + file);
    InjectResult result = MustInject(text);
    EXPECT_EQ(Canonical(result.yaml), Canonical(text)) << file;
    EXPECT_TRUE(result.warnings.empty()) << file << ": " << result.warnings[0];
  }
}

TEST(ExamplesTest, EveryExampleTwiceIsByteIdentical) {
  InjectOptions all;
  all.rbac = true;
  all.agent.sshd = true;
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(kExamples)) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    const std::string text = ReadTestFile(entry.path().string());
    for (const InjectOptions& options : {InjectOptions{}, all}) {
      InjectResult once = MustInject(text, options);
      InjectResult twice = MustInject(once.yaml, options);
      EXPECT_EQ(once.yaml, twice.yaml) << entry.path();
      EXPECT_EQ(once.warnings.size(), twice.warnings.size()) << entry.path();
    }
  }
  EXPECT_GE(files, 9);
}

TEST(ExamplesTest, StockImageMpiJobWithSshdHasTheExamplesSshdAndConfigMap) {
  const std::string bare = Stripped("mpijob-stock-image.yaml");
  InjectOptions options;
  options.agent.sshd = true;
  InjectResult result = MustInject(bare, options);
  std::vector<YAML::Node> docs = Docs(result.yaml);
  YAML::Node worker = docs[0]["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
                          ["spec"]["containers"][0];
  // The example's own command was kept (it is the one --sshd writes).
  EXPECT_EQ(worker["command"][0].as<std::string>(),
            "/opt/k8s-agent/k8s-agent-sshd");
  int config_maps = 0;
  for (const YAML::Node& doc : docs) {
    if (doc["kind"].as<std::string>() == "ConfigMap") ++config_maps;
  }
  EXPECT_EQ(config_maps, 1);  // The example's; none added beside it.
}

}  // namespace
}  // namespace k8s_agent::inject
