// SPDX-License-Identifier: Apache-2.0
// Tests for ParseOptions: the argv shapes Open MPI and hydra send, env, file.

#include "launcher/options.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <optional>
#include <ostream>
#include <sstream>

#include "plugin/agent/fatal_reasons.h"
#include "plugin/base/strings.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

using Env = std::map<std::string, std::string>;
using Files = std::map<std::string, std::string>;
using Args = std::vector<std::string>;

/// Parses with a fake file system; records which paths were read.
class Parser {
 public:
  explicit Parser(Env env = {}, Files files = {})
      : env_(std::move(env)), files_(std::move(files)) {}

  StatusOr<Options> Parse(const Args& args) {
    return ParseOptions(
        args, env_, [this](const std::string& path) -> StatusOr<std::string> {
          read_.push_back(path);
          if (path == denied_) {
            return PermissionDeniedError("open " + path +
                                         ": Permission denied");
          }
          auto it = files_.find(path);
          if (it == files_.end()) {
            return NotFoundError("open " + path +
                                 ": No such file or directory");
          }
          return it->second;
        });
  }

  void Deny(const std::string& path) { denied_ = path; }
  const std::vector<std::string>& read() const { return read_; }

 private:
  Env env_;
  Files files_;
  std::string denied_;
  std::vector<std::string> read_;
};

StatusOr<Options> Parse(const Args& args, Env env = {}, Files files = {}) {
  return Parser(std::move(env), std::move(files)).Parse(args);
}

Args Concat(Args a, const Args& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

// The remote command of Open MPI 4.1.4 with tree spawn, word for word, and
// the string ssh would send for it.
const Args kOrtedWords = {
    " orted",
    "-mca",
    "ess",
    "\"env\"",
    "-mca",
    "ess_base_jobid",
    "\"1551499264\"",
    "-mca",
    "ess_base_vpid",
    "1",
    "-mca",
    "ess_base_num_procs",
    "\"3\"",
    "-mca",
    "orte_node_regex",
    "\"vm,hostA,hostB@0(3)\"",
    "-mca",
    "orte_hnp_uri",
    "\"1551499264.0;tcp://192.0.2.2:41409;tcp6://[fd00::2]:60055\"",
    "--mca",
    "plm_rsh_agent",
    "\"/usr/local/bin/fake-agent\"",
    "-mca",
    "plm",
    "\"rsh\"",
    "--tree-spawn",
    "-mca",
    "routed",
    "\"radix\"",
    "-mca",
    "orte_parent_uri",
    "\"1551499264.0;tcp://192.0.2.2:41409;tcp6://[fd00::2]:60055\"",
    "-mca",
    "pmix",
    "\"^s1,s2,cray,isolated\""};
const char kOrtedCommand[] =
    " orted -mca ess \"env\" -mca ess_base_jobid \"1551499264\" -mca "
    "ess_base_vpid 1 -mca ess_base_num_procs \"3\" -mca orte_node_regex "
    "\"vm,hostA,hostB@0(3)\" -mca orte_hnp_uri "
    "\"1551499264.0;tcp://192.0.2.2:41409;tcp6://[fd00::2]:60055\" --mca "
    "plm_rsh_agent \"/usr/local/bin/fake-agent\" -mca plm \"rsh\" "
    "--tree-spawn -mca routed \"radix\" -mca orte_parent_uri "
    "\"1551499264.0;tcp://192.0.2.2:41409;tcp6://[fd00::2]:60055\" -mca pmix "
    "\"^s1,s2,cray,isolated\"";

const char kPrefixSnippet[] =
    "          PATH=/usr/bin:$PATH ; export PATH ; "
    "LD_LIBRARY_PATH=/usr/lib:${LD_LIBRARY_PATH:-} ; export LD_LIBRARY_PATH "
    "; DYLD_LIBRARY_PATH=/usr/lib:${DYLD_LIBRARY_PATH:-} ; export "
    "DYLD_LIBRARY_PATH ;   /usr/bin/orted";

const char kPrtedSnippet[] =
    "PRTE_PREFIX=/usr;export PRTE_PREFIX;LD_LIBRARY_PATH=/usr/lib:/usr/lib/"
    "x86_64-linux-gnu/pmix2/lib:$LD_LIBRARY_PATH;export LD_LIBRARY_PATH;"
    "/usr/bin/prted";

// ---------------------------------------------------------------------------
// Real argv shapes: table-driven.

struct ShapeCase {
  const char* name;
  Args args;
  std::string host;
  std::string command;
  std::optional<int> port;
  std::optional<std::string> user;
};

// Names the case in ctest listings instead of a byte dump.
void PrintTo(const ShapeCase& c, std::ostream* os) { *os << c.name; }

class ArgvShapeTest : public ::testing::TestWithParam<ShapeCase> {};

TEST_P(ArgvShapeTest, ParsesHostCommandPortAndUser) {
  const ShapeCase& c = GetParam();
  StatusOr<Options> o = Parse(c.args);
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->host, c.host);
  EXPECT_THAT(o->hosts, ElementsAre(c.host));
  EXPECT_EQ(o->command, c.command);
  EXPECT_EQ(o->command, Join(o->command_words, " "));
  EXPECT_EQ(o->ssh.port, c.port);
  EXPECT_EQ(o->ssh.user, c.user);
  EXPECT_FALSE(o->help);
  EXPECT_FALSE(o->wait_only);
  EXPECT_FALSE(o->hostfile);
}

