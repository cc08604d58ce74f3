// SPDX-License-Identifier: Apache-2.0
// The operator examples' launcher env as the operators leave it: the
// agent Open MPI 4 and 5 start gets the same host-key settings, and Open
// MPI 5 the agent and the hostfile, whatever the operator wrote.
//
// mpi-operator v2beta1's controller appends its Open MPI variables after
// the user's env (container.Env = append(container.Env, ompiEnvVars...)
// in mpi_job_controller.go; the last duplicate wins), Kubeflow Trainer's
// MPI plugin upserts them by name. Both set OMPI_MCA_plm_rsh_args to
// "-o ConnectionAttempts=10", so a setting kept there is lost.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "launcher/options.h"
#include "plugin/base/strings.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent {
namespace {

using Env = std::vector<std::pair<std::string, std::string>>;

// What both operators set for Open MPI (mpi-operator v2beta1, Trainer v2).
const Env kOperatorEnv = {
    {"OMPI_MCA_orte_keep_fqdn_hostnames", "true"},
    {"OMPI_MCA_orte_default_hostfile", "/etc/mpi/hostfile"},
    {"OMPI_MCA_plm_rsh_args", "-o ConnectionAttempts=10"},
    {"OMPI_MCA_orte_set_default_slots", "1"},
};

Env MpiOperator(Env env) {
  env.insert(env.end(), kOperatorEnv.begin(), kOperatorEnv.end());
  return env;
}

Env Trainer(Env env) {
  for (const auto& [name, value] : kOperatorEnv) {
    bool found = false;
    for (auto& e : env) {
      if (e.first == name) {
        e.second = value;
        found = true;
      }
    }
    if (!found) env.emplace_back(name, value);
  }
  return env;
}

// As the kubelet builds the environment: the last duplicate wins.
std::map<std::string, std::string> Resolve(const Env& env) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : env) out[name] = value;
  return out;
}

// The launcher container of an example: its env (a valueFrom reads as
// "default", the namespace it names) and the files its ConfigMap volumes
// put in it (mountPath/key).
struct Launcher {
  Env env;
  std::map<std::string, std::string> files;
};

YAML::Node LauncherPodSpec(const YAML::Node& doc) {
  const std::string kind = doc["kind"].as<std::string>("");
  if (kind == "MPIJob") {
    return doc["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"];
  }
  if (kind == "ClusterTrainingRuntime" || kind == "TrainingRuntime") {
    for (const YAML::Node& job :
         doc["spec"]["template"]["spec"]["replicatedJobs"]) {
      if (job["name"].as<std::string>("") == "launcher") {
        return job["template"]["spec"]["template"]["spec"];
      }
    }
  }
  return YAML::Node();
}

Launcher LoadLauncher(const std::string& path) {
  Launcher out;
  std::map<std::string, YAML::Node> config_maps;
  YAML::Node pod;
  for (const YAML::Node& doc : YAML::LoadAllFromFile(path)) {
    if (!doc.IsMap()) continue;
    if (doc["kind"].as<std::string>("") == "ConfigMap") {
      config_maps[doc["metadata"]["name"].as<std::string>()] = doc["data"];
    }
    YAML::Node spec = LauncherPodSpec(doc);
    if (spec.IsDefined() && !spec.IsNull()) pod = spec;
  }
  EXPECT_TRUE(pod.IsDefined()) << path << ": no launcher pod template";
  if (!pod.IsDefined()) return out;
  const YAML::Node container = pod["containers"][0];
  for (const YAML::Node& e : container["env"]) {
    out.env.emplace_back(e["name"].as<std::string>(),
                         e["value"] ? e["value"].as<std::string>() : "default");
  }
  std::map<std::string, std::string> volume_config_map;
  for (const YAML::Node& v : pod["volumes"]) {
    if (v["configMap"]) {
      volume_config_map[v["name"].as<std::string>()] =
          v["configMap"]["name"].as<std::string>();
    }
  }
  for (const YAML::Node& m : container["volumeMounts"]) {
    auto cm = volume_config_map.find(m["name"].as<std::string>());
    if (cm == volume_config_map.end()) continue;
    for (const auto& kv : config_maps[cm->second]) {
      out.files[m["mountPath"].as<std::string>() + "/" +
                kv.first.as<std::string>()] = kv.second.as<std::string>();
    }
  }
  return out;
}

std::optional<std::string> Root(unsigned) { return "root"; }

std::string Get(const std::map<std::string, std::string>& env,
                const std::string& name) {
  auto it = env.find(name);
  return it == env.end() ? "" : it->second;
}

