// SPDX-License-Identifier: Apache-2.0
// SshConnection against differently configured sshds: every common key
// type as user key and as host key, and the PEM keys the operators write
// (named id_rsa whatever their type); the permanent handshake failures
// (nothing in common, a key type this build cannot use, a key it cannot
// read) failing at once with a message naming both sides; signals through
// the "signal" request, or the fallback channel where sshd refuses it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fcntl.h>

#include <fstream>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "plugin/base/event_loop.h"
#include "plugin/base/log.h"
#include "plugin/base/strings.h"
#include "plugin/base/unique_fd.h"
#include "plugin/ssh/ssh_client.h"
#include "tests/fakes/log_capture.h"
#include "tests/fakes/status_matchers.h"
#include "tests/integration/ssh/sshd_client_test.h"

namespace k8s_agent::ssh {
namespace {

using State = SshConnection::State;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::SshdClientOptions;
using testing::SshdClientTest;
using testing::SshdFixture;
using testing::SshdSetup;

class KeyTypesTest : public SshdClientTest {
 protected:
  ResolvedSshOptions Options() const {
    ResolvedSshOptions o = SshdClientOptions(*sshd_, known_hosts_);
    // Long: a permanent failure must come from the handshake, not this.
    o.connect_timeout = std::chrono::seconds(60);
    return o;
  }

