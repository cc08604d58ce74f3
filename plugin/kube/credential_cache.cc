// SPDX-License-Identifier: Apache-2.0
// CredentialCache: a JSON file per exec config, replaced by rename, its
// writer chosen by a non-blocking flock.

#include "plugin/kube/credential_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "plugin/base/files.h"
#include "plugin/base/log.h"
#include "plugin/base/strings.h"
#include "plugin/base/unique_fd.h"
#include "plugin/kube/cache_key.h"

namespace k8s_agent::kube {
namespace {

using nlohmann::json;

StatusOr<ExecCredential> ReadCached(const std::string& path) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!fd.valid()) return NotFoundError(path);
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || st.st_uid != ::geteuid() ||
      (st.st_mode & 077) != 0 || st.st_size > (1 << 20)) {
    return FailedPreconditionError(path + ": not a private file of ours");
  }
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd.get(), buf, sizeof(buf))) > 0;) {
    text.append(buf, static_cast<size_t>(n));
  }
  json doc = json::parse(text, nullptr, false);
  if (!doc.is_object()) return FailedPreconditionError(path + ": unreadable");
  ExecCredential c;
  c.token = doc.value("token", "");
  c.client_cert_pem = doc.value("clientCertificateData", "");
  c.client_key_pem = doc.value("clientKeyData", "");
  c.expires_at = doc.value("expiresAt", int64_t{0});
  return c;
}

Status WriteCached(const std::string& path, const ExecCredential& c) {
  json doc = {{"token", c.token},
              {"clientCertificateData", c.client_cert_pem},
              {"clientKeyData", c.client_key_pem},
              {"expiresAt", c.expires_at}};
  std::string text = doc.dump();
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  UniqueFd fd(::open(tmp.c_str(),
                     O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
                     0600));
  if (!fd.valid()) return ErrnoError("creating " + tmp, errno);
  bool ok = ::write(fd.get(), text.data(), text.size()) ==
            static_cast<ssize_t>(text.size());
  fd.reset();
  // Readers see the old file or the new one, never half of one.
  if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return ErrnoError("writing " + path, err);
  }
  return OkStatus();
}

}  // namespace

std::string CredentialCacheDir(const std::string& xdg_cache_home,
                               const std::string& home) {
  // XDG: a relative $XDG_CACHE_HOME is invalid and is ignored.
  if (StartsWith(xdg_cache_home, "/")) return xdg_cache_home + "/k8s-agent";
  if (StartsWith(home, "/")) return home + "/.kube/cache/k8s-agent";
  return "";
}

CredentialCache::CredentialCache(std::string dir, std::string key,
                                 WallClock now)
    : dir_(std::move(dir)), now_(std::move(now)) {
  if (!dir_.empty()) {
    file_ = dir_ + "/" + key + ".json";
    lock_ = dir_ + "/" + key + ".lock";
  }
}

std::string CredentialCache::Key(const ExecConfig& exec,
                                 const std::string& server,
                                 std::vector<std::string> plugin_env) {
  std::vector<std::string> fields = {exec.api_version, exec.command,
                                     std::to_string(exec.args.size())};
  fields.insert(fields.end(), exec.args.begin(), exec.args.end());
  fields.push_back(std::to_string(exec.env.size()));
  for (const auto& [name, value] : exec.env) {
    fields.push_back(name);
    fields.push_back(value);
  }
  fields.push_back(exec.provide_cluster_info ? "cluster-info" : "");
  fields.push_back(server);
  // Sorted: the order environ happens to have is not an identity. Without
  // `_` and SHLVL, which the shell that started the agent sets per command
  // (a job started with & differs from one in the foreground, `env CMD`
  // from CMD): no plugin picks an identity from them.
  plugin_env.erase(std::remove_if(plugin_env.begin(), plugin_env.end(),
                                  [](const std::string& e) {
                                    return StartsWith(e, "_=") ||
                                           StartsWith(e, "SHLVL=");
                                  }),
                   plugin_env.end());
  std::sort(plugin_env.begin(), plugin_env.end());
  fields.push_back(std::to_string(plugin_env.size()));
  fields.insert(fields.end(), plugin_env.begin(), plugin_env.end());
  // SHA-256, not a fast hash: the environment may hold secrets
  // (AWS_SECRET_ACCESS_KEY), and the key is a file name.
  return CacheKey(fields);
}

bool CredentialCache::shared() {
  if (file_.empty()) return false;
  if (private_dir_ < 0) {
    private_dir_ = EnsurePrivateDir(dir_) ? 1 : 0;
    if (private_dir_ == 0) {
      LogDebug("exec credential cache " + dir_ +
               " is not a private directory of ours; not sharing");
    }
  }
  return private_dir_ == 1;
}

bool CredentialCache::Fresh(const ExecCredential& cred,
                            const std::string& stale) const {
  if (!stale.empty() && cred.token == stale) return false;
  return cred.expires_at > now_() + kCredentialMarginSeconds;
}

StatusOr<ExecCredential> CredentialCache::ReadFresh(
    const std::string& stale) const {
  if (file_.empty() || private_dir_ != 1) return NotFoundError("no cache");
  StatusOr<ExecCredential> cached = ReadCached(file_);
  if (cached.ok() && !Fresh(*cached, stale)) {
    return NotFoundError(file_ + ": expiring or refused");
  }
  return cached;
}

CredentialCache::Lock CredentialCache::TryLock() {
  if (!shared()) return Lock::kUnshared;
  if (locked_) return Lock::kHeld;
  if (!lock_fd_.valid()) {
    lock_fd_.reset(
        ::open(lock_.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  }
  if (!lock_fd_.valid()) {
    LogDebug("exec credential cache: could not open " + lock_ + ": " +
             std::strerror(errno) + "; running the plugin unshared");
    return Lock::kUnshared;
  }
  if (::flock(lock_fd_.get(), LOCK_EX | LOCK_NB) == 0) {
    locked_ = true;
    return Lock::kHeld;
  }
  if (errno == EWOULDBLOCK || errno == EINTR) return Lock::kBusy;
  LogDebug("exec credential cache: flock " + lock_ + ": " +
           std::strerror(errno) + "; running the plugin unshared");
  return Lock::kUnshared;
}

void CredentialCache::Store(const ExecCredential& cred) {
  if (!locked_) return;
  if (cred.expires_at == 0) {
    // Not persisted (kubectl's cache is in memory); an old file for the
    // same config must not outlive this answer either.
    ::unlink(file_.c_str());
  } else if (Status w = WriteCached(file_, cred); !w.ok()) {
    LogDebug("exec credential cache: " + w.message());
  }
}

void CredentialCache::Release() {
  if (!locked_) return;
  ::flock(lock_fd_.get(), LOCK_UN);
  locked_ = false;
}

}  // namespace k8s_agent::kube
