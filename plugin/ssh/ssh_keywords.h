// SPDX-License-Identifier: Apache-2.0
// Every ssh_config keyword OpenSSH 9.2's client knows, and what k8s-agent
// does with it: a config written for ssh is read as ssh reads it, and
// nothing in it is skipped without a word.

#ifndef K8S_AGENT_PLUGIN_SSH_SSH_KEYWORDS_H_
#define K8S_AGENT_PLUGIN_SSH_SSH_KEYWORDS_H_

#include <string>
#include <string_view>

#include "plugin/base/status.h"

namespace k8s_agent::ssh {

enum class KeywordUse {
  /// Applied by ApplySshOption or the config reader (Host, Match, ...).
  kHonoured,
  /// Needs nothing from k8s-agent (it never forwards, prompts or uses an
  /// ssh-agent...): accepted, with `why` in a debug note.
  kNoEffect,
  /// Would change where or how ssh connects, or what it trusts, in a way
  /// k8s-agent cannot do: an error unless the value is `harmless` (the
  /// value that asks for nothing, e.g. "ProxyJump none").
  kUnsupported,
  /// Removed from OpenSSH; ssh warns and ignores it, so do we.
  kDeprecated,
};

struct SshKeyword {
  const char* name;  ///< As ssh_config(5) spells it.
  KeywordUse use;
  /// kUnsupported: the values (lowercase, '|'-separated) that are fine.
  const char* harmless;
  /// kNoEffect / kUnsupported: why, for the note or the error.
  const char* why;
};

/// The keyword `key` (any case), or nullptr if OpenSSH does not know it.
const SshKeyword* FindSshKeyword(std::string_view key);

/// For a keyword k8s-agent does not apply: ok (with a note in `*note`,
/// possibly empty) when the setting asks for nothing the agent would have
/// to do; kInvalidArgument saying why it cannot be honoured otherwise.
Status CheckUnappliedKeyword(const SshKeyword& keyword,
                             const std::string& value, std::string* note);

}  // namespace k8s_agent::ssh

#endif  // K8S_AGENT_PLUGIN_SSH_SSH_KEYWORDS_H_
