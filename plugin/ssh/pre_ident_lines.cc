// SPDX-License-Identifier: Apache-2.0
// PreIdentLines: see pre_ident_lines.h.

#include "plugin/ssh/pre_ident_lines.h"

#include <cstring>
#include <string>

namespace k8s_agent::ssh {

Status PreIdentLines::Feed(std::string_view bytes) {
  if (!error_.ok() || ident_seen_) return error_;
  for (char c : bytes) {
    if (c == '\n') {
      ++lines_;
      line_len_ = 0;
      if (lines_ >= kMaxLines) {
        // OpenSSH's words, so a search for ssh's message finds this.
        return Refuse("no SSH version received in the first " +
                      std::to_string(kMaxLines) + " lines");
      }
      continue;
    }
    if (c == '\0') {
      return Refuse("line " + std::to_string(lines_ + 1) +
                    " before the SSH version contains a NUL byte");
    }
    if (line_len_ < sizeof(start_)) start_[line_len_] = c;
    ++line_len_;
    if (line_len_ == sizeof(start_) &&
        std::memcmp(start_, "SSH-", sizeof(start_)) == 0) {
      ident_seen_ = true;
      return OkStatus();
    }
    if (line_len_ > kMaxLineLength) {
      return Refuse("line " + std::to_string(lines_ + 1) +
                    " before the SSH version is over " +
                    std::to_string(kMaxLineLength) + " bytes");
    }
  }
  return OkStatus();
}

Status PreIdentLines::Refuse(const std::string& why) {
  error_ = FailedPreconditionError(
      "SSH handshake failed: " + why +
      " from the server, as ssh also refuses: what listens there is not an "
      "sshd, or something in front of it writes before sshd's \"SSH-2.0-\" "
      "line (a proxy, a wrapper script printing to the socket); point -p / "
      "Port at the sshd");
  return error_;
}

}  // namespace k8s_agent::ssh