const ShapeCase kShapes[] = {
    {"OpenMpi41TreeSpawn", Concat({"hostA"}, kOrtedWords), "hostA",
     kOrtedCommand, std::nullopt, std::nullopt},
    {"OpenMpi41NoTreeSpawn",
     {"hostA", " orted", "--daemonize", "-mca", "ess", "\"env\""},
     "hostA",
     " orted --daemonize -mca ess \"env\"",
     std::nullopt,
     std::nullopt},
    {"PlmRshArgsConnectTimeout",
     Concat({"-o", "ConnectTimeout=5", "w0"}, kOrtedWords), "w0", kOrtedCommand,
     std::nullopt, std::nullopt},
    {"PlmRshArgsWithPort",
     Concat({"-o", "StrictHostKeyChecking=no", "-p", "2222", "hostA"},
            kOrtedWords),
     "hostA", kOrtedCommand, 2222, std::nullopt},
    {"HostfilePortAfterHost", Concat({"hostB", "-p", "2222"}, kOrtedWords),
     "hostB", kOrtedCommand, 2222, std::nullopt},
    {"HostfileUsername", Concat({"alice@hostA"}, kOrtedWords), "hostA",
     kOrtedCommand, std::nullopt, "alice"},
    {"PrefixSnippetFirstWord",
     {"hostA", kPrefixSnippet, "-mca", "ess", "\"env\""},
     "hostA",
     std::string(kPrefixSnippet) + " -mca ess \"env\"",
     std::nullopt,
     std::nullopt},
    {"OpenMpi5FqdnAndPrted",
     {"a-0.svc.ns.svc.cluster.local", kPrtedSnippet, "--allow-run-as-root",
      "--prtemca", "ess", "\"env\""},
     "a-0.svc.ns.svc.cluster.local",
     std::string(kPrtedSnippet) + " --allow-run-as-root --prtemca ess \"env\"",
     std::nullopt,
     std::nullopt},
    {"ShKshProfileForm",
     {"hostA", "(", "test", "!", "-r", "./.profile", "||", ".", "./.profile;",
      " orted", "-mca", "ess", "\"env\"", ")"},
     "hostA",
     "( test ! -r ./.profile || . ./.profile;  orted -mca ess \"env\" )",
     std::nullopt,
     std::nullopt},
    {"HydraDashX",
     {"-x", "hostA", "\"/usr/bin/hydra_pmi_proxy\"", "--control-port",
      "vm:42327", "--rmk", "user", "--launcher", "ssh", "--demux", "poll",
      "--pgid", "0", "--retries", "10", "--usize", "-2", "--proxy-id", "0"},
     "hostA",
     "\"/usr/bin/hydra_pmi_proxy\" --control-port vm:42327 --rmk user "
     "--launcher ssh --demux poll --pgid 0 --retries 10 --usize -2 "
     "--proxy-id 0",
     std::nullopt,
     std::nullopt},
    {"ShellProbe",
     {"-q", "hostA", "echo $SHELL"},
     "hostA",
     "echo $SHELL",
     std::nullopt,
     std::nullopt},
    {"IpAddressHost", Concat({"10.1.2.3"}, kOrtedWords), "10.1.2.3",
     kOrtedCommand, std::nullopt, std::nullopt},
    {"DashDashBeforeHost",
     {"-p", "2200", "--", "hostA", "-v", "x"},
     "hostA",
     "-v x",
     2200,
     std::nullopt},
    {"DashDashAfterHost",
     {"hostA", "-p", "2200", "--", "-q", "x"},
     "hostA",
     "-q x",
     2200,
     std::nullopt},
    {"AgentStringOptions",
     Concat({"--namespace", "ns", "--timeout", "30s", "hostA"}, kOrtedWords),
     "hostA", kOrtedCommand, std::nullopt, std::nullopt},
    {"AgentStringEqualsForm",
     Concat({"--namespace=ns", "--timeout=30s", "-x", "hostA"}, kOrtedWords),
     "hostA", kOrtedCommand, std::nullopt, std::nullopt},
    {"CombinedFlagsAndAttachedValues",
     {"-qx", "-p2222", "-vv", "hostA", "true"},
     "hostA",
     "true",
     2222,
     std::nullopt},
    {"ValueFlagClosesGroup",
     {"-qp", "2022", "hostA", "true"},
     "hostA",
     "true",
     2022,
     std::nullopt},
    {"FirstPortWins",
     {"-p", "2222", "hostA", "-p", "3333", "true"},
     "hostA",
     "true",
     2222,
     std::nullopt},
    {"DashLBeforeUserAtHostWins",
     {"-l", "bob", "alice@hostA", "true"},
     "hostA",
     "true",
     std::nullopt,
     "bob"},
    {"UserAtHostBeforeDashLWins",
     {"alice@hostA", "-l", "bob", "true"},
     "hostA",
     "true",
     std::nullopt,
     "alice"},
    {"LastAtSplitsUser",
     {"a@b@hostA", "true"},
     "hostA",
     "true",
     std::nullopt,
     "a@b"},
    {"OptionLikeWordAfterCommandStarts",
     {"hostA", "ls", "-l", "-p", "/"},
     "hostA",
     "ls -l -p /",
     std::nullopt,
     std::nullopt},
    {"SingleDashIsAWord",
     {"hostA", "-", "x"},
     "hostA",
     "- x",
     std::nullopt,
     std::nullopt},
};

INSTANTIATE_TEST_SUITE_P(OpenMpiHydraSsh, ArgvShapeTest,
                         ::testing::ValuesIn(kShapes),
                         [](const ::testing::TestParamInfo<ShapeCase>& param) {
                           return std::string(param.param.name);
                         });

TEST(OptionsTest, JoinedTreeSpawnCommandMatchesTheContract) {
  StatusOr<Options> o = Parse(Concat({"hostA"}, kOrtedWords));
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->command_words, kOrtedWords);
  EXPECT_EQ(o->command[0], ' ');  // " orted": the leading space is kept.
  EXPECT_EQ(o->command.size(), std::string(kOrtedCommand).size());
}

TEST(OptionsTest, Defaults) {
  StatusOr<Options> o = Parse({"w0", "hostname"});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->timeout, std::chrono::minutes(10));
  EXPECT_EQ(o->wait_for, WaitFor::kRunning);
  EXPECT_EQ(o->fail_on_reasons, DefaultFatalReasons());
  EXPECT_THAT(
      o->fail_on_reasons,
      ElementsAre("ImagePullBackOff", "ErrImagePull", "ErrImageNeverPull",
                  "InvalidImageName", "CreateContainerConfigError",
                  "CreateContainerError", "CrashLoopBackOff"));
  EXPECT_EQ(o->verbosity, 0);
  EXPECT_FALSE(o->quiet);
  EXPECT_FALSE(o->ssh.no_stdin);
  EXPECT_THAT(o->ssh.identity_files, IsEmpty());
  EXPECT_EQ(o->cluster.ns, "");
  EXPECT_EQ(o->cluster.server, "");
  EXPECT_EQ(o->selector, "");
  EXPECT_EQ(o->trace_file, "");
  EXPECT_EQ(o->config_file, "");
  EXPECT_EQ(o->slots, 0);
  EXPECT_FALSE(o->version);
  EXPECT_THAT(o->notes, IsEmpty());
}

TEST(OptionsTest, SshOptionsFromDashO) {
  StatusOr<Options> o =
      Parse({"-o", "ConnectTimeout=5", "-o", "StrictHostKeyChecking no",
             "-oServerAliveInterval=15", "-o", "BatchMode = yes", "-o",
             "UserKnownHostsFile=/dev/null", "-i", "/keys/id_ed25519", "-n",
             "-o", "User=carol", "hostA", "-o", "ConnectTimeout=9", "true"});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->ssh.connect_timeout, std::chrono::seconds(5));  // First wins.
  EXPECT_EQ(o->ssh.strict_host_key_checking, ssh::StrictHostKeyChecking::kNo);
  EXPECT_EQ(o->ssh.server_alive_interval_s, 15);
  EXPECT_EQ(o->ssh.batch_mode, true);
  EXPECT_THAT(o->ssh.user_known_hosts_files, ElementsAre("/dev/null"));
  EXPECT_THAT(o->ssh.identity_files, ElementsAre("/keys/id_ed25519"));
  EXPECT_TRUE(o->ssh.no_stdin);
  EXPECT_EQ(o->ssh.user, "carol");
}

