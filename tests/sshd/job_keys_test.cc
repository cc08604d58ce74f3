// SPDX-License-Identifier: Apache-2.0
#include "plugin/sshd/job_keys.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <thread>

#include "gtest/gtest.h"
#include "tests/sshd/secret_dir.h"

namespace k8s_agent::sshd {
namespace {

TEST(JobKeysTest, ProjectLayoutUsesTheDedicatedHostKey) {
  SecretDir s;
  std::string user = OpensshKeyText("none");
  std::string host = OpensshKeyText("none") + "#host";
  s.Add("id_ed25519", user);
  s.Add("id_ed25519.pub", kEd25519Pub + "\n");
  s.Add("ssh_host_ed25519_key", host);
  s.Add("ssh_host_ed25519_key.pub", kEcdsaPub + "\n");
  auto keys = LoadJobKeys(s.path());
  ASSERT_TRUE(keys.ok()) << keys.status().message();
  EXPECT_EQ(keys->host_key_path, s.path() + "/ssh_host_ed25519_key");
  EXPECT_EQ(keys->host_key, host);
  EXPECT_EQ(keys->host_public_key,
            "ecdsa-sha2-nistp521 AAAAE2VjZHNhLXNoYTItbmlzdHA1MjEAAAAIbmlzdHA1"
            "MjE=");
  EXPECT_EQ(keys->user_key, user);
  // No authorized_keys: the user's public key is allowed.
  EXPECT_EQ(keys->authorized_keys,
            kEd25519Pub.substr(0, kEd25519Pub.rfind(' ')) + "\n");
  EXPECT_EQ(keys->layout, "a host key of its own");
}

TEST(JobKeysTest, MpiOperatorLayoutSharesTheUserKeyAsHostKey) {
  SecretDir s;
  s.Add("id_rsa", kPemEcKey);  // ECDSA P-521 under the name id_rsa.
  s.Add("id_rsa.pub", kEcdsaPub + "\n");
  s.Add("authorized_keys", kEcdsaPub + "\n");
  auto keys = LoadJobKeys(s.path());
  ASSERT_TRUE(keys.ok()) << keys.status().message();
  EXPECT_EQ(keys->host_key_path, s.path() + "/id_rsa");
  EXPECT_EQ(keys->host_key, kPemEcKey);
  EXPECT_EQ(keys->authorized_keys_path, s.path() + "/authorized_keys");
  EXPECT_EQ(keys->authorized_keys, kEcdsaPub + "\n");
  EXPECT_FALSE(keys->host_public_key.empty());
  EXPECT_NE(keys->layout.find("mpi-operator"), std::string::npos);
}

TEST(JobKeysTest, SecretsOwnKeyNamesWork) {
  SecretDir s;  // kubernetes.io/ssh-auth names, mounted without items.
  s.Add("ssh-privatekey", kPemEcKey);
  s.Add("ssh-publickey", kEcdsaPub + "\n");
  auto keys = LoadJobKeys(s.path());
  ASSERT_TRUE(keys.ok()) << keys.status().message();
  EXPECT_EQ(keys->host_key_path, s.path() + "/ssh-privatekey");
  EXPECT_EQ(keys->authorized_keys_path, s.path() + "/ssh-publickey");
  EXPECT_EQ(keys->host_public_key, kEcdsaPub.substr(0, kEcdsaPub.rfind(' ')));
}

TEST(JobKeysTest, AuthorizedKeysWithOptionsCount) {
  SecretDir s;
  s.Add("id_rsa", kPemEcKey);
  s.Add("authorized_keys", "# job\nfrom=\"10.0.0.0/8\" " + kEcdsaPub + "\n");
  EXPECT_TRUE(LoadJobKeys(s.path()).ok());
}

TEST(JobKeysTest, NoHostKeyNamesEveryName) {
  SecretDir s;
  s.Add("authorized_keys", kEcdsaPub + "\n");
  auto keys = LoadJobKeys(s.path());
  ASSERT_FALSE(keys.ok());
  EXPECT_NE(keys.status().message().find("no host key in " + s.path()),
            std::string::npos);
  EXPECT_NE(keys.status().message().find("ssh-privatekey"), std::string::npos);
}

TEST(JobKeysTest, NoAuthorizedKeyIsAnError) {
  SecretDir s;
  s.Add("ssh_host_ed25519_key", OpensshKeyText("none"));
  auto keys = LoadJobKeys(s.path());
  ASSERT_FALSE(keys.ok());
  EXPECT_NE(keys.status().message().find("no authorized_keys"),
            std::string::npos);
}

TEST(JobKeysTest, EmptyAuthorizedKeysIsAnError) {
  SecretDir s;
  s.Add("id_rsa", kPemEcKey);
  s.Add("authorized_keys", "# nothing\n\n");
  auto keys = LoadJobKeys(s.path());
  ASSERT_FALSE(keys.ok());
  EXPECT_NE(keys.status().message().find("holds no public key"),
            std::string::npos);
}

TEST(JobKeysTest, PassphraseProtectedKeysAreRefused) {
  SecretDir a;
  a.Add("id_ed25519", OpensshKeyText("aes256-ctr"));
  a.Add("id_ed25519.pub", kEd25519Pub);
  auto keys = LoadJobKeys(a.path());
  ASSERT_FALSE(keys.ok());
  EXPECT_NE(keys.status().message().find("passphrase-protected"),
            std::string::npos);
  SecretDir b;
  b.Add("id_rsa",
        "-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nabc\n"
        "-----END RSA PRIVATE KEY-----\n");
  b.Add("authorized_keys", kEcdsaPub);
  EXPECT_FALSE(LoadJobKeys(b.path()).ok());
}

TEST(JobKeysTest, ADamagedOpenSshKeyIsRefusedWithTheReason) {
  // Given a host key cut short inside its body (END line kept), expect the
  // parser's reason, not sshd's later "no hostkeys available".
  std::string whole = OpensshKeyText("none");
  std::string body_end = "\n-----END";
  std::string cut = whole.substr(0, whole.find(body_end) - 8) +
                    whole.substr(whole.find(body_end));
  SecretDir s;
  s.Add("ssh_host_ed25519_key", cut);
  s.Add("authorized_keys", kEcdsaPub);
  auto keys = LoadJobKeys(s.path());
  ASSERT_FALSE(keys.ok());
  EXPECT_NE(keys.status().message().find(
                s.path() + "/ssh_host_ed25519_key: not an OpenSSH private "
                           "key: truncated at the private section (damaged"),
            std::string::npos)
      << keys.status().message();
}

TEST(JobKeysTest, SomethingElseUnderAKeyNameIsRefused) {
  SecretDir s;
  s.Add("id_rsa", kEcdsaPub);  // A public key where the private one goes.
  s.Add("authorized_keys", kEcdsaPub);
  auto keys = LoadJobKeys(s.path());
  ASSERT_FALSE(keys.ok());
  EXPECT_NE(keys.status().message().find("is not a private key"),
            std::string::npos);
}

TEST(JobKeysTest, DanglingLinkAndMissingDirAreNamed) {
  SecretDir s;
  ASSERT_EQ(symlink("..data/gone", (s.path() + "/id_rsa").c_str()), 0);
  auto keys = LoadJobKeys(s.path());
  ASSERT_FALSE(keys.ok());
  EXPECT_NE(keys.status().message().find("id_rsa is a dangling symlink"),
            std::string::npos);
  auto none = LoadJobKeys(s.root() + "/absent");
  ASSERT_FALSE(none.ok());
  EXPECT_NE(none.status().message().find("is not a directory"),
            std::string::npos);
}

// A FIFO in the Secret's place of `name` whose writer hands over `content`
// as soon as a reader opens it: code that opens it blocking gets the text
// (and then passes, so the test fails), code that refuses it never waits.
class FifoKey {
 public:
  FifoKey(SecretDir& s, const std::string& name, const std::string& content)
      : path_(s.path() + "/..2026_12_01_00_00_00.000000001/" + name) {
    EXPECT_EQ(mkfifo(path_.c_str(), 0644), 0);
    EXPECT_EQ(
        symlink(("..data/" + name).c_str(), (s.path() + "/" + name).c_str()),
        0);
    old_pipe_ = signal(SIGPIPE, SIG_IGN);  // The reader may be gone.
    writer_ = std::thread([this, content] {
      int fd = open(path_.c_str(), O_WRONLY | O_CLOEXEC);  // Until a reader.
      if (fd < 0) return;
      ssize_t ignored = write(fd, content.data(), content.size());
      (void)ignored;
      close(fd);
    });
  }
  ~FifoKey() {
    // Releases a writer still waiting for a reader.
    int fd = open(path_.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    writer_.join();
    if (fd >= 0) close(fd);
    signal(SIGPIPE, old_pipe_);
  }

 private:
  std::string path_;
  std::thread writer_;
  sighandler_t old_pipe_;
};

TEST(JobKeysTest, AFifoAsAKeyFileIsRefusedAtOnce) {
  SecretDir a;
  a.Add("id_rsa", kPemEcKey);
  FifoKey authorized(a, "authorized_keys", kEcdsaPub + "\n");
  auto keys = LoadJobKeys(a.path());
  ASSERT_FALSE(keys.ok());
  EXPECT_NE(keys.status().message().find(a.path() +
                                         "/authorized_keys is a FIFO (named "
                                         "pipe), not a regular file"),
            std::string::npos)
      << keys.status().message();
  SecretDir b;
  b.Add("id_ed25519", OpensshKeyText("none"));
  FifoKey pub(b, "id_ed25519.pub", kEd25519Pub + "\n");
  auto public_half = LoadJobKeys(b.path());
  ASSERT_FALSE(public_half.ok());
  EXPECT_NE(public_half.status().message().find("id_ed25519.pub is a FIFO"),
            std::string::npos)
      << public_half.status().message();
}

TEST(JobKeysTest, ADeviceAsAKeyFileIsRefused) {
  SecretDir s;
  s.Add("id_rsa", kPemEcKey);
  ASSERT_EQ(symlink("/dev/null", (s.path() + "/authorized_keys").c_str()), 0);
  auto keys = LoadJobKeys(s.path());
  ASSERT_FALSE(keys.ok());
  EXPECT_NE(keys.status().message().find("is a character device"),
            std::string::npos)
      << keys.status().message();
}

TEST(JobKeysTest, PublicKeyOfKeepsTypeAndKey) {
  EXPECT_EQ(*PublicKeyOf(kEd25519Pub + "\nsecond line\n"),
            kEd25519Pub.substr(0, kEd25519Pub.rfind(' ')));
  EXPECT_FALSE(PublicKeyOf("not a key").ok());
  EXPECT_FALSE(PublicKeyOf("ssh-ed25519 !!!").ok());
}

}  // namespace
}  // namespace k8s_agent::sshd
