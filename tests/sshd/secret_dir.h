// SPDX-License-Identifier: Apache-2.0
// A Secret volume as the kubelet lays it out, for the sshd layer's tests:
// DIR/..2026_12_01_00_00_00.000000001/<files>, DIR/..data -> that, and
// DIR/<name> -> ..data/<name>, files 0644 (defaultMode 420).
#ifndef K8S_AGENT_TESTS_SSHD_SECRET_DIR_H_
#define K8S_AGENT_TESTS_SSHD_SECRET_DIR_H_

#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "plugin/base/base64.h"

namespace k8s_agent::sshd {

// An OpenSSH-format private key with `cipher` ("none" or a passphrase's),
// whole as far as the format check reads: magic, cipher, KDF, one ed25519
// public key, a private section of whole blocks with equal check words.
inline std::string OpensshKeyText(const std::string& cipher) {
  auto wire = [](std::string_view s) {
    uint32_t n = static_cast<uint32_t>(s.size());
    std::string out{
        static_cast<char>(n >> 24), static_cast<char>((n >> 16) & 0xff),
        static_cast<char>((n >> 8) & 0xff), static_cast<char>(n & 0xff)};
    return out + std::string(s);
  };
  std::string raw("openssh-key-v1\0", 15);
  raw += wire(cipher) + wire(cipher == "none" ? "none" : "bcrypt") + wire("");
  raw += std::string("\0\0\0\1", 4);  // One key.
  raw += wire(wire("ssh-ed25519") + wire(std::string(32, 'k')));
  raw += wire("chekchek" + std::string(8, 'p'));  // Check words, padding.
  return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + Base64Encode(raw) +
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