TEST(OptionsTest, ConnectionAttemptsAndBatchModeAreAcceptedWithANote) {
  // Accepted (plm_rsh_args often carry them) and explained: the agent
  // retries until --timeout and never prompts.
  StatusOr<Options> o =
      Parse({"-o", "ConnectionAttempts=3", "-o", "BatchMode=no", "h", "c"});
  ASSERT_THAT(o, IsOk());
  std::string notes = Join(SshSettingNotes(o->ssh), "\n");
  EXPECT_THAT(notes, HasSubstr("ConnectionAttempts=3: k8s-agent retries the "
                               "SSH connection with backoff until --timeout"));
  EXPECT_THAT(notes, HasSubstr("BatchMode=no: k8s-agent never prompts"));
  o = Parse({"-o", "BatchMode=yes", "h", "c"});
  ASSERT_THAT(o, IsOk());
  EXPECT_THAT(SshSettingNotes(o->ssh), IsEmpty());  // What it does anyway.
  EXPECT_THAT(SshSettingNotes(ssh::SshOptions()), IsEmpty());
}

TEST(OptionsTest, DashOPortAndUserAreFirstWins) {
  StatusOr<Options> o =
      Parse({"-o", "Port=2200", "-p", "2222", "alice@hostA", "true"});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->ssh.port, 2200);
  EXPECT_EQ(o->ssh.user, "alice");
}

TEST(OptionsTest, IdentityFilesAccumulate) {
  StatusOr<Options> o = Parse({"-i", "/a", "-i/b", "hostA", "-i", "/c", "x"});
  ASSERT_THAT(o, IsOk());
  EXPECT_THAT(o->ssh.identity_files, ElementsAre("/a", "/b", "/c"));
}

TEST(OptionsTest, TestbedAgentStringWithLogLevel) {
  // A plain-ssh test bed's agent string, as k8s-agent would get it.
  StatusOr<Options> o = Parse(
      Concat({"-i", "/tb/keys/id_ed25519", "-o", "StrictHostKeyChecking=no",
              "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
              "-o", "BatchMode=yes", "10.233.0.10"},
             kOrtedWords));
  ASSERT_THAT(o, IsOk());
  EXPECT_TRUE(o->quiet);  // LogLevel=ERROR quiets as in ssh.
  EXPECT_EQ(o->host, "10.233.0.10");
  EXPECT_EQ(o->command, kOrtedCommand);
}

TEST(OptionsTest, LogLevelAndVerboseTakeTheLargerNotTheSum) {
  // -o LogLevel=VERBOSE is -v; with --verbose (also -v) it stays -v.
  for (const Args& args : std::vector<Args>{
           {"-o", "LogLevel=VERBOSE", "--verbose", "hostA", "true"},
           {"--verbose", "-o", "LogLevel=VERBOSE", "hostA", "true"},
           {"-v", "-o", "LogLevel=VERBOSE", "hostA", "true"}}) {
    StatusOr<Options> o = Parse(args);
    ASSERT_THAT(o, IsOk());
    EXPECT_EQ(o->verbosity, 1) << Join(args, " ");
  }
}

TEST(OptionsTest, LogLevelDebugRaisesVerbosity) {
  StatusOr<Options> o = Parse({"-o", "LogLevel=DEBUG2", "hostA", "true"});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->verbosity, 2);
}

TEST(OptionsTest, VerbosityAndQuiet) {
  struct Case {
    Args args;
    int verbosity;
    bool quiet;
  };
  const Case cases[] = {
      {{"h", "c"}, 0, false},          {{"-v", "h", "c"}, 1, false},
      {{"-vv", "h", "c"}, 2, false},   {{"-v", "h", "-v", "c"}, 2, false},
      {{"-vvvv", "h", "c"}, 2, false}, {{"--verbose", "h", "c"}, 1, false},
      {{"-q", "h", "c"}, 0, true},     {{"--quiet", "h", "c"}, 0, true},
      {{"-qv", "h", "c"}, 1, true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(Join(c.args, " "));
    StatusOr<Options> o = Parse(c.args);
    ASSERT_THAT(o, IsOk());
    EXPECT_EQ(o->verbosity, c.verbosity);
    EXPECT_EQ(o->quiet, c.quiet);
  }
}

TEST(OptionsTest, IgnoredSshFlagsLeaveNotes) {
  StatusOr<Options> o = Parse(
      {"-x", "-X", "-T", "-4", "-6", "-a", "-A", "-k", "-C", "-tt", "h", "c"});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->command, "c");
  std::string notes = Join(o->notes, "\n");
  EXPECT_THAT(notes, HasSubstr("-t: k8s-agent never requests a pty"));
  EXPECT_THAT(notes, HasSubstr("-X: k8s-agent never forwards X11"));
  EXPECT_THAT(notes, HasSubstr("-C"));
  // -tt gives one note, not two.
  EXPECT_EQ(std::count_if(o->notes.begin(), o->notes.end(),
                          [](const std::string& n) {
                            return n.find("pty") != std::string::npos;
                          }),
            1);
}

TEST(OptionsTest, DashOKeyWithoutEffectIsANote) {
  StatusOr<Options> o =
      Parse({"-o", "ControlMaster=auto", "-o", "Compression yes", "h", "c"});
  ASSERT_THAT(o, IsOk());
  EXPECT_THAT(Join(o->notes, "\n"),
              HasSubstr("ignoring ControlMaster: k8s-agent never shares "
                        "connections"));
}

TEST(OptionsTest, DashOKeyUnknownToSshFailsAsInSsh) {
  EXPECT_THAT(Parse({"-o", "Prot=22", "h", "c"}),
              StatusIs(Code::kInvalidArgument,
                       "-o \"Prot=22\": Bad configuration option: Prot"));
  // IgnoreUnknown first covers it, as in ssh.
  EXPECT_THAT(Parse({"-o", "IgnoreUnknown=UseKeychain", "-o", "UseKeychain=yes",
                     "h", "c"}),
              IsOk());
  EXPECT_THAT(Parse({"-o", "ProxyJump=bastion", "h", "c"}),
              StatusIs(Code::kInvalidArgument, "cannot be honoured"));
}

