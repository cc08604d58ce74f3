// SPDX-License-Identifier: Apache-2.0
// EnsureStdFdsOpen: /dev/null in place of a closed fd 0, 1 or 2.

#include "plugin/base/std_fds.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <string>

namespace k8s_agent {

Status EnsureStdFdsOpen() {
  for (int fd = 0; fd <= 2; ++fd) {
    if (::fcntl(fd, F_GETFD) >= 0 || errno != EBADF) continue;
    // open() returns the lowest free fd: this one, since the lower ones
    // are open by now. No O_CLOEXEC: it stands in for an inherited fd.
    int got = ::open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
    if (got < 0)
      return ErrnoError("opening /dev/null for fd " + std::to_string(fd),
                        errno);
    if (got != fd) {
      ::close(got);
      return InternalError("fd " + std::to_string(fd) +
                           " is closed and /dev/null did not take its place");
    }
  }
  return OkStatus();
}

}  // namespace k8s_agent
