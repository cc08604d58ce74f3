// SPDX-License-Identifier: Apache-2.0

#include "plugin/base/usage_text.h"

#include <algorithm>

#include "plugin/base/strings.h"

namespace k8s_agent {

std::string WrapText(const std::string& text, size_t indent) {
  std::string out;
  size_t column = indent;
  for (const std::string& word : Split(text, ' ')) {
    if (column > indent && column + 1 + word.size() > kHelpWidth) {
      out += "\n" + std::string(indent, ' ');
      column = indent;
    } else if (column > indent) {
      out += ' ';
      ++column;
    }
    out += word;
    column += word.size();
  }
  return out;
}

std::string HelpLine(const std::string& head, const std::string& help) {
  std::string line = "  " + head;
  if (line.size() <= kHelpColumn) {
    line.resize(std::max(kHelpColumn, line.size() + 1), ' ');
  } else {
    line += "\n" + std::string(kHelpColumn, ' ');
  }
  return line + WrapText(help, kHelpColumn) + "\n";
}

Status UsageError(const std::string& what, const std::string& why,
                  const std::string& todo) {
  return InvalidArgumentError(what + ": " + why + " (" + todo + ")");
}

std::optional<size_t> ClosestName(std::string_view name,
                                  const std::vector<std::string_view>& names) {
  const std::string lower = ToLower(name);
  // "--kube" for --kubeconfig: a prefix of exactly one.
  std::optional<size_t> prefix_of;
  int prefixes = 0;
  if (lower.size() >= 3) {
    for (size_t i = 0; i < names.size(); ++i) {
      if (StartsWith(names[i], lower)) {
        prefix_of = i;
        ++prefixes;
      }
    }
  }
  if (prefixes == 1) return prefix_of;
  const size_t limit = lower.size() <= 4 ? 1 : lower.size() <= 8 ? 2 : 3;
  std::optional<size_t> best;
  size_t best_distance = limit + 1;
  for (size_t i = 0; i < names.size(); ++i) {
    size_t d = EditDistance(lower, names[i]);
    if (d < best_distance) {  // Ties: the first.
      best = i;
      best_distance = d;
    }
  }
  return best;
}

StatusOr<std::string> LongOptionValue(const std::vector<std::string>& args,
                                      size_t* i, const std::string& word,
                                      size_t eq, const std::string& flag,
                                      const char* arg,
                                      const std::string& flag_value,
                                      const std::string& see_help) {
  if (arg == nullptr) {
    if (eq != std::string::npos) {
      return UsageError(flag, "takes no value",
                        "write " + flag + " alone; " + see_help);
    }
    return flag_value;
  }
  if (eq != std::string::npos) return word.substr(eq + 1);
  if (*i < args.size()) return args[(*i)++];
  return UsageError(flag, "missing value",
                    "use " + flag + " " + arg + " or " + flag + "=" + arg);
}

}  // namespace k8s_agent