TEST(OptionsTest, SshFlagsThatMapOntoSettings) {
  StatusOr<Options> o =
      Parse({"-F", "/etc/mpi/ssh_config", "-c", "aes128-ctr", "-m",
             "hmac-sha2-256", "-b", "127.0.0.2", "-E", "/tmp/agent.log", "-e",
             "none", "-S", "none", "-y", "h", "c"});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->ssh_config_only, "/etc/mpi/ssh_config");
  EXPECT_EQ(o->ssh.ciphers, "aes128-ctr");
  EXPECT_EQ(o->ssh.macs, "hmac-sha2-256");
  EXPECT_EQ(o->ssh.bind_address, "127.0.0.2");
  EXPECT_EQ(o->log_file, "/tmp/agent.log");
  EXPECT_EQ(o->command, "c");
  std::string notes = Join(o->notes, "\n");
  EXPECT_THAT(notes, HasSubstr("-e: escape characters need a pty"));
  EXPECT_THAT(notes, HasSubstr("-S: k8s-agent never shares connections"));
  EXPECT_THAT(notes, HasSubstr("-y: k8s-agent logs to stderr"));
  EXPECT_THAT(Parse({"-c", "aes128-ctr,,x", "h", "c"}),
              StatusIs(Code::kInvalidArgument, "-c \"aes128-ctr,,x\""));
}

TEST(OptionsTest, SshFlagsItCannotHonourAreRefusedSayingWhy) {
  EXPECT_THAT(Parse({"-J", "bastion", "h", "c"}),
              StatusIs(Code::kInvalidArgument,
                       "-J \"bastion\": not supported: k8s-agent connects to "
                       "the pod IP directly"));
  EXPECT_THAT(Parse({"-L", "8080:localhost:80", "h", "c"}),
              StatusIs(Code::kInvalidArgument, "never forwards ports"));
  EXPECT_THAT(Parse({"-N", "h"}),
              StatusIs(Code::kInvalidArgument, "-N: not supported"));
}

TEST(OptionsTest, AgentOptionsFromArgv) {
  StatusOr<Options> o =
      Parse({"--namespace", "mpi", "--kubeconfig=/k/config", "--token-file",
             "/t/token", "--certificate-authority=/t/ca.crt", "--selector",
             "role=worker", "--timeout", "90s", "--trace=/tmp/trace.jsonl",
             "--wait-for", "Ready", "--fail-on-reasons",
             "ErrImagePull, CrashLoopBackOff", "w-0", "hostname"});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->cluster.ns, "mpi");
  EXPECT_EQ(o->cluster.kubeconfig, "/k/config");
  EXPECT_EQ(o->cluster.token_file, "/t/token");
  EXPECT_EQ(o->cluster.certificate_authority, "/t/ca.crt");
  EXPECT_EQ(o->selector, "role=worker");
  EXPECT_EQ(o->timeout, std::chrono::seconds(90));
  EXPECT_EQ(o->trace_file, "/tmp/trace.jsonl");
  EXPECT_EQ(o->wait_for, WaitFor::kReady);
  EXPECT_THAT(o->fail_on_reasons,
              ElementsAre("ErrImagePull", "CrashLoopBackOff"));
}

TEST(OptionsTest, LongOptionsLastOneWins) {
  StatusOr<Options> o = Parse({"--namespace", "a", "h", "--namespace=b", "c"});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->cluster.ns, "b");
}

TEST(OptionsTest, FailOnReasonsNoneOrEmptyDisables) {
  for (const char* value : {"none", ""}) {
    StatusOr<Options> o =
        Parse({std::string("--fail-on-reasons=") + value, "h", "c"});
    ASSERT_THAT(o, IsOk());
    EXPECT_THAT(o->fail_on_reasons, IsEmpty());
  }
}

TEST(OptionsTest, ServerWithColonFromEnvironment) {
  StatusOr<Options> o =
      Parse({"h", "c"}, {{"K8S_AGENT_SERVER", "https://10.96.0.1:443"}});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->cluster.server, "https://10.96.0.1:443");
}

TEST(OptionsTest, HelpAndVersionNeedNothingElse) {
  Parser p({{"K8S_AGENT_TIMEOUT", "garbage"}}, {});
  StatusOr<Options> o = p.Parse({"--help"});
  ASSERT_THAT(o, IsOk());
  EXPECT_TRUE(o->help);
  EXPECT_THAT(p.read(), IsEmpty());  // A broken config cannot block --help.
  o = p.Parse({"--version"});
  ASSERT_THAT(o, IsOk());
  EXPECT_TRUE(o->version);
  o = p.Parse({"-V"});  // As ssh -V.
  ASSERT_THAT(o, IsOk());
  EXPECT_TRUE(o->version);
  o = p.Parse({"-v", "--help", "hostA"});
  ASSERT_THAT(o, IsOk());
  EXPECT_TRUE(o->help);
  o = p.Parse({"-h"});  // ssh has no -h: no agent string can mean else.
  ASSERT_THAT(o, IsOk());
  EXPECT_TRUE(o->help);
  o = p.Parse({"hostA", "-vh", "cmd"});
  ASSERT_THAT(o, IsOk());
  EXPECT_TRUE(o->help);
}

// ---------------------------------------------------------------------------
// Modes.

TEST(OptionsTest, WaitOnlyTakesManyHosts) {
  StatusOr<Options> o = Parse({"--wait-only", "--timeout", "5m", "w-0",
                               "alice@w-1", "--namespace", "mpi", "w-2"});
  ASSERT_THAT(o, IsOk());
  EXPECT_TRUE(o->wait_only);
  EXPECT_THAT(o->hosts, ElementsAre("w-0", "w-1", "w-2"));
  EXPECT_EQ(o->host, "w-0");
  EXPECT_EQ(o->ssh.user, "alice");
  EXPECT_EQ(o->cluster.ns, "mpi");
  EXPECT_THAT(o->command_words, IsEmpty());
  EXPECT_EQ(o->command, "");
}

TEST(OptionsTest, WaitOnlyRightAfterFirstHost) {
  StatusOr<Options> o = Parse({"w-0", "--wait-only", "w-1", "--", "-w-2"});
  ASSERT_THAT(o, IsOk());
  EXPECT_THAT(o->hosts, ElementsAre("w-0", "w-1", "-w-2"));
}

TEST(OptionsTest, WaitOnlyAfterCommandStartIsACommandWord) {
  StatusOr<Options> o = Parse({"w-0", "echo", "--wait-only"});
  ASSERT_THAT(o, IsOk());
  EXPECT_FALSE(o->wait_only);
  EXPECT_EQ(o->command, "echo --wait-only");
}

