// SPDX-License-Identifier: Apache-2.0
// Hands a fuzz input to code that reads files, as production does.

#ifndef K8S_AGENT_TESTS_FUZZ_INPUT_FILE_H_
#define K8S_AGENT_TESTS_FUZZ_INPUT_FILE_H_

#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>

namespace k8s_agent::fuzz {

/// Rewrites one memfd (kept for the whole run: no temp files left behind)
/// with the input and returns a path to it, "/proc/self/fd/N"; empty if the
/// write failed, in which case the input is skipped.
inline std::string InputAsFile(const uint8_t* data, size_t size) {
  static int fd = ::memfd_create("fuzz-input", 0);
  if (fd < 0 || ::ftruncate(fd, 0) != 0) return "";
  size_t off = 0;
  while (off < size) {
    ssize_t n = ::pwrite(fd, data + off, size - off, static_cast<off_t>(off));
    if (n <= 0) return "";
    off += static_cast<size_t>(n);
  }
  return "/proc/self/fd/" + std::to_string(fd);
}

}  // namespace k8s_agent::fuzz

#endif  // K8S_AGENT_TESTS_FUZZ_INPUT_FILE_H_
