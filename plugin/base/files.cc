// SPDX-License-Identifier: Apache-2.0
#include "plugin/base/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <climits>
#include <utility>
#include <vector>

#include "plugin/base/unique_fd.h"

namespace k8s_agent {
namespace {

Status WriteAll(int fd, const char* data, size_t size,
                const std::string& path) {
  while (size > 0) {
    ssize_t n = write(fd, data, size);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoError("write " + path, errno);
    data += n;
    size -= static_cast<size_t>(n);
  }
  return OkStatus();
}

// The temporary file's name: beside the target (so rename stays on one
// file system), unique per process.
std::string TempPathFor(const std::string& path) {
  return path + ".tmp." + std::to_string(getpid());
}

// Gives `fd` (the temporary `tmp`) its mode and owner, closes it and
// renames it to `path`; removes `tmp` on any failure, including `status`'s.
Status Finish(Status status, UniqueFd fd, const std::string& tmp,
              const std::string& path, mode_t mode,
              std::optional<FileOwner> owner) {
  // fchmod, not the open mode: the umask must not take bits away.
  if (status.ok() && fchmod(fd.get(), mode) != 0) {
    status = ErrnoError("chmod " + tmp, errno);
  }
  if (status.ok() && owner && fchown(fd.get(), owner->uid, owner->gid) != 0) {
    status = ErrnoError("chown " + tmp, errno);
  }
  if (status.ok() && close(fd.release()) != 0) {
    status = ErrnoError("close " + tmp, errno);
  }
  if (status.ok() && rename(tmp.c_str(), path.c_str()) != 0) {
    status = ErrnoError("rename " + tmp + " to " + path, errno);
  }
  if (!status.ok()) unlink(tmp.c_str());
  return status;
}

StatusOr<UniqueFd> CreateTemp(const std::string& tmp) {
  UniqueFd out(
      open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (!out.valid()) return ErrnoError("create " + tmp, errno);
  return out;
}

}  // namespace

Status WriteFileAtomically(const std::string& path, std::string_view content,
                           mode_t mode, std::optional<FileOwner> owner) {
  std::string tmp = TempPathFor(path);
  K8S_ASSIGN_OR_RETURN(UniqueFd out, CreateTemp(tmp));
  Status status = WriteAll(out.get(), content.data(), content.size(), tmp);
  return Finish(status, std::move(out), tmp, path, mode, owner);
}

Status CopyFileAtomically(const std::string& src, const std::string& dst,
                          mode_t mode) {
  UniqueFd in(open(src.c_str(), O_RDONLY | O_CLOEXEC));
  if (!in.valid()) return ErrnoError("open " + src, errno);
  std::string tmp = TempPathFor(dst);
  K8S_ASSIGN_OR_RETURN(UniqueFd out, CreateTemp(tmp));
  std::array<char, 1 << 16> buf{};
  Status status;
  while (status.ok()) {
    ssize_t n = read(in.get(), buf.data(), buf.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      status = ErrnoError("read " + src, errno);
    } else if (n == 0) {
      break;
    } else {
      status = WriteAll(out.get(), buf.data(), static_cast<size_t>(n), tmp);
    }
  }
  return Finish(status, std::move(out), tmp, dst, mode, std::nullopt);
}

StatusOr<std::string> SelfExeDir() {
  std::vector<char> buf(PATH_MAX + 1);
  ssize_t n = readlink("/proc/self/exe", buf.data(), buf.size() - 1);
  if (n < 0) return ErrnoError("readlink /proc/self/exe", errno);
  std::string path(buf.data(), static_cast<size_t>(n));
  size_t slash = path.rfind('/');
  return slash == 0 ? std::string("/") : path.substr(0, slash);
}

std::string JoinPath(const std::string& dir, const std::string& name) {
  return dir == "/" ? dir + name : dir + "/" + name;
}

}  // namespace k8s_agent
