// SPDX-License-Identifier: Apache-2.0
// A Secret volume as the kubelet lays it out, for the sshd layer's tests:
// DIR/..2026_12_01_00_00_00.000000001/<files>, DIR/..data -> that, and
// DIR/<name> -> ..data/<name>, files 0644 (defaultMode 420).
#ifndef K8S_AGENT_TESTS_SSHD_SECRET_DIR_H_
#define K8S_AGENT_TESTS_SSHD_SECRET_DIR_H_

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace k8s_agent::sshd {

// Base64 of an OpenSSH-format private key's start, enough for the cipher
// check: "openssh-key-v1\0", then the cipher name as an SSH string.
inline std::string OpensshKeyText(const std::string& cipher) {
  std::string raw("openssh-key-v1\0", 15);
  uint32_t n = static_cast<uint32_t>(cipher.size());
  raw += static_cast<char>(n >> 24);
  raw += static_cast<char>((n >> 16) & 0xff);
  raw += static_cast<char>((n >> 8) & 0xff);
  raw += static_cast<char>(n & 0xff);
  raw += cipher + std::string(8, 'x');
  static const char* kAlphabet =
      "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string b64;
  size_t i = 0;
  for (; i + 2 < raw.size(); i += 3) {
    uint32_t v = (static_cast<unsigned char>(raw[i]) << 16) |
                 (static_cast<unsigned char>(raw[i + 1]) << 8) |
                 static_cast<unsigned char>(raw[i + 2]);
    for (int s = 18; s >= 0; s -= 6) b64 += kAlphabet[(v >> s) & 63];
  }
  if (i + 1 == raw.size()) {
    uint32_t v = static_cast<unsigned char>(raw[i]) << 16;
    b64 += std::string{kAlphabet[(v >> 18) & 63], kAlphabet[(v >> 12) & 63]};
    b64 += "==";
  } else if (i + 2 == raw.size()) {
    uint32_t v = (static_cast<unsigned char>(raw[i]) << 16) |
                 (static_cast<unsigned char>(raw[i + 1]) << 8);
    b64 += std::string{kAlphabet[(v >> 18) & 63], kAlphabet[(v >> 12) & 63],
                       kAlphabet[(v >> 6) & 63]};
    b64 += "=";
  }
  return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + b64 +
         "\n-----END OPENSSH PRIVATE KEY-----\n";
}

inline const std::string kEd25519Pub =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAICb2YplAvDz2O8JemAXac7tW9fFbTGBAnn6i"
    "NINiG6M1 job@example";
inline const std::string kEcdsaPub =
    "ecdsa-sha2-nistp521 AAAAE2VjZHNhLXNoYTItbmlzdHA1MjEAAAAIbmlzdHA1MjE= "
    "mpi-operator";
inline const std::string kPemEcKey =
    "-----BEGIN EC PRIVATE KEY-----\nMIHcAgEBBEIB\n"
    "-----END EC PRIVATE KEY-----\n";

class SecretDir {
 public:
  SecretDir() {
    char templ[] = "/tmp/k8s-sshd-test.XXXXXX";
    root_ = mkdtemp(templ);
    dir_ = root_ + "/secret";
    data_ = "..2026_12_01_00_00_00.000000001";
    mkdir(dir_.c_str(), 0777);
    mkdir((dir_ + "/" + data_).c_str(), 0755);
    EXPECT_EQ(symlink(data_.c_str(), (dir_ + "/..data").c_str()), 0);
  }
  ~SecretDir() { std::filesystem::remove_all(root_); }
  SecretDir(const SecretDir&) = delete;
  SecretDir& operator=(const SecretDir&) = delete;

  void Add(const std::string& name, const std::string& content) {
    std::string file = dir_ + "/" + data_ + "/" + name;
    std::ofstream(file) << content;
    chmod(file.c_str(), 0644);
    EXPECT_EQ(symlink(("..data/" + name).c_str(), (dir_ + "/" + name).c_str()),
              0);
  }
  const std::string& path() const { return dir_; }
  const std::string& root() const { return root_; }

 private:
  std::string root_;
  std::string dir_;
  std::string data_;
};

}  // namespace k8s_agent::sshd

#endif  // K8S_AGENT_TESTS_SSHD_SECRET_DIR_H_
