// SPDX-License-Identifier: Apache-2.0
// A fixed-size byte buffer whose memory the kernel backs only once written.

#ifndef K8S_AGENT_PLUGIN_SSH_LAZY_BUFFER_H_
#define K8S_AGENT_PLUGIN_SSH_LAZY_BUFFER_H_

#include <cstddef>
#include <memory>

namespace k8s_agent::ssh {

/// std::vector<char>(n) zero-fills its bytes, which makes every page
/// resident: for the exec channel's two 256 KiB output buffers that was
/// 512 KiB of private memory in every attached agent, even one whose
/// command prints nothing. `new char[n]` leaves the bytes uninitialised, so
/// a large buffer (glibc mmaps it, or takes it from fresh heap) costs only
/// the pages that data has actually been read into.
class LazyBuffer {
 public:
  /// Replaces the buffer with `n` uninitialised bytes.
  void Allocate(size_t n) {
    data_.reset(new char[n]);  // Default-initialised: not zeroed.
    size_ = n;
  }
  char* data() { return data_.get(); }
  const char* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
};

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_LAZY_BUFFER_H_