TEST(OptionsTest, HostfileMode) {
  StatusOr<Options> o =
      Parse({"--hostfile", "--selector", "role=worker", "--slots", "4",
             "--ssh-ready", "--wait-for-count=3"});
  ASSERT_THAT(o, IsOk());
  EXPECT_TRUE(o->hostfile);
  EXPECT_EQ(o->selector, "role=worker");
  EXPECT_EQ(o->slots, 4);
  EXPECT_TRUE(o->ssh_ready);
  EXPECT_EQ(o->wait_for_count, 3);
  EXPECT_THAT(o->hosts, IsEmpty());
  EXPECT_EQ(o->host, "");
}

TEST(OptionsTest, HostfileSlotsFromResource) {
  StatusOr<Options> o =
      Parse({"--hostfile", "--slots-from-resource=nvidia.com/gpu"});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->slots_from_resource, "nvidia.com/gpu");
  EXPECT_EQ(o->slots, 0);
}

TEST(OptionsTest, HostfileFormat) {
  StatusOr<Options> o = Parse({"--hostfile"});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->format, OutputFormat::kOpenMpi);
  o = Parse({"--hostfile", "--format", "Horovod"});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->format, OutputFormat::kHorovod);
  o = Parse({"--hostfile"}, {{"K8S_AGENT_FORMAT", "horovod"}});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->format, OutputFormat::kHorovod);
  o = Parse({"--format=horovod", "h", "c"});
  ASSERT_THAT(o, IsOk());
  EXPECT_THAT(Join(o->notes, "\n"), HasSubstr("--format"));
}

TEST(OptionsTest, ReportMode) {
  StatusOr<Options> o = Parse({"--report", "a.jsonl", "--svg", "l.svg",
                               "b.jsonl", "--chrome=l.json", "--format=json"});
  ASSERT_THAT(o, IsOk());
  EXPECT_TRUE(o->report);
  EXPECT_THAT(o->hosts, ElementsAre("a.jsonl", "b.jsonl"));
  EXPECT_EQ(o->svg_file, "l.svg");
  EXPECT_EQ(o->chrome_file, "l.json");
  EXPECT_EQ(o->format, OutputFormat::kJson);
  o = Parse({"--report", "a.jsonl"});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->format, OutputFormat::kText);
}

TEST(OptionsTest, ReportModeErrors) {
  EXPECT_THAT(Parse({"--report"}),
              StatusIs(Code::kInvalidArgument, "no trace file given"));
  EXPECT_THAT(Parse({"--report", "--format", "horovod", "t"}),
              StatusIs(Code::kInvalidArgument, "not a report format"));
  EXPECT_THAT(Parse({"--report", "--hostfile"}),
              StatusIs(Code::kInvalidArgument, "use one mode"));
  EXPECT_THAT(Parse({"--svg", "x.svg", "h", "c"}),
              StatusIs(Code::kInvalidArgument, "given without --report"));
  EXPECT_THAT(Parse({"--hostfile", "--format", "json"}),
              StatusIs(Code::kInvalidArgument, "not a hostfile format"));
  // Outputs and the mode are command-line only.
  StatusOr<Options> o = Parse(
      {"h", "c"}, {{"K8S_AGENT_SVG", "x.svg"}, {"K8S_AGENT_REPORT", "1"}});
  ASSERT_THAT(o, IsOk());
  EXPECT_FALSE(o->report);
  EXPECT_EQ(o->svg_file, "");
}

TEST(OptionsTest, FormatDefaultFromEnvOrFileFitsEachMode) {
  // One K8S_AGENT_FORMAT for the discovery script must not break --report
  // (nor a report default break --hostfile): it gives way, with a note.
  StatusOr<Options> o =
      Parse({"--report", "t.jsonl"}, {{"K8S_AGENT_FORMAT", "horovod"}});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->format, OutputFormat::kText);
  EXPECT_THAT(Join(o->notes, "\n"),
              HasSubstr("ignoring K8S_AGENT_FORMAT \"horovod\" for --report: "
                        "not a report format; using text"));
  o = Parse({"--report", "t.jsonl"}, {},
            {{"/etc/k8s-agent.conf", "format=horovod\n"}});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->format, OutputFormat::kText);
  o = Parse({"--report", "t.jsonl"}, {{"K8S_AGENT_FORMAT", "json"}});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->format, OutputFormat::kJson);
  o = Parse({"--hostfile"}, {{"K8S_AGENT_FORMAT", "json"}});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->format, OutputFormat::kOpenMpi);
  EXPECT_THAT(Join(o->notes, "\n"), HasSubstr("not a hostfile format"));
  // On the command line the flag beats the environment, and a format of
  // the other mode is still an error.
  o = Parse({"--report", "--format=json", "t.jsonl"},
            {{"K8S_AGENT_FORMAT", "horovod"}});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->format, OutputFormat::kJson);
  EXPECT_THAT(Parse({"--report", "--format", "openmpi", "t"},
                    {{"K8S_AGENT_FORMAT", "json"}}),
              StatusIs(Code::kInvalidArgument,
                       "--report --format openmpi: not a report format (use "
                       "text or json)"));
}

TEST(OptionsTest, FormatNames) {
  EXPECT_STREQ(FormatName(OutputFormat::kOpenMpi), "openmpi");
  EXPECT_STREQ(FormatName(OutputFormat::kHorovod), "horovod");
  EXPECT_STREQ(FormatName(OutputFormat::kText), "text");
  EXPECT_STREQ(FormatName(OutputFormat::kJson), "json");
}

TEST(OptionsTest, HostfileOnlyOptionsOutsideHostfileAreNoted) {
  StatusOr<Options> o = Parse({"--slots", "2", "h", "c"});
  ASSERT_THAT(o, IsOk());
  EXPECT_THAT(Join(o->notes, "\n"), HasSubstr("--hostfile only"));
}

// ---------------------------------------------------------------------------
// Environment and config file.

TEST(OptionsTest, PrecedenceFlagsThenEnvThenFile) {
  const Files files = {{"/etc/k8s-agent.conf",
                        "namespace=from-file\ntimeout=1m\nselector=a=b\n"}};
  const Env env = {{"K8S_AGENT_NAMESPACE", "from-env"},
                   {"K8S_AGENT_TIMEOUT", "2m"}};
  StatusOr<Options> o =
      Parse({"--namespace", "from-flag", "h", "c"}, env, files);
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->cluster.ns, "from-flag");
  EXPECT_EQ(o->timeout, std::chrono::minutes(2));
  EXPECT_EQ(o->selector, "a=b");
  EXPECT_EQ(o->config_file, "/etc/k8s-agent.conf");

  o = Parse({"h", "c"}, env, files);
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->cluster.ns, "from-env");

  o = Parse({"h", "c"}, {}, files);
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->cluster.ns, "from-file");
  EXPECT_EQ(o->timeout, std::chrono::minutes(1));
}

