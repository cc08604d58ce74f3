// SPDX-License-Identifier: Apache-2.0
// The lines a server sends before its SSH identification string, bounded
// as OpenSSH bounds them.

#ifndef K8S_AGENT_PLUGIN_SSH_PRE_IDENT_LINES_H_
#define K8S_AGENT_PLUGIN_SSH_PRE_IDENT_LINES_H_

#include <cstddef>
#include <string_view>

#include "plugin/base/status.h"

namespace k8s_agent::ssh {

/// RFC 4253 4.2 lets a server send other lines before "SSH-2.0-...".
/// libssh2 skips them without limit, so a listener that is not an sshd
/// (or a wrapper printing endlessly in front of one) held each attempt
/// until ConnectTimeout and was retried until --timeout with no reason.
/// ssh gives up after 1024 such lines or one over 8192 bytes, or at a
/// NUL byte; this does the same. Feed it every byte received until
/// ident_seen().
class PreIdentLines {
 public:
  static constexpr size_t kMaxLines = 1024;       // SSH_MAX_PRE_BANNER_LINES
  static constexpr size_t kMaxLineLength = 8192;  // SSH_MAX_BANNER_LEN

  /// Takes the next bytes from the server. An error (kFailedPrecondition:
  /// another attempt meets the same server) once a limit is passed; it is
  /// returned again for any later call.
  Status Feed(std::string_view bytes);

  /// A line starting "SSH-" has begun: libssh2 takes it from here, and the
  /// bytes after it are binary packets.
  bool ident_seen() const { return ident_seen_; }
  /// The error Feed returned, else OK.
  const Status& status() const { return error_; }

 private:
  Status Refuse(const std::string& why);

  bool ident_seen_ = false;
  size_t lines_ = 0;     // Complete lines before the identification.
  size_t line_len_ = 0;  // Bytes of the current line so far.
  char start_[4] = {};   // Its first bytes, to spot "SSH-".
  Status error_;
};

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_PRE_IDENT_LINES_H_
