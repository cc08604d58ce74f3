// SPDX-License-Identifier: Apache-2.0
#include "plugin/sshd/job_keys.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstring>
#include <optional>
#include <string_view>
#include <vector>

#include "plugin/base/base64.h"
#include "plugin/base/files.h"
#include "plugin/base/openssh_key.h"
#include "plugin/base/strings.h"
#include "plugin/base/unique_fd.h"

namespace k8s_agent::sshd {
namespace {

// In the order they are preferred. A dedicated host key wins over the user
// key doubling as one.
constexpr std::array<const char*, 3> kHostKeyNames = {
    "ssh_host_ed25519_key", "ssh_host_ecdsa_key", "ssh_host_rsa_key"};
constexpr std::array<const char*, 4> kUserKeyNames = {
    "id_ed25519", "id_ecdsa", "id_rsa", "ssh-privatekey"};

// Key files are small; a bigger one is not a key.
constexpr size_t kMaxKeyFile = 1 << 20;

Status NotRegular(const std::string& path, mode_t mode) {
  return FailedPreconditionError(
      path + " is " + FileTypeName(mode) + ", not a regular file: a Secret " +
      "volume holds only files (mount the job's ssh Secret there, or pass " +
      "--keys DIR holding the key files themselves)");
}

// A Secret's key names with a path that exists (after the ..data links).
// A dangling link or a directory under a key's name is an error: the
// Secret is broken, and skipping it would pick another key silently.
StatusOr<std::optional<std::string>> FirstPresent(const std::string& dir,
                                                  const char* const* names,
                                                  size_t count) {
  for (size_t i = 0; i < count; ++i) {
    std::string path = JoinPath(dir, names[i]);
    struct stat st {};
    if (lstat(path.c_str(), &st) != 0) continue;
    if (stat(path.c_str(), &st) != 0) {
      return FailedPreconditionError(path + " is a dangling symlink (" +
                                     std::string(std::strerror(errno)) + ")");
    }
    if (!S_ISREG(st.st_mode)) return NotRegular(path, st.st_mode);
    return std::optional<std::string>(path);
  }
  return std::optional<std::string>();
}

template <size_t N>
StatusOr<std::optional<std::string>> FirstPresent(
    const std::string& dir, const std::array<const char*, N>& names) {
  return FirstPresent(dir, names.data(), names.size());
}

// Opened without blocking (a FIFO's open would wait for a writer that never
// comes, and a device's may too), then checked on the descriptor itself:
// what is read is what was checked. Symlinks are followed: the kubelet's
// ..data links are how a Secret volume names its files.
StatusOr<std::string> ReadKeyFile(const std::string& path) {
  UniqueFd fd(open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC));
  if (!fd.valid()) {
    // Opening a socket fails with ENXIO: name it as such.
    struct stat st {};
    if (errno == ENXIO && stat(path.c_str(), &st) == 0 &&
        !S_ISREG(st.st_mode)) {
      return NotRegular(path, st.st_mode);
    }
    return ErrnoError("reading " + path + ": open", errno);
  }
  struct stat st {};
  if (fstat(fd.get(), &st) != 0) return ErrnoError("stat " + path, errno);
  if (!S_ISREG(st.st_mode)) return NotRegular(path, st.st_mode);
  if (st.st_size > static_cast<off_t>(kMaxKeyFile)) {
    return FailedPreconditionError(
        path + " is " + std::to_string(st.st_size) + " bytes, larger than " +
        "any key (" + std::to_string(kMaxKeyFile) + "): the Secret holds " +
        "something else under that name");
  }
  std::string out;
  char buf[8192];
  while (true) {
    ssize_t n = read(fd.get(), buf, sizeof(buf));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("reading " + path, errno);
    if (n == 0) break;
    out.append(buf, static_cast<size_t>(n));
    if (out.size() > kMaxKeyFile) {
      return FailedPreconditionError(path + " grew past " +
                                     std::to_string(kMaxKeyFile) +
                                     " bytes while it was read");
    }
  }
  return out;
}

// sshd loads host keys without a terminal: a key it cannot use is a
// permanent failure, better named now than as "no hostkeys available".
Status CheckPrivateKey(const std::string& path, std::string_view text) {
  if (text.find("-----BEGIN ") == std::string_view::npos ||
      text.find("PRIVATE KEY-----") == std::string_view::npos) {
    return FailedPreconditionError(
        path + " is not a private key (no \"-----BEGIN ... PRIVATE KEY-----\"" +
        " line): the Secret holds something else under that name");
  }
  // PEM says "ENCRYPTED" in its BEGIN line (PKCS#8) or a Proc-Type header.
  bool encrypted = text.find("ENCRYPTED") != std::string_view::npos;
  if (HasOpenSshKeyArmour(text)) {
    StatusOr<OpenSshKey> key = ParseOpenSshKey(text);
    if (!key.ok()) {
      return FailedPreconditionError(
          path + ": " + key.status().message() + " (damaged: copy it into " +
          "the Secret again, or make a new key with ssh-keygen -N '')");
    }
    encrypted = key->encrypted();
  }
  if (encrypted) {
    return FailedPreconditionError(
        path + " is passphrase-protected: sshd cannot load it unattended " +
        "(generate the job key with an empty passphrase, ssh-keygen -N '')");
  }
  return OkStatus();
}

// Where a private key's public half sits: key.pub, or mpi-operator's
// ssh-publickey beside ssh-privatekey.
std::string PublicPathOf(const std::string& private_path) {
  constexpr std::string_view kRaw = "ssh-privatekey";
  if (EndsWith(private_path, kRaw)) {
    return private_path.substr(0, private_path.size() - kRaw.size()) +
           "ssh-publickey";
  }
  return private_path + ".pub";
}

// The public half of `private_path` if the directory has it.
StatusOr<std::optional<std::string>> ReadPublicOf(
    const std::string& private_path) {
  std::string pub = PublicPathOf(private_path);
  struct stat st {};
  if (stat(pub.c_str(), &st) != 0) return std::optional<std::string>();
  K8S_ASSIGN_OR_RETURN(std::string text, ReadKeyFile(pub));
  auto key = PublicKeyOf(text);
  if (!key.ok()) return key.status().WithContext(pub);
  return std::optional<std::string>(*key);
}

bool LooksLikePublicKey(std::string_view line) {
  // An authorized_keys line may start with options; its key type follows.
  for (std::string_view type :
       {"ssh-", "ecdsa-sha2-", "sk-ssh-", "sk-ecdsa-"}) {
    if (StartsWith(line, type) ||
        line.find(" " + std::string(type)) != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

Status CheckAuthorizedKeys(const std::string& path, const std::string& text) {
  for (const std::string& line : Split(text, '\n')) {
    std::string_view l = Trim(line);
    if (!l.empty() && l[0] != '#' && LooksLikePublicKey(l)) return OkStatus();
  }
  return FailedPreconditionError(
      path + " holds no public key: no one could log in (put the job's " +
      "public key in it, one per line)");
}

Status LoadHostKey(const std::string& dir, JobKeys& keys) {
  K8S_ASSIGN_OR_RETURN(auto host, FirstPresent(dir, kHostKeyNames));
  if (host) {
    keys.host_key_path = *host;
    K8S_ASSIGN_OR_RETURN(keys.host_key, ReadKeyFile(*host));
    K8S_RETURN_IF_ERROR(CheckPrivateKey(*host, keys.host_key));
    keys.layout = "a host key of its own";
  } else if (!keys.user_key_path.empty()) {
    keys.host_key_path = keys.user_key_path;
    keys.host_key = keys.user_key;
    keys.layout =
        "the user key doubles as host key, as mpi-operator, Trainer and "
        "Volcano lay it out";
  } else {
    return FailedPreconditionError(
        "no host key in " + dir + ": none of ssh_host_ed25519_key, " +
        "ssh_host_ecdsa_key, ssh_host_rsa_key, id_ed25519, id_ecdsa, id_rsa " +
        "or ssh-privatekey (mount the job's ssh Secret there, or pass " +
        "--keys DIR)");
  }
  K8S_ASSIGN_OR_RETURN(auto pub, ReadPublicOf(keys.host_key_path));
  if (pub) keys.host_public_key = *pub;
  return OkStatus();
}

Status LoadAuthorizedKeys(const std::string& dir, JobKeys& keys) {
  std::string path = JoinPath(dir, "authorized_keys");
  struct stat st {};
  if (lstat(path.c_str(), &st) == 0) {
    K8S_ASSIGN_OR_RETURN(keys.authorized_keys, ReadKeyFile(path));
    keys.authorized_keys_path = path;
    return CheckAuthorizedKeys(path, keys.authorized_keys);
  }
  if (!keys.user_key_path.empty()) {
    K8S_ASSIGN_OR_RETURN(auto pub, ReadPublicOf(keys.user_key_path));
    if (pub) {
      keys.authorized_keys = *pub + "\n";
      keys.authorized_keys_path = PublicPathOf(keys.user_key_path);
      return OkStatus();
    }
  }
  return FailedPreconditionError(
      "no authorized_keys in " + dir + ", and no public user key " +
      "(id_ed25519.pub, id_ecdsa.pub, id_rsa.pub or ssh-publickey) to " +
      "allow: add one of them to the job's ssh Secret");
}

}  // namespace

StatusOr<std::string> PublicKeyOf(const std::string& text) {
  std::string first = std::string(Trim(Split(text, '\n').front()));
  std::vector<std::string> words;
  for (const std::string& w : Split(first, ' ')) {
    if (!w.empty()) words.push_back(w);
  }
  if (words.size() < 2 || !LooksLikePublicKey(words[0]) ||
      !Base64Decode(words[1])) {
    return FailedPreconditionError(
        "not an OpenSSH public key (\"type base64 [comment]\")");
  }
  return words[0] + " " + words[1];
}

StatusOr<JobKeys> LoadJobKeys(const std::string& dir) {
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return FailedPreconditionError("keys dir " + dir +
                                   " is not a directory (mount the job's ssh " +
                                   "Secret there, or pass --keys DIR)");
  }
  JobKeys keys;
  K8S_ASSIGN_OR_RETURN(auto user, FirstPresent(dir, kUserKeyNames));
  if (user) {
    keys.user_key_path = *user;
    K8S_ASSIGN_OR_RETURN(keys.user_key, ReadKeyFile(*user));
    K8S_RETURN_IF_ERROR(CheckPrivateKey(*user, keys.user_key));
  }
  K8S_RETURN_IF_ERROR(LoadHostKey(dir, keys));
  K8S_RETURN_IF_ERROR(LoadAuthorizedKeys(dir, keys));
  return keys;
}

}  // namespace k8s_agent::sshd