TEST(OptionsTest, EmptyEnvironmentValueMeansUnset) {
  StatusOr<Options> o =
      Parse({"h", "c"}, {{"K8S_AGENT_NAMESPACE", ""}},
            {{"/etc/k8s-agent.conf", "namespace=from-file\n"}});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->cluster.ns, "from-file");
}

TEST(OptionsTest, EveryEnvironmentVariable) {
  const Env env = {
      {"K8S_AGENT_NAMESPACE", "ns1"},
      {"K8S_AGENT_KUBECONFIG", "/kc"},
      {"K8S_AGENT_SERVER", "https://k:6443"},
      {"K8S_AGENT_TOKEN_FILE", "/tok"},
      {"K8S_AGENT_CERTIFICATE_AUTHORITY", "/ca"},
      {"K8S_AGENT_SELECTOR", "app=mpi"},
      {"K8S_AGENT_TIMEOUT", "45s"},
      {"K8S_AGENT_WAIT_FOR", "ready"},
      {"K8S_AGENT_FAIL_ON_REASONS", "ErrImagePull"},
      {"K8S_AGENT_TRACE", "/tr"},
      {"K8S_AGENT_SSH_CONFIG", "/tmp/sshd-1000/ssh/config"},
      {"K8S_AGENT_VERBOSE", "2"},
      {"K8S_AGENT_QUIET", "yes"},
      {"K8S_AGENT_SLOTS", "8"},
      {"K8S_AGENT_SSH_READY", "true"},
      {"K8S_AGENT_WAIT_FOR_COUNT", "5"},
  };
  StatusOr<Options> o = Parse({"--hostfile"}, env);
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->cluster.ns, "ns1");
  EXPECT_EQ(o->cluster.kubeconfig, "/kc");
  EXPECT_EQ(o->cluster.server, "https://k:6443");
  EXPECT_EQ(o->cluster.token_file, "/tok");
  EXPECT_EQ(o->cluster.certificate_authority, "/ca");
  EXPECT_EQ(o->selector, "app=mpi");
  EXPECT_EQ(o->timeout, std::chrono::seconds(45));
  EXPECT_EQ(o->wait_for, WaitFor::kReady);
  EXPECT_THAT(o->fail_on_reasons, ElementsAre("ErrImagePull"));
  EXPECT_EQ(o->trace_file, "/tr");
  EXPECT_EQ(o->ssh_config_file, "/tmp/sshd-1000/ssh/config");
  EXPECT_EQ(o->verbosity, 2);
  EXPECT_TRUE(o->quiet);
  EXPECT_EQ(o->slots, 8);
  EXPECT_TRUE(o->ssh_ready);
  EXPECT_EQ(o->wait_for_count, 5);
  EXPECT_THAT(o->notes, IsEmpty());
}

TEST(OptionsTest, VerboseFlagBeatsEnvironment) {
  StatusOr<Options> o = Parse({"-v", "h", "c"}, {{"K8S_AGENT_VERBOSE", "2"}});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->verbosity, 1);
  o = Parse({"h", "c"}, {{"K8S_AGENT_VERBOSE", "true"}});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->verbosity, 1);
}

TEST(OptionsTest, UnknownOrModeEnvironmentVariablesAreNotes) {
  StatusOr<Options> o = Parse({"h", "c"}, {{"K8S_AGENT_NAMSPACE", "typo"},
                                           {"K8S_AGENT_WAIT_ONLY", "1"},
                                           {"K8S_AGENT_CONFIG", ""},
                                           {"PATH", "/usr/bin"}});
  ASSERT_THAT(o, IsOk());
  EXPECT_FALSE(o->wait_only);
  std::string notes = Join(o->notes, "\n");
  EXPECT_THAT(notes, HasSubstr("K8S_AGENT_NAMSPACE"));
  EXPECT_THAT(notes, HasSubstr("K8S_AGENT_WAIT_ONLY"));
  EXPECT_THAT(notes, Not(HasSubstr("K8S_AGENT_CONFIG")));
}

TEST(OptionsTest, ConfigFileSyntax) {
  const Files files = {{"/etc/k8s-agent.conf",
                        "# k8s-agent settings for worker pods\r\n"
                        "\r\n"
                        "  server = https://10.96.0.1:443  \r\n"
                        "K8S_AGENT_TOKEN_FILE=/var/run/secrets/token\n"
                        "namespace=\"mpi\"\n"
                        "selector='role=worker'\n"
                        "trace=\n"
                        "fail-on-reasons=ErrImagePull,CrashLoopBackOff\n"
                        "verbose=1\n"
                        "timeout=1m\n"
                        "timeout=3m\n"}};
  StatusOr<Options> o = Parse({"h", "c"}, {}, files);
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->cluster.server, "https://10.96.0.1:443");
  EXPECT_EQ(o->cluster.token_file, "/var/run/secrets/token");
  EXPECT_EQ(o->cluster.ns, "mpi");
  EXPECT_EQ(o->selector, "role=worker");
  EXPECT_EQ(o->trace_file, "");
  EXPECT_THAT(o->fail_on_reasons,
              ElementsAre("ErrImagePull", "CrashLoopBackOff"));
  EXPECT_EQ(o->verbosity, 1);
  EXPECT_EQ(o->timeout, std::chrono::minutes(3));  // Last line wins.
}

TEST(OptionsTest, ConfigPathFromEnvOrFlag) {
  const Files files = {{"/etc/k8s-agent.conf", "namespace=default-file\n"},
                       {"/x.conf", "namespace=env-file\n"},
                       {"/y.conf", "namespace=flag-file\n"}};
  Parser by_env({{"K8S_AGENT_CONFIG", "/x.conf"}}, files);
  StatusOr<Options> o = by_env.Parse({"h", "c"});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->cluster.ns, "env-file");
  EXPECT_EQ(o->config_file, "/x.conf");
  EXPECT_THAT(by_env.read(), ElementsAre("/x.conf"));

  o = by_env.Parse({"--config", "/y.conf", "h", "c"});
  ASSERT_THAT(o, IsOk());
  EXPECT_EQ(o->cluster.ns, "flag-file");
}

TEST(OptionsTest, MissingDefaultConfigFileIsFine) {
  Parser p;
  StatusOr<Options> o = p.Parse({"h", "c"});
  ASSERT_THAT(o, IsOk());
  EXPECT_THAT(p.read(), ElementsAre("/etc/k8s-agent.conf"));
  EXPECT_EQ(o->config_file, "");
}

TEST(OptionsTest, UnreadableDefaultConfigFileIsAnError) {
  Parser p;
  p.Deny("/etc/k8s-agent.conf");
  EXPECT_THAT(p.Parse({"h", "c"}),
              StatusIs(Code::kPermissionDenied,
                       "config file /etc/k8s-agent.conf: open "
                       "/etc/k8s-agent.conf: Permission denied"));
}

