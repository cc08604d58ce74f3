// SPDX-License-Identifier: Apache-2.0
// PodListCache: a file per pod and a stamp naming their list, replaced by
// rename, the lister chosen by a non-blocking flock.

#include "plugin/kube/pod_list_cache.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <set>

#include <nlohmann/json.hpp>

#include "plugin/base/files.h"
#include "plugin/base/log.h"
#include "plugin/base/strings.h"

namespace k8s_agent::kube {
namespace {

using nlohmann::json;

constexpr char kStampFile[] = "fill";
constexpr char kLockFile[] = "lock";
constexpr char kPodPrefix[] = "pod.";
constexpr size_t kMaxStampBytes = 4096;

// A pod's name is a DNS subdomain: lower-case letters, digits, '-' and '.',
// starting with a letter or digit. Anything else is never a file name here.
bool IsPodName(const std::string& name) {
  if (name.empty() || name.size() > 253) return false;
  if (!std::isalnum(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' ||
              c == '.';
    if (!ok) return false;
  }
  return true;
}

}  // namespace

std::string SharedPodListDir(const std::string& cache_dir,
                             const std::string& tmp_dir) {
  if (StartsWith(cache_dir, "/") && EnsurePrivateDir(cache_dir + "/pods")) {
    return cache_dir + "/pods";
  }
  if (!StartsWith(tmp_dir, "/")) return "";
  std::string tmp =
      tmp_dir + "/k8s-agent-" + std::to_string(::geteuid()) + "-pods";
  if (EnsurePrivateDir(tmp)) return tmp;
  LogInfo("no private directory for the shared pod list (" +
          (cache_dir.empty() ? std::string("no HOME") : cache_dir + "/pods") +
          ", " + tmp +
          "); every lookup goes to the API server: make HOME "
          "or TMPDIR writable (an emptyDir) to share it");
  return "";
}

PodListCache::PodListCache(std::string dir, std::string key, Duration max_age,
                           WallClock now)
    : max_age_(max_age), now_(std::move(now)) {
  if (!dir.empty() && !key.empty()) dir_ = dir + "/" + key;
}

bool PodListCache::shared() {
  if (dir_.empty()) return false;
  if (private_dir_ < 0) {
    private_dir_ = 0;
    if (EnsurePrivateDir(dir_)) {
      StatusOr<UniqueFd> fd = OpenDirNoFollow(dir_);
      // What was opened is checked again: the directory checked by name
      // may have been swapped for another since.
      struct stat st;
      if (fd.ok() && ::fstat(fd->get(), &st) == 0 && st.st_uid == ::geteuid() &&
          (st.st_mode & 077) == 0) {
        dir_fd_ = std::move(*fd);
        private_dir_ = 1;
      }
    }
    if (private_dir_ == 0) {
      LogDebug("shared pod list " + dir_ +
               " is not a private directory of ours; looking up unshared");
    }
  }
  return private_dir_ == 1;
}

std::optional<std::string> PodListCache::ReadPrivate(
    const std::string& name) const {
  UniqueFd fd(::openat(dir_fd_.get(), name.c_str(),
                       O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK));
  if (!fd.valid()) return std::nullopt;
  struct stat st;
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      st.st_uid != ::geteuid() || (st.st_mode & 077) != 0 ||
      static_cast<size_t>(st.st_size) > kMaxSharedPodBytes + kMaxStampBytes) {
    return std::nullopt;
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t got = 0;
  while (got < text.size()) {
    ssize_t n = ::read(fd.get(), text.data() + got, text.size() - got);
    if (n <= 0) return std::nullopt;
    got += static_cast<size_t>(n);
  }
  return text;
}

std::optional<PodListCache::Stamp> PodListCache::ReadStamp() const {
  if (private_dir_ != 1) return std::nullopt;
  std::optional<std::string> text = ReadPrivate(kStampFile);
  if (!text || text->size() > kMaxStampBytes) return std::nullopt;
  json doc = json::parse(*text, nullptr, false);
  if (!doc.is_object()) return std::nullopt;
  Stamp s;
  s.id = doc.value("id", "");
  s.at_ms = doc.value("at_ms", int64_t{0});
  s.rv = doc.value("rv", "");
  s.complete = doc.value("complete", false);
  // A stamp from the future (the clock went back) is as good as none.
  int64_t age_ms = now_() - s.at_ms;
  if (s.id.empty() || age_ms < 0 ||
      age_ms > std::chrono::duration_cast<std::chrono::milliseconds>(max_age_)
                   .count()) {
    return std::nullopt;
  }
  return s;
}

PodListCache::Latest PodListCache::latest() const {
  std::optional<Stamp> s = ReadStamp();
  if (!s) return Latest::kNone;
  return s->complete ? Latest::kListed : Latest::kUnlistable;
}

std::optional<PodListCache::Entry> PodListCache::Find(
    const std::string& name) const {
  if (!IsPodName(name)) return std::nullopt;
  std::optional<Stamp> s = ReadStamp();
  if (!s || !s->complete) return std::nullopt;
  std::optional<std::string> text = ReadPrivate(kPodPrefix + name);
  if (!text) return std::nullopt;
  // The file names the list it came from: one of an older list (the pod
  // was not in the latest, or a newer list is being written) is not used.
  size_t eol = text->find('\n');
  if (eol == std::string::npos || text->compare(0, eol, s->id) != 0) {
    return std::nullopt;
  }
  Entry e;
  e.object = text->substr(eol + 1);
  e.rv = s->rv;
  e.age = std::chrono::milliseconds(now_() - s->at_ms);
  return e;
}

PodListCache::Lock PodListCache::TryLock() {
  if (!shared()) return Lock::kUnshared;
  if (locked_) return Lock::kHeld;
  if (!lock_fd_.valid()) {
    lock_fd_.reset(::openat(dir_fd_.get(), kLockFile,
                            O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600));
  }
  if (!lock_fd_.valid()) {
    LogDebug("shared pod list: could not open " + dir_ + "/" + kLockFile +
             ": " + std::strerror(errno) + "; looking up unshared");
    return Lock::kUnshared;
  }
  if (::flock(lock_fd_.get(), LOCK_EX | LOCK_NB) == 0) {
    locked_ = true;
    fill_id_ = std::to_string(::getpid()) + "-" + std::to_string(now_());
    return Lock::kHeld;
  }
  if (errno == EWOULDBLOCK || errno == EINTR) return Lock::kBusy;
  LogDebug("shared pod list: flock " + dir_ + "/" + kLockFile + ": " +
           std::strerror(errno) + "; looking up unshared");
  return Lock::kUnshared;
}

Status PodListCache::WriteStamp(bool complete, const std::string& rv) {
  json doc = {
      {"id", fill_id_}, {"at_ms", now_()}, {"rv", rv}, {"complete", complete}};
  return WriteFileAtomicallyAt(dir_fd_.get(), dir_, kStampFile, doc.dump(),
                               0600);
}

Status PodListCache::Store(
    const std::vector<std::pair<std::string, std::string>>& pods,
    const std::string& rv) {
  if (!locked_) return FailedPreconditionError("the list lock is not held");
  if (pods.size() > kMaxSharedPods) {
    return StoreUnlistable(std::to_string(pods.size()) + " pods, more than " +
                           std::to_string(kMaxSharedPods));
  }
  std::vector<std::string> kept;
  for (const auto& [name, object] : pods) {
    if (!IsPodName(name) || object.size() > kMaxSharedPodBytes) continue;
    K8S_RETURN_IF_ERROR(WriteFileAtomicallyAt(dir_fd_.get(), dir_,
                                              kPodPrefix + name,
                                              fill_id_ + "\n" + object, 0600));
    kept.push_back(kPodPrefix + name);
  }
  // Last: a reader that sees this stamp finds every pod file of its list.
  K8S_RETURN_IF_ERROR(WriteStamp(/*complete=*/true, rv));
  RemoveOtherPods(kept);
  return OkStatus();
}

Status PodListCache::StoreUnlistable(const std::string& why) {
  if (!locked_) return FailedPreconditionError("the list lock is not held");
  LogDebug("shared pod list " + dir_ + ": not shared (" + why +
           "); each agent looks its pod up itself for " +
           FormatDuration(max_age_));
  return WriteStamp(/*complete=*/false, "");
}

// Pods a later list no longer has (a finished job's, a replaced pod's old
// name) would otherwise stay for good; they are never read (their fill id
// is not the stamp's), so this only bounds the directory.
void PodListCache::RemoveOtherPods(const std::vector<std::string>& kept) {
  StatusOr<std::vector<std::string>> names = ListDirAt(dir_fd_.get(), dir_);
  if (!names.ok()) return;
  std::set<std::string> keep(kept.begin(), kept.end());
  for (const std::string& name : *names) {
    if (StartsWith(name, kPodPrefix) && keep.count(name) == 0) {
      ::unlinkat(dir_fd_.get(), name.c_str(), 0);
    }
  }
}

void PodListCache::Release() {
  if (!locked_) return;
  ::flock(lock_fd_.get(), LOCK_UN);
  locked_ = false;
}

}  // namespace k8s_agent::kube
