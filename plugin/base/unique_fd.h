// SPDX-License-Identifier: Apache-2.0
// RAII owner of a file descriptor.

#ifndef K8S_AGENT_PLUGIN_BASE_UNIQUE_FD_H_
#define K8S_AGENT_PLUGIN_BASE_UNIQUE_FD_H_

#include <unistd.h>

#include <utility>

namespace k8s_agent {

/// Owns one fd and closes it on destruction. Movable, not copyable.
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& other) noexcept : fd_(other.release()) {}
  UniqueFd& operator=(UniqueFd&& other) noexcept {
    if (this != &other) reset(other.release());
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  ~UniqueFd() { reset(); }

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  int release() { return std::exchange(fd_, -1); }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_BASE_UNIQUE_FD_H_