// ---------------------------------------------------------------------------
// Every error path.

struct ErrorCase {
  const char* name;
  Args args;
  Env env;
  Files files;
  std::string message;  ///< Expected substring of the message.
};

void PrintTo(const ErrorCase& c, std::ostream* os) { *os << c.name; }

class OptionsErrorTest : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(OptionsErrorTest, IsInvalidArgumentWithMessage) {
  const ErrorCase& c = GetParam();
  EXPECT_THAT(Parse(c.args, c.env, c.files),
              StatusIs(Code::kInvalidArgument, c.message));
}

const ErrorCase kErrors[] = {
    {"UnknownShortFlag",
     {"-Z", "h", "c"},
     {},
     {},
     "-Z: unknown option (k8s-agent takes the ssh options"},
    {"UnknownFlagInGroup",
     {"-qZ", "h", "c"},
     {},
     {},
     "-Z (in \"-qZ\"): unknown option"},
    {"UnknownSshFlagAfterHost", {"h", "-Z", "c"}, {}, {}, "-Z: unknown option"},
    {"UnknownLongFlag",
     {"--bogus", "h", "c"},
     {},
     {},
     "--bogus: unknown option (see k8s-agent --help)"},
    {"UnknownLongFlagWithValue",
     {"--bogus=1", "h", "c"},
     {},
     {},
     "--bogus: unknown option"},
    {"MissingShortValue", {"h", "-p"}, {}, {}, "-p: missing value"},
    {"MissingDashOValue", {"-o"}, {}, {}, "-o: missing value"},
    {"MissingLongValue",
     {"h", "--timeout"},
     {},
     {},
     "--timeout: missing value (use --timeout DURATION or --timeout=DURATION)"},
    {"ValueForBooleanLongFlag",
     {"--help=yes"},
     {},
     {},
     "--help: takes no value"},
    {"BadDuration",
     {"--timeout", "abc", "h", "c"},
     {},
     {},
     "--timeout \"abc\": invalid duration (use e.g. 30s, 10m)"},
    {"ZeroDuration",
     {"--timeout=0s", "h", "c"},
     {},
     {},
     "--timeout \"0s\": must be positive (use e.g. 30s, 10m)"},
    {"NoArgs",
     {},
     {},
     {},
     "no HOST given: k8s-agent needs a pod to run on (usage: k8s-agent"},
    {"OnlyOptions", {"-p", "22", "-q"}, {}, {}, "no HOST given"},
    {"NoCommand",
     {"h"},
     {},
     {},
     "no remote command: k8s-agent runs commands, it has no interactive shell "
     "(give the command after HOST, e.g. k8s-agent h hostname)"},
    {"NoCommandAfterOptions", {"h", "-p", "22"}, {}, {}, "no remote command"},
    {"BlankCommand", {"h", "", " "}, {}, {}, "no remote command"},
    {"NoCommandAfterDashDash", {"h", "--"}, {}, {}, "no remote command"},
    {"PortNotANumber",
     {"-p", "abc", "h", "c"},
     {},
     {},
     "-p \"abc\": invalid port (use a number from 1 to 65535)"},
    {"PortZero", {"-p0", "h", "c"}, {}, {}, "-p \"0\": invalid port"},
    {"PortTooBig",
     {"h", "-p", "65536", "c"},
     {},
     {},
     "-p \"65536\": invalid port"},
    {"PortNegative", {"-p", "-1", "h", "c"}, {}, {}, "-p \"-1\": invalid port"},
    {"EmptyUser", {"-l", "", "h", "c"}, {}, {}, "-l \"\": empty user name"},
    {"EmptyIdentity", {"-i", "", "h", "c"}, {}, {}, "-i \"\": empty file name"},
    {"EmptyUserBeforeAt",
     {"@h", "c"},
     {},
     {},
     "HOST \"@h\": empty user name before '@'"},
    {"EmptyHostAfterAt", {"u@", "c"}, {}, {}, "HOST \"u@\": empty host name"},
    {"EmptyHost", {"", "c"}, {}, {}, "HOST \"\": empty host name"},
    {"DashOWithoutValue",
     {"-o", "Port", "h", "c"},
     {},
     {},
     "-o \"Port\": no value (expected Key=Value) (if a worker's prted ran "
     "this, PRRTE cut plm_ssh_args at its first '='"},
    {"DashOBadValue",
     {"-o", "Port=abc", "h", "c"},
     {},
     {},
     "-o \"Port=abc\": "},
    {"DashOBadLogLevel",
     {"-o", "LogLevel=LOUD", "h", "c"},
     {},
     {},
     "-o \"LogLevel=LOUD\": LogLevel: unknown level"},
    {"BadWaitFor",
     {"--wait-for=maybe", "h", "c"},
     {},
     {},
     "--wait-for \"maybe\": unknown state (use running or ready)"},
    {"BadReason",
     {"--fail-on-reasons", "Image Pull", "h", "c"},
     {},
     {},
     "\"Image Pull\" is not a reason name"},
    {"BadNamespace",
     {"--namespace", "My_NS", "h", "c"},
     {},
     {},
     "--namespace \"My_NS\": not a valid namespace name"},
    {"EmptyLongValue",
     {"--selector=", "h", "c"},
     {},
     {},
     "--selector \"\": empty value"},
    {"EmptyConfigFlag",
     {"--config=", "h", "c"},
     {},
     {},
     "--config \"\": empty file name"},
    {"ZeroSlots",
     {"--hostfile", "--slots", "0"},
     {},
     {},
     "--slots \"0\": not a whole number >= 1"},
    {"BadWaitForCount",
     {"--hostfile", "--wait-for-count", "x"},
     {},
     {},
     "--wait-for-count \"x\": not a whole number >= 1"},
    {"SlotsAndResource",
     {"--hostfile", "--slots", "2", "--slots-from-resource", "nvidia.com/gpu"},
     {},
     {},
     "--slots and --slots-from-resource: both given (use one)"},
    {"HostfileWithHost",
     {"--hostfile", "w0"},
     {},
     {},
     "--hostfile \"w0\": takes no HOST"},
    {"UnknownHostfileFormat",
     {"--hostfile", "--format", "slurm"},
     {},
     {},
     "--format \"slurm\": unknown format (use openmpi or horovod (--hostfile), "
     "text or json (--report))"},
    {"HostfileAndWaitOnly",
     {"--hostfile", "--wait-only"},
     {},
     {},
     "--hostfile and --wait-only: both given"},
    {"WaitOnlyWithoutHosts",
     {"--wait-only", "--timeout", "1m"},
     {},
     {},
     "no HOST given"},
    {"BadEnvDuration",
     {"h", "c"},
     {{"K8S_AGENT_TIMEOUT", "abc"}},
     {},
     "K8S_AGENT_TIMEOUT \"abc\": invalid duration (use e.g. 30s, 10m)"},
    {"BadEnvBoolean",
     {"h", "c"},
     {{"K8S_AGENT_QUIET", "maybe"}},
     {},
     "K8S_AGENT_QUIET \"maybe\": not a boolean"},
    {"BadEnvVerbose",
     {"h", "c"},
     {{"K8S_AGENT_VERBOSE", "loud"}},
     {},
     "K8S_AGENT_VERBOSE \"loud\": invalid verbosity"},
    {"BadFileDuration",
     {"h", "c"},
     {},
     {{"/etc/k8s-agent.conf", "\n# x\ntimeout=abc\n"}},
     "/etc/k8s-agent.conf:3: timeout \"abc\": invalid duration"},
    {"UnknownConfigKey",
     {"h", "c"},
     {},
     {{"/etc/k8s-agent.conf", "namespace=a\nbogus=1\n"}},
     "/etc/k8s-agent.conf:2: unknown setting \"bogus\" (known: namespace, "
     "kubeconfig, server"},
    {"UnknownEnvSpellingInFile",
     {"h", "c"},
     {},
     {{"/etc/k8s-agent.conf", "K8S_AGENT_BOGUS=1\n"}},
     "/etc/k8s-agent.conf:1: unknown setting \"K8S_AGENT_BOGUS\""},
    {"ModeKeyInFile",
     {"h", "c"},
     {},
     {{"/etc/k8s-agent.conf", "wait-only=true\n"}},
     "/etc/k8s-agent.conf:1: unknown setting \"wait-only\""},
    {"ConfigLineWithoutEquals",
     {"h", "c"},
     {},
     {{"/etc/k8s-agent.conf", "namespace mpi\n"}},
     "/etc/k8s-agent.conf:1: expected name=value, got \"namespace mpi\""},
    {"MissingConfigFromEnv",
     {"h", "c"},
     {{"K8S_AGENT_CONFIG", "/nope.conf"}},
     {},
     "K8S_AGENT_CONFIG \"/nope.conf\": config file not found (create it, or "
     "point K8S_AGENT_CONFIG at an existing file)"},
    {"MissingConfigFromFlag",
     {"--config", "/nope.conf", "h", "c"},
     {},
     {},
     "--config \"/nope.conf\": config file not found"},
};

