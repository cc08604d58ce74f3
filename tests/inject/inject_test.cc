// SPDX-License-Identifier: Apache-2.0
// The injector on manifests as the operators' and Kubernetes' own samples
// write them (testdata/), and on the edge cases of user input.

#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <string>
#include <vector>

#include "plugin/inject/manifest_injector.h"
#include "plugin/inject/yaml_document.h"
#include "tests/inject/inject_test_util.h"

namespace k8s_agent::inject {
namespace {

const std::string kTestdata = K8S_INJECT_TESTDATA;

std::string Sample(const std::string& name) {
  return ReadTestFile(kTestdata + "/" + name);
}

// The value of env var `name` in `container`, or "<unset>".
std::string Env(const YAML::Node& container, const std::string& name) {
  for (const YAML::Node& env : container["env"]) {
    if (env["name"].as<std::string>() == name) {
      return env["value"].IsDefined() ? env["value"].as<std::string>()
                                      : "<valueFrom>";
    }
  }
  return "<unset>";
}

int Count(const YAML::Node& seq, const std::string& name) {
  int n = 0;
  for (const YAML::Node& item : seq) {
    if (item["name"].as<std::string>("") == name) ++n;
  }
  return n;
}

// What every injected pod spec has, launcher or worker.
void ExpectDelivery(const YAML::Node& pod, const std::string& where) {
  SCOPED_TRACE(where);
  ASSERT_TRUE(pod.IsMap());
  EXPECT_EQ(pod["serviceAccountName"].as<std::string>(""), "mpi-launcher");
  ASSERT_EQ(Count(pod["initContainers"], "k8s-agent"), 1);
  const YAML::Node init =
      pod["initContainers"][pod["initContainers"].size() - 1];
  EXPECT_EQ(init["image"].as<std::string>(),
            std::string("k8s-agent:") + K8S_AGENT_IMAGE_TAG);
  EXPECT_EQ(init["args"][0].as<std::string>(), "/opt/k8s-agent");
  EXPECT_TRUE(init["securityContext"]["runAsNonRoot"].as<bool>());
  EXPECT_EQ(Count(pod["volumes"], "k8s-agent"), 1);
  for (const YAML::Node& volume : pod["volumes"]) {
    if (volume["name"].as<std::string>() == "k8s-agent") {
      EXPECT_TRUE(volume["emptyDir"].IsMap());
    }
  }
  for (const YAML::Node& container : pod["containers"]) {
    ASSERT_EQ(Count(container["volumeMounts"], "k8s-agent"), 1);
    for (const YAML::Node& mount : container["volumeMounts"]) {
      if (mount["name"].as<std::string>() != "k8s-agent") continue;
      EXPECT_EQ(mount["mountPath"].as<std::string>(), "/opt/k8s-agent");
      EXPECT_TRUE(mount["readOnly"].as<bool>());
    }
  }
}

void ExpectLauncherEnv(const YAML::Node& container) {
  EXPECT_EQ(Env(container, "OMPI_MCA_plm_rsh_agent"),
            "/opt/k8s-agent/k8s-agent");
  EXPECT_EQ(Env(container, "PRTE_MCA_plm_ssh_agent"),
            "/opt/k8s-agent/k8s-agent");
  EXPECT_EQ(Env(container, "K8S_AGENT_NAMESPACE"), "<valueFrom>");
  EXPECT_EQ(Env(container, "K8S_AGENT_LOOKUP_CACHE"), "5s");
}

void ExpectIdempotent(const std::string& text, const InjectOptions& options) {
  InjectResult once = MustInject(text, options);
  InjectResult twice = MustInject(once.yaml, options);
  EXPECT_EQ(once.yaml, twice.yaml);
}

TEST(InjectTest, MpiOperatorPiSample) {
  const std::string text = Sample("mpijob-pi.yaml");
  InjectResult result = MustInject(text);
  YAML::Node job = Docs(result.yaml)[0];
  YAML::Node launcher =
      job["spec"]["mpiReplicaSpecs"]["Launcher"]["template"]["spec"];
  YAML::Node worker =
      job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]["spec"];
  ExpectDelivery(launcher, "launcher");
  ExpectDelivery(worker, "worker");
  ExpectLauncherEnv(launcher["containers"][0]);
  EXPECT_EQ(Env(launcher["containers"][0], "PRTE_MCA_prte_default_hostfile"),
            "/etc/mpi/hostfile");
  EXPECT_EQ(Env(launcher["containers"][0], "K8S_AGENT_SELECTOR"),
            "training.kubeflow.org/job-name=pi,training.kubeflow.org/"
            "job-role=worker");
  EXPECT_EQ(Env(worker["containers"][0], "OMPI_MCA_plm_rsh_agent"), "<unset>");
  // The user's quoted "2" is still a string, and its sshd command stays.
  EXPECT_NE(result.yaml.find("- \"2\"\n"), std::string::npos) << result.yaml;
  EXPECT_EQ(worker["containers"][0]["command"][0].as<std::string>(),
            "/usr/sbin/sshd");
  EXPECT_TRUE(result.warnings.empty());
  ExpectIdempotent(text, {});
}

TEST(InjectTest, SshdLeavesAWorkerThatRunsItsOwnSshdAndSaysSo) {
  InjectOptions options;
  options.agent.sshd = true;
  InjectResult result = MustInject(Sample("mpijob-pi.yaml"), options);
  YAML::Node worker = Docs(result.yaml)[0]["spec"]["mpiReplicaSpecs"]["Worker"]
                                       ["template"]["spec"]["containers"][0];
  EXPECT_EQ(worker["command"][0].as<std::string>(), "/usr/sbin/sshd");
  EXPECT_TRUE(
      AnyContains(result.warnings, "keeps its command [/usr/sbin/sshd]"))
      << result.warnings.size();
}

TEST(InjectTest, SshdCommandUsesTheOperatorsKeyMount) {
  std::string text = Sample("mpijob-pi.yaml");
  // The worker without its own command (an image with no sshd).
  YAML::Node job = YAML::Load(text);
  YAML::Node worker = job["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
                         ["spec"]["containers"][0];
  worker.remove("command");
  worker.remove("args");
  InjectOptions options;
  options.agent.sshd = true;
  InjectResult result = MustInject(EmitDocument(job), options);
  std::vector<YAML::Node> docs = Docs(result.yaml);
  YAML::Node command = docs[0]["spec"]["mpiReplicaSpecs"]["Worker"]["template"]
                           ["spec"]["containers"][0]["command"];
  EXPECT_EQ(command.as<std::vector<std::string>>(),
            (std::vector<std::string>{"/opt/k8s-agent/k8s-agent-sshd", "--port",
                                      "22", "--keys", "/home/mpiuser/.ssh"}));
  EXPECT_NE(result.yaml.find("\"22\""), std::string::npos);  // A string.
  ASSERT_EQ(docs.size(), 2u);
  EXPECT_EQ(docs[1]["kind"].as<std::string>(), "ConfigMap");
  EXPECT_EQ(docs[1]["metadata"]["name"].as<std::string>(), "k8s-agent-ssh");
  YAML::Node launcher = docs[0]["spec"]["mpiReplicaSpecs"]["Launcher"]
                            ["template"]["spec"]["containers"][0];
  EXPECT_EQ(Env(launcher, "K8S_AGENT_SSH_CONFIG"),
            "/etc/k8s-agent-ssh/ssh_config");
  ExpectIdempotent(EmitDocument(job), options);
}

TEST(InjectTest, JobSetRolesByReplicatedJobName) {
  InjectResult result = MustInject(Sample("jobset-mpi.yaml"));
  YAML::Node jobs = Docs(result.yaml)[0]["spec"]["replicatedJobs"];
  YAML::Node launcher = jobs[0]["template"]["spec"]["template"]["spec"];
  YAML::Node worker = jobs[1]["template"]["spec"]["template"]["spec"];
  ExpectDelivery(launcher, "launcher");
  ExpectDelivery(worker, "workers");
  ExpectLauncherEnv(launcher["containers"][0]);
  EXPECT_EQ(Env(launcher["containers"][0], "K8S_AGENT_SELECTOR"),
            "jobset.sigs.k8s.io/jobset-name=pi,jobset.sigs.k8s.io/"
            "replicatedjob-name=workers");
  EXPECT_EQ(Env(launcher["containers"][0], "PRTE_MCA_prte_default_hostfile"),
            "<unset>");  // No operator writes one.
  EXPECT_EQ(Env(worker["containers"][0], "OMPI_MCA_plm_rsh_agent"), "<unset>");
  ExpectIdempotent(Sample("jobset-mpi.yaml"), {});
}

TEST(InjectTest, LeaderWorkerSetWithoutLeaderTemplateWarns) {
  InjectResult result = MustInject(Sample("lws-sample.yaml"));
  YAML::Node lwt = Docs(result.yaml)[0]["spec"]["leaderWorkerTemplate"];
  ExpectDelivery(lwt["workerTemplate"]["spec"], "workerTemplate");
  EXPECT_FALSE(lwt["leaderTemplate"].IsDefined());
  EXPECT_TRUE(AnyContains(result.warnings, "no leaderTemplate"));
  EXPECT_TRUE(
      AnyContains(result.warnings, "LeaderWorkerSet/leaderworkerset-sample"));
  // The user's quoted "100m" stays a string.
  EXPECT_NE(result.yaml.find("cpu: \"100m\""), std::string::npos);
}

TEST(InjectTest, LeaderWorkerSetLeaderIsTheLauncher) {
  YAML::Node lws = YAML::Load(Sample("lws-sample.yaml"));
  lws["spec"]["leaderWorkerTemplate"]["leaderTemplate"] =
      YAML::Clone(lws["spec"]["leaderWorkerTemplate"]["workerTemplate"]);
  InjectResult result = MustInject(EmitDocument(lws));
  YAML::Node lwt = Docs(result.yaml)[0]["spec"]["leaderWorkerTemplate"];
  ExpectLauncherEnv(lwt["leaderTemplate"]["spec"]["containers"][0]);
  EXPECT_EQ(Env(lwt["workerTemplate"]["spec"]["containers"][0],
                "OMPI_MCA_plm_rsh_agent"),
            "<unset>");
  EXPECT_TRUE(result.warnings.empty());
}

TEST(InjectTest, TrainingRuntimeSkipsInitializersAndSetsTheHostfile) {
  InjectOptions options;
  options.agent.sshd = true;
  InjectResult result = MustInject(Sample("training-runtime.yaml"), options);
  YAML::Node jobs =
      Docs(result.yaml)[0]["spec"]["template"]["spec"]["replicatedJobs"];
  YAML::Node init = jobs[0]["template"]["spec"]["template"]["spec"];
  YAML::Node launcher = jobs[1]["template"]["spec"]["template"]["spec"];
  YAML::Node node = jobs[2]["template"]["spec"]["template"]["spec"];
  EXPECT_FALSE(init["initContainers"].IsDefined());
  EXPECT_FALSE(init["serviceAccountName"].IsDefined());
  ExpectDelivery(launcher, "launcher");
  ExpectDelivery(node, "node");
  ExpectLauncherEnv(launcher["containers"][0]);
  EXPECT_EQ(Env(launcher["containers"][0], "PRTE_MCA_prte_default_hostfile"),
            "/etc/mpi/hostfile");
  EXPECT_EQ(Env(launcher["containers"][0], "K8S_AGENT_SELECTOR"), "<unset>");
  EXPECT_EQ(node["containers"][0]["command"][0].as<std::string>(),
            "/usr/sbin/sshd");
  EXPECT_TRUE(AnyContains(result.warnings, "(its own sshd?)"));
  ExpectIdempotent(Sample("training-runtime.yaml"), options);
}

TEST(InjectTest, TrainJobPassesThroughWithAWarning) {
  const std::string text =
      "apiVersion: trainer.kubeflow.org/v1alpha1\nkind: TrainJob\n"
      "metadata:\n  name: t\nspec:\n  runtimeRef:\n    name: mpi\n";
  InjectResult result = MustInject(text);
  EXPECT_EQ(result.yaml, text);
  EXPECT_TRUE(AnyContains(result.warnings, "ClusterTrainingRuntime/mpi"));
}

TEST(InjectTest, PlainJobIsALauncherAndStatefulSetAWorker) {
  const std::string both =
      Sample("job-pi.yaml") + "---\n" + Sample("statefulset-web.yaml");
  InjectResult result = MustInject(both);
  std::vector<YAML::Node> docs = Docs(result.yaml);
  ASSERT_EQ(docs.size(), 2u);
  YAML::Node job = docs[0]["spec"]["template"]["spec"];
  YAML::Node set = docs[1]["spec"]["template"]["spec"];
  ExpectDelivery(job, "job");
  ExpectDelivery(set, "statefulset");
  ExpectLauncherEnv(job["containers"][0]);
  // The workers' labels are the StatefulSet's selector.
  EXPECT_EQ(Env(job["containers"][0], "K8S_AGENT_SELECTOR"), "app=nginx");
  EXPECT_EQ(Env(set["containers"][0], "OMPI_MCA_plm_rsh_agent"), "<unset>");
  // The user's mount and volume claim stay, in order, before ours.
  EXPECT_EQ(set["containers"][0]["volumeMounts"][0]["name"].as<std::string>(),
            "www");
  EXPECT_EQ(docs[1]["spec"]["volumeClaimTemplates"][0]["spec"]["accessModes"]
                .as<std::vector<std::string>>(),
            std::vector<std::string>{"ReadWriteOnce"});
  // initContainers goes before containers, the ServiceAccount first.
  EXPECT_LT(result.yaml.find("initContainers:"),
            result.yaml.find("containers:\n      - name: pi"));
  EXPECT_EQ(job.begin()->first.as<std::string>(), "serviceAccountName");
  ExpectIdempotent(both, {});
  // Alone, a Job's launcher has no workers to select.
  YAML::Node alone = Docs(MustInject(Sample("job-pi.yaml")).yaml)[0];
  EXPECT_EQ(Env(alone["spec"]["template"]["spec"]["containers"][0],
                "K8S_AGENT_SELECTOR"),
            "<unset>");
}

TEST(InjectTest, RoleAnnotationOverridesTheShape) {
  YAML::Node job = YAML::Load(Sample("job-pi.yaml"));
  job["spec"]["template"]["metadata"]["annotations"]["k8s-agent/role"] =
      "worker";
  InjectResult result = MustInject(EmitDocument(job));
  YAML::Node pod = Docs(result.yaml)[0]["spec"]["template"]["spec"];
  ExpectDelivery(pod, "job as worker");
  EXPECT_EQ(Env(pod["containers"][0], "OMPI_MCA_plm_rsh_agent"), "<unset>");

  job["spec"]["template"]["metadata"]["annotations"]["k8s-agent/role"] = "none";
  const std::string none = EmitDocument(job);
  EXPECT_EQ(MustInject(none).yaml, none);

  job["spec"]["template"]["metadata"]["annotations"]["k8s-agent/role"] = "boss";
  EXPECT_TRUE(AnyContains(MustInject(EmitDocument(job)).warnings,
                          "k8s-agent/role: boss is none of"));
}

TEST(InjectTest, ContainersAnnotationLimitsTheSettings) {
  YAML::Node pod = YAML::Load(
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
      "    k8s-agent/containers: main\nspec:\n  containers:\n"
      "  - name: sidecar\n    image: s\n  - name: main\n    image: m\n");
  YAML::Node out = Docs(MustInject(EmitDocument(pod)).yaml)[0];
  EXPECT_FALSE(out["spec"]["containers"][0]["env"].IsDefined());
  EXPECT_FALSE(out["spec"]["containers"][0]["volumeMounts"].IsDefined());
  ExpectLauncherEnv(out["spec"]["containers"][1]);
}

TEST(InjectTest, UserValuesWinAndDifferencesAreWarned) {
  const std::string text =
      "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\nspec:\n"
      "  template:\n    spec:\n      serviceAccountName: trainer\n"
      "      containers:\n      - name: c\n        image: i\n        env:\n"
      "        - name: FIRST\n          value: \"true\"\n"
      "        - name: OMPI_MCA_plm_rsh_agent\n          value: /usr/bin/ssh\n"
      "        - name: LAST\n          value: x\n";
  InjectResult result = MustInject(text);
  YAML::Node pod = Docs(result.yaml)[0]["spec"]["template"]["spec"];
  EXPECT_EQ(pod["serviceAccountName"].as<std::string>(), "trainer");
  YAML::Node env = pod["containers"][0]["env"];
  ASSERT_GE(env.size(), 3u);
  EXPECT_EQ(env[0]["name"].as<std::string>(), "FIRST");
  EXPECT_EQ(env[1]["name"].as<std::string>(), "OMPI_MCA_plm_rsh_agent");
  EXPECT_EQ(env[1]["value"].as<std::string>(), "/usr/bin/ssh");
  EXPECT_EQ(env[2]["name"].as<std::string>(), "LAST");
  EXPECT_EQ(Count(env, "OMPI_MCA_plm_rsh_agent"), 1);
  EXPECT_EQ(Env(pod["containers"][0], "PRTE_MCA_plm_ssh_agent"),
            "/opt/k8s-agent/k8s-agent");
  EXPECT_NE(result.yaml.find("value: \"true\""), std::string::npos);
  EXPECT_TRUE(AnyContains(result.warnings,
                          "keeps OMPI_MCA_plm_rsh_agent=/usr/bin/ssh"));
  EXPECT_TRUE(AnyContains(result.warnings, "keeps serviceAccountName trainer"));
  EXPECT_TRUE(AnyContains(result.warnings, "in.yaml: document 1 (Job/j)"));
  ExpectIdempotent(text, {});
}

TEST(InjectTest, UnknownKindsPassThroughUnchangedWithAWarning) {
  const std::string deployment =
      "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n"
      "spec:\n  template:\n    spec:\n      containers:\n"
      "        - name: c\n          image: i\n          args: [\"a\", \"1\"]\n";
  const std::string service =
      "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\nspec:\n"
      "  clusterIP: None\n";
  InjectResult result = MustInject(deployment + "---\n" + service);
  // Comment-free input in the emitter's layout: the same bytes.
  EXPECT_EQ(result.yaml, deployment + "---\n" + service);
  ASSERT_EQ(result.warnings.size(), 1u);
  EXPECT_NE(result.warnings[0].find("document 1 (Deployment/web)"),
            std::string::npos);
  EXPECT_NE(result.warnings[0].find("kind Deployment (apps/v1)"),
            std::string::npos);
}

TEST(InjectTest, ListItemsAreInjectedInPlace) {
  const std::string list = "apiVersion: v1\nkind: List\nitems:\n" +
                           std::string("  - apiVersion: v1\n    kind: Pod\n") +
                           "    metadata:\n      name: p\n    spec:\n" +
                           "      containers:\n        - name: c\n" +
                           "          image: i\n";
  InjectResult result = MustInject(list);
  YAML::Node doc = Docs(result.yaml)[0];
  EXPECT_EQ(doc["kind"].as<std::string>(), "List");
  ExpectDelivery(doc["items"][0]["spec"], "list item");
  ExpectLauncherEnv(doc["items"][0]["spec"]["containers"][0]);
  ExpectIdempotent(list, {});
}

TEST(InjectTest, ImageVolumeNeedsNoInitContainer) {
  const std::string text =
      "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\nspec:\n"
      "  containers:\n    - name: c\n      image: i\n  volumes:\n"
      "    - name: k8s-agent\n      image:\n        reference: k8s-agent:1\n";
  YAML::Node pod = Docs(MustInject(text).yaml)[0]["spec"];
  EXPECT_FALSE(pod["initContainers"].IsDefined());
  EXPECT_EQ(pod["volumes"].size(), 1u);
  ExpectLauncherEnv(pod["containers"][0]);
}

TEST(InjectTest, RbacOnceInTheInputsNamespace) {
  InjectOptions options;
  options.rbac = true;
  options.agent.service_account = "runner";
  const std::string text =
      "apiVersion: batch/v1\nkind: Job\nmetadata:\n  name: j\n"
      "  namespace: team\nspec:\n  template:\n    spec:\n      containers:\n"
      "        - name: c\n          image: i\n";
  InjectResult result = MustInject(text, options);
  std::vector<YAML::Node> docs = Docs(result.yaml);
  ASSERT_EQ(docs.size(), 4u);
  EXPECT_EQ(docs[1]["kind"].as<std::string>(), "ServiceAccount");
  EXPECT_EQ(docs[1]["metadata"]["name"].as<std::string>(), "runner");
  EXPECT_EQ(docs[2]["kind"].as<std::string>(), "Role");
  EXPECT_EQ(docs[2]["rules"][0]["verbs"].as<std::vector<std::string>>(),
            (std::vector<std::string>{"list", "watch"}));
  EXPECT_EQ(docs[3]["roleRef"]["name"].as<std::string>(), "runner-pods");
  for (size_t i = 1; i < 4; ++i) {
    EXPECT_EQ(docs[i]["metadata"]["namespace"].as<std::string>(), "team");
  }
  EXPECT_EQ(docs[0]["spec"]["template"]["spec"]["serviceAccountName"]
                .as<std::string>(),
            "runner");
  ExpectIdempotent(text, options);
}

TEST(InjectTest, BadYamlNamesTheDocumentAndLine) {
  StatusOr<InjectResult> result =
      InjectManifests({{"job.yaml",
                        "kind: Service\nmetadata: {name: s}\n---\nkind: Job\n"
                        "spec: [unclosed\n"}},
                      {});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("job.yaml: document 2: line "),
            std::string::npos)
      << result.status().message();
}

TEST(InjectTest, ADocumentThatIsNoObjectIsAnError) {
  StatusOr<InjectResult> result =
      InjectManifests({{"x.yaml", "---\n# nothing\n---\n- a\n- b\n"}}, {});
  ASSERT_FALSE(result.ok());
  EXPECT_NE(result.status().message().find("x.yaml: document 2: not a "
                                           "Kubernetes object"),
            std::string::npos)
      << result.status().message();
}

TEST(YamlDocumentTest, QuotedAndBlockScalarsKeepTheirType) {
  const std::string text =
      "a: \"1\"\nb: 'yes'\nc: 0600\nd: |\n  line one\n  line two\ne: >-\n"
      "  folded\n  text\nf: ~\n";
  StatusOr<std::vector<YAML::Node>> docs = ParseDocuments(text, "t");
  ASSERT_TRUE(docs.ok());
  const std::string once = EmitDocument((*docs)[0]);
  EXPECT_NE(once.find("a: \"1\""), std::string::npos) << once;
  EXPECT_NE(once.find("b: \"yes\""), std::string::npos) << once;
  EXPECT_NE(once.find("c: 0600"), std::string::npos) << once;
  EXPECT_NE(once.find("d: |\n  line one\n  line two\n"), std::string::npos)
      << once;
  YAML::Node back = YAML::Load(once);
  EXPECT_EQ(back["e"].as<std::string>(), "folded text");
  EXPECT_EQ(back["d"].as<std::string>(), "line one\nline two\n");
  EXPECT_EQ(EmitDocument(back), once);
}

}  // namespace
}  // namespace k8s_agent::inject
