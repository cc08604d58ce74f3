// SPDX-License-Identifier: Apache-2.0
// What the programs say about their own command line, in one style for
// k8s-agent and k8s-agent-sshd: --help lines built from an option table,
// usage errors, and "did you mean" for a misspelt long option.

#ifndef K8S_AGENT_PLUGIN_BASE_USAGE_TEXT_H_
#define K8S_AGENT_PLUGIN_BASE_USAGE_TEXT_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "plugin/base/status.h"

namespace k8s_agent {

/// --help's width: lines end before column 80.
inline constexpr size_t kHelpWidth = 79;
/// The column an option's help starts in, after its "  --name ARG" head.
inline constexpr size_t kHelpColumn = 31;

/// Wraps `text` at kHelpWidth, as if it started in column `indent`; each
/// line after the first is indented by `indent` spaces.
std::string WrapText(const std::string& text, size_t indent);

/// "  HEAD   help" with the help wrapped at kHelpColumn; a head too long for
/// the column puts the help on the next line.
std::string HelpLine(const std::string& head, const std::string& help);

/// `<what>: <why> (<todo>)`, as kInvalidArgument.
Status UsageError(const std::string& what, const std::string& why,
                  const std::string& todo);

/// Which of `names` a misspelt `name` most likely meant, for "did you
/// mean": the one it is a unique prefix of (3 characters or more), else the
/// nearest by edit distance if near enough for its length (one edit up to 4
/// characters, two up to 8, then three; ties go to the first); nullopt if
/// none is. `name` is compared lower-cased.
std::optional<size_t> ClosestName(std::string_view name,
                                  const std::vector<std::string_view>& names);

/// The value of the long option `flag` ("--name") given as args[*i - 1]
/// (`word`, whose first '=' is at `eq`, or npos): what follows the '=',
/// else the next word (advancing *i). For a flag (`arg` nullptr, the
/// placeholder --help shows otherwise) `flag_value`, and "--flag=x" is an
/// error. Errors are UsageError's and end with `see_help`.
StatusOr<std::string> LongOptionValue(const std::vector<std::string>& args,
                                      size_t* i, const std::string& word,
                                      size_t eq, const std::string& flag,
                                      const char* arg,
                                      const std::string& flag_value,
                                      const std::string& see_help);

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_BASE_USAGE_TEXT_H_
