// SPDX-License-Identifier: Apache-2.0

#include "plugin/ssh/publickey_auth.h"

#include <unistd.h>

#include "plugin/base/strings.h"
#include "plugin/ssh/block_directions.h"
#include "plugin/ssh/key_file.h"
#include "plugin/ssh/libssh2_handles.h"

namespace k8s_agent::ssh {
namespace {

bool FileExists(const std::string& path) {
  return ::access(path.c_str(), R_OK) == 0;
}

// Why the key at `path` cannot be used, if its contents say so; "" lets
// libssh2 try (and report a file it cannot read).
std::string UnusableKey(const std::string& path) {
  StatusOr<std::string> text = ReadFileToString(path);
  if (!text.ok()) return "";
  PrivateKeyInfo key = InspectPrivateKey(*text);
  return key.recognized || key.corrupt ? UnusableKeyReason(key) : "";
}

}  // namespace

StatusOr<bool> PublicKeyAuth::Step(LIBSSH2_SESSION* session,
                                   short* wait_events) {
  const std::string& user = options_->user;
  const std::vector<std::string>& identities = options_->identity_files;
  if (identities.empty()) return NoIdentityFileError(user);
  while (identity_index_ < identities.size()) {
    const std::string& priv = identities[identity_index_];
    if (inspected_ <= identity_index_) {
      // Once per key (not per EAGAIN): skip what libssh2 would only call
      // "rejected" or unreadable.
      inspected_ = identity_index_ + 1;
      std::string reason = UnusableKey(priv);
      if (!reason.empty()) {
        tried_.push_back(priv + " (unusable: " + reason + ")");
        ++identity_index_;
        continue;
      }
    }
    std::string pub = priv + ".pub";
    bool have_pub = FileExists(pub);
    int rc = libssh2_userauth_publickey_fromfile_ex(
        session, user.c_str(), static_cast<unsigned>(user.size()),
        have_pub ? pub.c_str() : nullptr, priv.c_str(), "");
    if (rc == LIBSSH2_ERROR_EAGAIN) {
      *wait_events =
          DirectionsToEvents(libssh2_session_block_directions(session));
      return false;
    }
    if (rc == 0) return true;
    std::string why = LastError(session);
    ++identity_index_;
    if (*disconnect_) {
      // sshd's MaxAuthTries, typically: this key was one too many.
      tried_.push_back(priv);
      return DisconnectedDuringAuthError(user, **disconnect_, tried_);
    }
    if (fate_->lost()) {
      // libssh2 reports a reset while waiting for the answer as a refused
      // key ("Waiting for USERAUTH response"): the socket knows better.
      if (rejected_ == 0) return UnavailableError(why);  // Fail() names it.
      tried_.push_back(priv + " (then " + fate_->Describe(*ip_, port_) + ")");
      break;
    }
    if (IsUnreadableAuthReply(why)) {
      return UnreadableAuthReplyError(user, priv, why);
    }
    AuthFailure failure = ClassifyAuthFailure(rc);
    if (failure == AuthFailure::kRejected) {
      ++rejected_;
      tried_.push_back(priv + " (rejected)");
    } else if (failure == AuthFailure::kUnusable) {
      tried_.push_back(priv + " (unusable: " + why +
                       "; passphrase-protected or unsupported format?)");
    } else {
      // The connection broke. After a rejection this is most likely sshd's
      // MaxAuthTries, so it counts as an auth failure below.
      if (rejected_ == 0) {
        return UnavailableError("connection lost during authentication: " +
                                why);
      }
      tried_.push_back(priv + " (connection closed: " + why + ")");
      break;
    }
  }
  if (rejected_ == 0) return NoUsableKeyError(user, tried_);
  return KeysRejectedError(user, tried_);
}

}  // namespace k8s_agent::ssh