  // Connects and runs the loop until the connection is ready or failed.
  std::unique_ptr<SshConnection> ConnectAndWait(const ResolvedSshOptions& o) {
    auto c = Connect(o);
    RunUntil([&] {
      return c->state() == State::kReady || c->state() == State::kFailed;
    });
    loop_.Remove(c.get());
    return c;
  }
};

// --- Every type works both ways. ---------------------------------------

struct KeyCase {
  const char* type;           // ssh-keygen notation (SshdSetup).
  const char* host_key_algs;  // What the server may sign with.
};

class EveryKeyType : public KeyTypesTest,
                     public ::testing::WithParamInterface<KeyCase> {};

TEST_P(EveryKeyType, AsUserKeyAndAsHostKey) {
  const KeyCase& k = GetParam();
  // The server signs only with this type and accepts only this type of
  // user key: nothing else can make the handshake or auth pass.
  StartSshd({k.type,
             k.type,
             {std::string("HostKeyAlgorithms ") + k.host_key_algs,
              std::string("PubkeyAcceptedAlgorithms ") + k.host_key_algs}});
  auto c = ConnectAndWait(Options());
  EXPECT_EQ(c->state(), State::kReady)
      << c->status().ToString() << "\nsshd log:\n"
      << sshd_->Log();
  // sshd names the user key type it accepted.
  EXPECT_THAT(sshd_->Log(), HasSubstr("Accepted publickey"));
}

INSTANTIATE_TEST_SUITE_P(
    OpenSsh, EveryKeyType,
    ::testing::Values(KeyCase{"ed25519", "ssh-ed25519"},
                      KeyCase{"ecdsa-256", "ecdsa-sha2-nistp256"},
                      KeyCase{"ecdsa-384", "ecdsa-sha2-nistp384"},
                      KeyCase{"ecdsa-521", "ecdsa-sha2-nistp521"},
                      KeyCase{"rsa-2048", "rsa-sha2-512,rsa-sha2-256"},
                      KeyCase{"rsa-3072", "rsa-sha2-512,rsa-sha2-256"},
                      KeyCase{"rsa-4096", "rsa-sha2-512,rsa-sha2-256"}),
    [](const ::testing::TestParamInfo<KeyCase>& param) {
      std::string name = param.param.type;
      for (char& ch : name) {
        if (ch == '-') ch = '_';
      }
      return name;
    });

// --- Keys as the operators write them. ------------------------------------

// mpi-operator v0.8 and Kubeflow Trainer v2.3 put ONE ECDSA P-521 key in
// SEC1 PEM ("BEGIN EC PRIVATE KEY", Go's x509.MarshalECPrivateKey) into the
// Secret item id_rsa, and every worker's sshd uses it as its host key too;
// Volcano's ssh plugin writes an RSA-2048 key in PKCS#1 PEM ("BEGIN RSA
// PRIVATE KEY") as id_rsa. Neither is ssh-keygen's openssh-key-v1 format,
// and the file name says nothing of the key's type.
struct PemCase {
  const char* type;         // SshdSetup's notation.
  const char* algs;         // What the server may sign and accept.
  const char* begin;        // The PEM header the key must have.
  const char* logged_type;  // sshd's "Accepted publickey ... ssh2: TYPE".
  bool host_key;            // The same key is the server's host key.
};

// For ctest's listing: the key, not its bytes.
void PrintTo(const PemCase& k, std::ostream* os) { *os << k.type; }

class OperatorPemKey : public KeyTypesTest,
                       public ::testing::WithParamInterface<PemCase> {};

TEST_P(OperatorPemKey, IdRsaInPemWorks) {
  const PemCase& k = GetParam();
  std::vector<std::string> config = {std::string("PubkeyAcceptedAlgorithms ") +
                                     k.algs};
  // Only the job key can sign: a handshake that passes verified it.
  if (k.host_key) config.push_back(std::string("HostKeyAlgorithms ") + k.algs);
  auto f = SshdFixture::Create({"ed25519", "ed25519", config}, false);
  ASSERT_THAT(f.status(), IsOk());
  sshd_ = std::move(f).value();
  std::string key = sshd_->dir() + "/id_rsa";
  // "ecdsa-521" is ssh-keygen's -t ecdsa -b 521.
  std::string type = k.type;
  size_t dash = type.find('-');
  ASSERT_THAT(SshdFixture::Run({"/usr/bin/ssh-keygen", "-q", "-N", "", "-C",
                                "job", "-f", key, "-t", type.substr(0, dash),
                                "-b", type.substr(dash + 1)}),
              IsOk());
  // In place to PEM: SEC1 for ECDSA, PKCS#1 for RSA.
  ASSERT_THAT(SshdFixture::Run({"/usr/bin/ssh-keygen", "-q", "-p", "-P", "",
                                "-N", "", "-m", "PEM", "-f", key}),
              IsOk());
  auto text = ReadFileToString(key);
  ASSERT_THAT(text.status(), IsOk());
  ASSERT_THAT(*text, ::testing::StartsWith(k.begin));
  auto pub = ReadFileToString(key + ".pub");
  ASSERT_THAT(pub.status(), IsOk());
  std::vector<std::string> words = Split(std::string(Trim(*pub)), ' ');
  ASSERT_GE(words.size(), 2u);
  std::ofstream(sshd_->dir() + "/authorized_keys", std::ios::trunc) << *pub;
  if (k.host_key) {
    // HostKey adds to the fixture's own (it is not first-wins).
    std::ofstream(sshd_->dir() + "/sshd_config", std::ios::app)
        << "HostKey " << key << "\n";
  }
  ASSERT_THAT(sshd_->Start(), IsOk());
  auto kh =
      sshd_->WriteKnownHosts("w0", k.host_key ? words[0] + " " + words[1] : "");
  ASSERT_THAT(kh.status(), IsOk());
  known_hosts_ = *kh;

  ResolvedSshOptions o = Options();
  o.identity_files = {key};
  auto c = ConnectAndWait(o);
  EXPECT_EQ(c->state(), State::kReady)
      << c->status().ToString() << "\nsshd log:\n"
      << sshd_->Log();
  EXPECT_THAT(sshd_->Log(),
              HasSubstr(std::string("ssh2: ") + k.logged_type + " SHA256:"));
}

INSTANTIATE_TEST_SUITE_P(
    Operators, OperatorPemKey,
    ::testing::Values(PemCase{"ecdsa-521", "ecdsa-sha2-nistp521",
                              "-----BEGIN EC PRIVATE KEY-----", "ECDSA", true},
                      PemCase{"rsa-2048", "rsa-sha2-512,rsa-sha2-256",
                              "-----BEGIN RSA PRIVATE KEY-----", "RSA", false}),
    [](const ::testing::TestParamInfo<PemCase>& param) {
      return param.param.host_key ? std::string("MpiOperatorP521Sec1")
                                  : std::string("VolcanoRsa2048Pkcs1");
    });

TEST_F(KeyTypesTest, RefusedSessionNeverCountsAsStarted) {
  // MaxSessions 0: sshd authenticates, then refuses every channel open.
  StartSshd({"ed25519", "ed25519", {"MaxSessions 0"}});
  auto c = ConnectAndWait(Options());
  ASSERT_EQ(c->state(), State::kReady) << c->status().ToString();
  UniqueFd null(::open("/dev/null", O_WRONLY | O_CLOEXEC));
  ASSERT_TRUE(null.valid());
  ASSERT_THAT(c->Exec("true", {-1, null.get(), null.get()}), IsOk());
  loop_.Add(c.get());
  ASSERT_TRUE(RunUntil([&] {
    return c->state() == State::kExited || c->state() == State::kFailed;
  }));
  loop_.Remove(c.get());
  EXPECT_EQ(c->state(), State::kFailed);
  EXPECT_FALSE(c->command_started()) << c->status().ToString();
}

// --- Permanent handshake failures. -------------------------------------

TEST_F(KeyTypesTest, NoCommonKexFailsAtOnceNamingBothSides) {
  StartSshd({"ed25519",
             "ed25519",
             {"KexAlgorithms sntrup761x25519-sha512@openssh.com"}});
  auto c = ConnectAndWait(Options());
  ASSERT_EQ(c->state(), State::kFailed);
  EXPECT_NE(ClassifyForRetry(c->status().code()), RetryClass::kBackoff)
      << c->status().ToString();
  EXPECT_THAT(c->status().message(),
              HasSubstr("no common key exchange algorithm"));
  EXPECT_THAT(c->status().message(),
              HasSubstr("offers sntrup761x25519-sha512@openssh.com;"));
  EXPECT_THAT(c->status().message(), HasSubstr("curve25519-sha256"));
}

TEST_F(KeyTypesTest, DsaHostKeyIsUnsupportedAndFailsAtOnce) {
  // libssh2 1.11.1 has no DSA; OpenSSH 9.2 still offers it when told to.
  StartSshd({"dsa", "ed25519", {"HostKeyAlgorithms ssh-dss"}});
  auto c = ConnectAndWait(Options());
  ASSERT_EQ(c->state(), State::kFailed);
  EXPECT_NE(ClassifyForRetry(c->status().code()), RetryClass::kBackoff)
      << c->status().ToString();
  EXPECT_THAT(c->status().message(),
              HasSubstr("no common host key algorithm (HostKeyAlgorithms): "
                        "the server offers ssh-dss;"));
  EXPECT_THAT(c->status().message(), HasSubstr("ssh-ed25519"));
}

// An sshd that signs only with ssh-rsa (SHA-1): libssh2 has it, the
// defaults leave it out as ssh 9's do. The message says so, as ssh does,
// and the -o it names gets through.
TEST_F(KeyTypesTest, SshRsaOnlyServerSaysHowToAddItBack) {
  StartSshd({"rsa-2048", "ed25519", {"HostKeyAlgorithms ssh-rsa"}});
  auto c = ConnectAndWait(Options());
  ASSERT_EQ(c->state(), State::kFailed);
  EXPECT_NE(ClassifyForRetry(c->status().code()), RetryClass::kBackoff);
  EXPECT_THAT(c->status().message(),
              HasSubstr("no matching host key type found. Their offer: "
                        "ssh-rsa"));
  EXPECT_THAT(c->status().message(),
              HasSubstr("add it back with -o HostKeyAlgorithms=+ssh-rsa"));
  ResolvedSshOptions plus = Options();
  plus.algorithms.host_keys.push_back("ssh-rsa");
  auto ok = ConnectAndWait(plus);
  EXPECT_EQ(ok->state(), State::kReady)
      << ok->status().ToString() << "\nsshd log:\n"
      << sshd_->Log();
}

TEST_F(KeyTypesTest, NoCommonCipherFailsAtOnce) {
  StartSshd({"ed25519",
             "ed25519",
             {"Ciphers aes128-ctr", "MACs umac-64@openssh.com"}});
  auto c = ConnectAndWait(Options());
  ASSERT_EQ(c->state(), State::kFailed);
  EXPECT_NE(ClassifyForRetry(c->status().code()), RetryClass::kBackoff)
      << c->status().ToString();
  EXPECT_THAT(c->status().message(),
              HasSubstr("no common MAC (MACs): the server offers "
                        "umac-64@openssh.com;"));
}

TEST_F(KeyTypesTest, DsaUserKeyIsReportedUnusable) {
  StartSshd({"ed25519", "dsa", {"PubkeyAcceptedAlgorithms +ssh-dss"}});
  auto c = ConnectAndWait(Options());
  ASSERT_EQ(c->state(), State::kFailed);
  EXPECT_NE(ClassifyForRetry(c->status().code()), RetryClass::kBackoff);
  EXPECT_THAT(c->status().message(),
              HasSubstr(sshd_->user_key() + " (unusable"));
}

TEST_F(KeyTypesTest, PassphraseProtectedKeyIsReportedUnusable) {
  StartSshd({});
  ASSERT_THAT(SshdFixture::Run({"/usr/bin/ssh-keygen", "-q", "-p", "-N",
                                "secret", "-f", sshd_->user_key()}),
              IsOk());
  auto c = ConnectAndWait(Options());
  ASSERT_EQ(c->state(), State::kFailed);
  EXPECT_NE(ClassifyForRetry(c->status().code()), RetryClass::kBackoff);
  EXPECT_THAT(c->status().message(), HasSubstr("passphrase"));
  EXPECT_THAT(c->status().message(),
              HasSubstr(sshd_->user_key() + " (unusable"));
}

TEST_F(KeyTypesTest, CorruptKeyIsReportedUnusable) {
  StartSshd({});
  {
    std::ofstream f(sshd_->user_key(), std::ios::trunc);
    f << "-----BEGIN OPENSSH PRIVATE KEY-----\nnot base64 at all\n"
         "-----END OPENSSH PRIVATE KEY-----\n";
  }
  ::unlink((sshd_->user_key() + ".pub").c_str());
  auto c = ConnectAndWait(Options());
  ASSERT_EQ(c->state(), State::kFailed);
  EXPECT_NE(ClassifyForRetry(c->status().code()), RetryClass::kBackoff);
  EXPECT_THAT(c->status().message(),
              HasSubstr(sshd_->user_key() + " (unusable"));
}

// sshd's MaxAuthTries ends the connection with SSH_MSG_DISCONNECT once
// one key too many was offered. libssh2 then only says "Waiting for
// USERAUTH response", which read as an unreadable (too long) Banner: the
// message must be the server's, with what to change, and final (another
// attempt offers the same keys).
TEST_F(KeyTypesTest, MaxAuthTriesDisconnectIsReportedInTheServersWords) {
  StartSshd({"ed25519", "ed25519", {"MaxAuthTries 1"}});
  auto other = sshd_->NewUserKey("not_authorized");
  ASSERT_THAT(other.status(), IsOk());
  ResolvedSshOptions o = Options();
  o.identity_files = {*other, sshd_->user_key()};
  auto c = ConnectAndWait(o);
  ASSERT_EQ(c->state(), State::kFailed) << sshd_->Log();
  const std::string& message = c->status().message();
  EXPECT_THAT(message, HasSubstr("server closed the connection during "
                                 "authentication: \"Too many authentication "
                                 "failures\" (SSH disconnect reason 2)"));
  EXPECT_THAT(message, HasSubstr(*other));
  EXPECT_THAT(message, HasSubstr("MaxAuthTries"));
  EXPECT_THAT(message, Not(HasSubstr("Banner")));
  EXPECT_THAT(c->status(), StatusIs(Code::kPermissionDenied));
  EXPECT_NE(ClassifyForRetry(c->status().code()), RetryClass::kBackoff);
}

// --- Signals. -----------------------------------------------------------

// Runs `sleep` remotely, waits until it started (its output), sends TERM,
// and returns how the command ended.
//
// The wait reads the pipe before each loop round, not only after one:
// under load Exec() itself (its first Advance) can open the channel, run
// the command and copy its "started" into the pipe, and then no fd event
// is left for RunOnce() to return on until the command exits. Reading
// only after RunOnce() then saw "started" when the sleep ended, 30 s
// later, and the signal found no command to end.
ExitResult SignalSleepingCommand(SshConnection* c, EventLoop* loop) {
  int fds[2];
  EXPECT_EQ(::pipe2(fds, O_CLOEXEC | O_NONBLOCK), 0);
  UniqueFd out_read(fds[0]), out_write(fds[1]);
  // Long enough that only the signal can end it within the test.
  EXPECT_THAT(
      c->Exec("echo started; exec sleep 300", {-1, out_write.get(), -1}),
      IsOk());
  loop->Add(c);
  char buf[64];
  std::string got;
  auto drain = [&] {
    ssize_t n;
    while ((n = ::read(out_read.get(), buf, sizeof(buf))) > 0) {
      got.append(buf, static_cast<size_t>(n));
    }
  };
  // Each wait has its own bound (a hang fails the test, it does not eat
  // the next wait's time), and each checks its condition before blocking.
  auto deadline = RealClock::Get()->Now() + testing::kSshdStepTimeout;
  for (drain(); got.find("started") == std::string::npos; drain()) {
    if (c->state() != SshConnection::State::kRunning ||
        RealClock::Get()->Now() > deadline) {
      break;
    }
    EXPECT_THAT(loop->RunOnce(), IsOk());
  }
  EXPECT_THAT(got, HasSubstr("started")) << c->status().ToString();
  c->Signal("TERM");
  deadline = RealClock::Get()->Now() + testing::kSshdStepTimeout;
  while (c->state() != SshConnection::State::kExited &&
         c->state() != SshConnection::State::kFailed &&
         RealClock::Get()->Now() < deadline) {
    EXPECT_THAT(loop->RunOnce(), IsOk());
    drain();
  }
  loop->Remove(c);
  EXPECT_EQ(c->state(), SshConnection::State::kExited)
      << c->status().ToString();
  return c->exit_result();
}

TEST_F(KeyTypesTest, SignalGoesAsTheSshSignalRequestUnlessRoot) {
  StartSshd({"ed25519", "ed25519", {"LogLevel DEBUG1"}});
  auto c = ConnectAndWait(Options());
  ASSERT_EQ(c->state(), State::kReady) << c->status().ToString();
  ExitResult r = SignalSleepingCommand(c.get(), &loop_);
  EXPECT_EQ(r.signal, "TERM");
  if (sshd_->user() == "root") {
    // OpenSSH refuses it for root (no privilege separation): not sent,
    // the helper channel does it at once.
    EXPECT_THAT(sshd_->Log(), Not(HasSubstr("request signal")));
    EXPECT_THAT(sshd_->Log(), HasSubstr("session 1 req exec"));
  } else {
    // sshd's session_signal_req did it (its debug line), not the helper.
    EXPECT_THAT(sshd_->Log(), HasSubstr("signal TERM, killpg("));
  }
}

// A user that exists only for the test's sshd (SshdSetup::login_user): a
// non-root session even when the tests run as root.
constexpr char kLoginUser[] = "k8s-agent-fixture";

class SignalTest : public KeyTypesTest {
 protected:
  // Logs in as kLoginUser on an sshd with `setup`, runs a sleeping command,
  // SIGTERMs it, and returns what -v shows of that.
  std::string SignalAsLoginUser(const SshdSetup& setup, ExitResult* r) {
    StartSshd(setup, kLoginUser);
    EXPECT_NE(sshd_->user(), "root");
    auto c = ConnectAndWait(Options());
    EXPECT_EQ(c->state(), State::kReady) << c->status().ToString();
    if (c->state() != State::kReady) return "";
    SetLogLevel(LogLevel::kInfo);  // What -v shows.
    std::string log =
        CaptureLog([&] { *r = SignalSleepingCommand(c.get(), &loop_); });
    SetLogLevel(LogLevel::kWarning);
    return log;
  }
};

TEST_F(SignalTest, SignalGoesAsTheSshSignalRequestForANonRootLogin) {
  ExitResult r;
  std::string log =
      SignalAsLoginUser({"ed25519", "ed25519", {"LogLevel DEBUG1"}}, &r);
  EXPECT_EQ(r.signal, "TERM") << log;
  EXPECT_THAT(log, HasSubstr("forwarded SIGTERM as an SSH signal request"));
  EXPECT_THAT(log, Not(HasSubstr("second channel")));
  EXPECT_THAT(sshd_->Log(), HasSubstr("signal TERM, killpg("));
}

TEST_F(SignalTest, RefusedSignalRequestFallsBackToAHelperChannel) {
  // OpenSSH 9.2's session_signal_req refuses the request for a
  // ForceCommand (or subsystem) session and sends no reply (RFC 4254 has
  // none): the agent waits kSignalRequestGrace (1 s) for the command to
  // end, then signals its process group through a second exec channel.
  // A non-root login, or the agent would skip the request (root sessions
  // have no privilege separation, so sshd refuses it for them too).
  ExitResult r;
  std::string log =
      SignalAsLoginUser({"ed25519",
                         "ed25519",
                         {"ForceCommand /bin/sh -c \"$SSH_ORIGINAL_COMMAND\""}},
                        &r);
  // The command died of the signal (sshd's exit-signal), not of the
  // agent giving up on it.
  EXPECT_EQ(r.signal, "TERM") << log;
  EXPECT_EQ(r.signal_message, "") << log;
  EXPECT_THAT(sshd_->Log(),
              HasSubstr("refusing to send signal TERM to forced-command"));
  // The -v lines saying which path happened, in order.
  size_t request = log.find("forwarded SIGTERM as an SSH signal request");
  const std::string kIgnored = "after the signal request (the server ignored";
  size_t ignored = log.find(kIgnored);
  size_t helper = log.find(
      "forwarded SIGTERM to the command's process group through a second "
      "channel");
  ASSERT_NE(request, std::string::npos) << log;
  ASSERT_NE(ignored, std::string::npos) << log;
  ASSERT_NE(helper, std::string::npos) << log;
  EXPECT_LT(request, ignored);
  EXPECT_LT(ignored, helper);
  // Said once, not on every retry of the helper channel's open.
  EXPECT_EQ(log.find(kIgnored, ignored + 1), std::string::npos) << log;
}

}  // namespace
}  // namespace k8s_agent::ssh