// The settings of the agent `major` Open MPI starts for `host`: the agent
// string's words after the program, then plm_rsh_args' (Open MPI 5's
// schizo/ompi copies OMPI_MCA_plm_rsh_args to PRTE_MCA_plm_ssh_args unless
// that is set), then the host and orted's command, as Open MPI splits
// them: on spaces, no quoting.
StatusOr<ssh::ResolvedSshOptions> AgentSettings(
    const std::map<std::string, std::string>& env,
    const std::map<std::string, std::string>& files, int major,
    const std::string& host) {
  std::string agent = Get(
      env, major == 4 ? "OMPI_MCA_plm_rsh_agent" : "PRTE_MCA_plm_ssh_agent");
  std::string args = Get(env, "OMPI_MCA_plm_rsh_args");
  if (major == 5 && !Get(env, "PRTE_MCA_plm_ssh_args").empty()) {
    args = Get(env, "PRTE_MCA_plm_ssh_args");
  }
  if (agent.empty()) return NotFoundError("no agent for this Open MPI");
  std::vector<std::string> words;
  std::vector<std::string> agent_words = Split(agent, ' ');
  for (size_t i = 1; i < agent_words.size(); ++i) {
    if (!agent_words[i].empty()) words.push_back(agent_words[i]);
  }
  for (const std::string& w : Split(args, ' ')) {
    if (!w.empty()) words.push_back(w);
  }
  words.insert(words.end(), {host, "orted", "-mca", "ess", "env"});
  std::map<std::string, std::string> agent_env;
  for (const auto& [name, value] : env) {
    if (StartsWith(name, "K8S_AGENT_")) agent_env[name] = value;
  }
  auto read = [&](const std::string& path) -> StatusOr<std::string> {
    auto it = files.find(path);
    if (it == files.end()) return NotFoundError(path);
    return it->second;
  };
  K8S_ASSIGN_OR_RETURN(Options options, ParseOptions(words, agent_env, read));
  ssh::ConfigEnv config_env;
  config_env.local_user = "root";
  config_env.home = "/root";
  config_env.read_file =
      [&](const std::string& path) -> StatusOr<ssh::ConfigText> {
    auto it = files.find(path);
    if (it == files.end()) return NotFoundError(path);
    return ssh::ConfigText{it->second};
  };
  config_env.glob = [](const std::string&) {
    return std::vector<std::string>();
  };
  config_env.run_exec = [](const std::string&) -> StatusOr<bool> {
    return false;
  };
  return SshSettingsFromOptions(options, config_env, &Root)(host);
}

class OperatorEnvTest : public ::testing::TestWithParam<const char*> {};

TEST_P(OperatorEnvTest, AgentSettingsSurviveTheOperatorsEnv) {
  const std::string path = std::string(K8S_EXAMPLES_DIR) + "/" + GetParam();
  Launcher launcher = LoadLauncher(path);
  ASSERT_FALSE(launcher.env.empty()) << path;
  const std::string host = "train-worker-0.train.default.svc";
  // As written, before any operator: the settings the example means.
  const auto as_written = Resolve(launcher.env);
  for (const auto& [operator_name, env] :
       {std::pair{"mpi-operator", Resolve(MpiOperator(launcher.env))},
        std::pair{"trainer", Resolve(Trainer(launcher.env))}}) {
    SCOPED_TRACE(operator_name);
    EXPECT_EQ(Get(env, "OMPI_MCA_plm_rsh_args"), "-o ConnectionAttempts=10");
    // Open MPI 5 reads no OMPI_MCA_ launch name: the example sets its own.
    EXPECT_EQ(Get(env, "PRTE_MCA_prte_default_hostfile"), "/etc/mpi/hostfile");
    for (int major : {4, 5}) {
      SCOPED_TRACE("Open MPI " + std::to_string(major));
      StatusOr<ssh::ResolvedSshOptions> want =
          AgentSettings(as_written, launcher.files, major, host);
      StatusOr<ssh::ResolvedSshOptions> got =
          AgentSettings(env, launcher.files, major, host);
      ASSERT_THAT(want.status(), IsOk());
      ASSERT_THAT(got.status(), IsOk());
      EXPECT_EQ(got->strict_host_key_checking, want->strict_host_key_checking);
      EXPECT_EQ(got->known_hosts_files, want->known_hosts_files);
      EXPECT_EQ(got->user, want->user);
      EXPECT_EQ(got->port, want->port);
      if (std::string(GetParam()) == "mpijob-stock-image.yaml") {
        // The operator's Secret holds no known_hosts: no host key checked.
        EXPECT_EQ(got->strict_host_key_checking,
                  ssh::StrictHostKeyChecking::kNo);
        ASSERT_FALSE(got->known_hosts_files.empty());
        EXPECT_EQ(got->known_hosts_files.front(), "/dev/null");
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Examples, OperatorEnvTest,
                         ::testing::Values("mpijob-stock-image.yaml",
                                           "mpijob-delivery.yaml",
                                           "mpijob-v2beta1.yaml",
                                           "trainer-v2.yaml"));

}  // namespace
}  // namespace k8s_agent
