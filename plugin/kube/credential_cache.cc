// SPDX-License-Identifier: Apache-2.0
// CredentialCache: a JSON file per exec config, written under flock.

#include "plugin/kube/credential_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "plugin/base/log.h"
#include "plugin/base/strings.h"
#include "plugin/base/unique_fd.h"

namespace k8s_agent::kube {
namespace {

using nlohmann::json;

// Waiting for another agent's plugin: its own run is bounded by
// kExecTimeoutSeconds, so a lock held longer belongs to a stuck process.
constexpr int kLockWaitMs = (kExecTimeoutSeconds + 10) * 1000;
constexpr int kLockPollMs = 20;

// mkdir -p with 0700 for what it creates; the last component must end up a
// directory of ours that nobody else can write, or it is not used: another
// user could otherwise plant a credential for us.
bool EnsurePrivateDir(const std::string& dir) {
  for (size_t slash = dir.find('/', 1);; slash = dir.find('/', slash + 1)) {
    std::string part = dir.substr(0, slash);
    if (::mkdir(part.c_str(), 0700) != 0 && errno != EEXIST) return false;
    if (slash == std::string::npos) break;
  }
  struct stat st;
  if (::lstat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) ||
      st.st_uid != ::geteuid()) {
    return false;
  }
  if ((st.st_mode & 077) != 0 && ::chmod(dir.c_str(), 0700) != 0) return false;
  return true;
}

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

// Holds flock(LOCK_EX) on a file for its lifetime.
class FileLock {
 public:
  explicit FileLock(const std::string& path)
      : fd_(::open(path.c_str(), O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC,
                   0600)) {
    if (!fd_.valid()) return;
    for (int waited = 0; waited < kLockWaitMs; waited += kLockPollMs) {
      if (::flock(fd_.get(), LOCK_EX | LOCK_NB) == 0) {
        locked_ = true;
        return;
      }
      if (errno != EWOULDBLOCK && errno != EINTR) return;
      ::usleep(kLockPollMs * 1000);
    }
  }
  ~FileLock() {
    if (locked_) ::flock(fd_.get(), LOCK_UN);
  }
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  bool locked() const { return locked_; }

 private:
  UniqueFd fd_;
  bool locked_ = false;
};

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

bool CredentialCache::Fresh(const ExecCredential& cred,
                            const std::string& stale) const {
  if (!stale.empty() && cred.token == stale) return false;
  return cred.expires_at > now_() + kCredentialMarginSeconds;
}

StatusOr<ExecCredential> CredentialCache::RunAndStore(const Runner& run) {
  StatusOr<ExecCredential> cred = run();
  if (!cred.ok() || file_.empty()) return cred;
  if (cred->expires_at == 0) {
    // Not persisted (kubectl's cache is in memory); an old file for the
    // same config must not outlive this answer either.
    ::unlink(file_.c_str());
  } else if (Status w = WriteCached(file_, *cred); !w.ok()) {
    LogDebug("exec credential cache: " + w.message());
  }
  return cred;
}

StatusOr<ExecCredential> CredentialCache::Get(const Runner& run,
                                              const std::string& stale_token) {
  if (file_.empty() || !EnsurePrivateDir(dir_)) {
    if (!file_.empty()) {
      LogDebug("exec credential cache " + dir_ +
               " is not a private directory of ours; not sharing");
    }
    return run();
  }
  // Fast path: no lock when the file is good.
  StatusOr<ExecCredential> cached = ReadCached(file_);
  if (cached.ok() && Fresh(*cached, stale_token)) return cached;
  FileLock lock(lock_);
  if (!lock.locked()) {
    LogDebug("exec credential cache: could not lock " + lock_ +
             "; running the plugin unshared");
    return run();
  }
  // Whoever held the lock may have just written a fresh one.
  cached = ReadCached(file_);
  if (cached.ok() && Fresh(*cached, stale_token)) return cached;
  return RunAndStore(run);
}

}  // namespace k8s_agent::kube