INSTANTIATE_TEST_SUITE_P(EveryErrorPath, OptionsErrorTest,
                         ::testing::ValuesIn(kErrors),
                         [](const ::testing::TestParamInfo<ErrorCase>& param) {
                           return std::string(param.param.name);
                         });

TEST(OptionsTest, ErrorsPrintControlBytesSafely) {
  StatusOr<Options> o = Parse({"--timeout", "1\x1b[2J", "h", "c"});
  ASSERT_THAT(o, StatusIs(Code::kInvalidArgument));
  EXPECT_THAT(o.status().message(), HasSubstr("1\\x1b[2J"));
}

// ---------------------------------------------------------------------------
// --help and --version.

TEST(UsageTextTest, DocumentsEveryOptionAndVariable) {
  std::string usage = UsageText();
  for (const char* text : {"--namespace NS",
                           "--kubeconfig FILE",
                           "--server URL",
                           "--token-file FILE",
                           "--certificate-authority FILE",
                           "--selector LABELS",
                           "--timeout DURATION",
                           "--wait-for STATE",
                           "--fail-on-reasons LIST",
                           "--trace FILE",
                           "--ssh-config FILE",
                           "--verbose",
                           "--quiet",
                           "--wait-only",
                           "--hostfile",
                           "--slots N",
                           "--slots-from-resource NAME",
                           "--ssh-ready",
                           "--wait-for-count N",
                           "--config FILE",
                           "--help",
                           "--version",
                           "-p PORT",
                           "-l USER",
                           "-i FILE",
                           "-o KEY=VALUE",
                           "-n",
                           "-q",
                           "-h",
                           "-v",
                           "-t, -tt",
                           "-x -X -T -4 -6 -a -A -k -C",
                           "K8S_AGENT_NAMESPACE",
                           "K8S_AGENT_KUBECONFIG",
                           "K8S_AGENT_SERVER",
                           "K8S_AGENT_TOKEN_FILE",
                           "K8S_AGENT_CERTIFICATE_AUTHORITY",
                           "K8S_AGENT_SELECTOR",
                           "K8S_AGENT_TIMEOUT",
                           "K8S_AGENT_WAIT_FOR",
                           "K8S_AGENT_FAIL_ON_REASONS",
                           "K8S_AGENT_TRACE",
                           "K8S_AGENT_SSH_CONFIG",
                           "K8S_AGENT_VERBOSE",
                           "K8S_AGENT_QUIET",
                           "K8S_AGENT_SLOTS",
                           "K8S_AGENT_SLOTS_FROM_RESOURCE",
                           "K8S_AGENT_SSH_READY",
                           "K8S_AGENT_WAIT_FOR_COUNT",
                           "K8S_AGENT_CONFIG",
                           "/etc/k8s-agent.conf",
                           "name=value",
                           "ImagePullBackOff, ErrImagePull",
                           "CrashLoopBackOff",
                           "255",
                           "PRTE_MCA_plm_ssh_agent"}) {
    EXPECT_THAT(usage, HasSubstr(text));
  }
}

TEST(UsageTextTest, DocumentsSignalExitAndAlgorithmOptions) {
  // A remote death by signal N exits 128+N (ssh: 255); say so, and name
  // the algorithm options and their OpenSSH 9 defaults.
  std::string usage = UsageText();
  EXPECT_THAT(usage, HasSubstr("128+N when it died of signal N"));
  EXPECT_THAT(usage, HasSubstr("Ciphers, KexAlgorithms"));
  EXPECT_THAT(usage,
              HasSubstr("MACs, HostKeyAlgorithms (default: OpenSSH 9's"));
}

TEST(UsageTextTest, FitsIn80Columns) {
  std::istringstream lines(UsageText());
  std::string line;
  while (std::getline(lines, line)) {
    EXPECT_LE(line.size(), 80u) << line;
  }
}

TEST(UsageTextTest, Version) {
  EXPECT_THAT(VersionText(),
              ::testing::MatchesRegex("k8s-agent [0-9A-Za-z.+-]+\ncommit "
                                      "([0-9a-f]{40}(-dirty)?|unknown) "
                                      "\\(.+\\)\n"));
}

}  // namespace
}  // namespace k8s_agent
