// SPDX-License-Identifier: Apache-2.0
// TreeSettings: what an agent hands down a launch tree, and how the agent
// a daemon starts completes its argv from it.

#include "launcher/tree_settings.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <optional>
#include <utility>

#include "launcher/option_table.h"
#include "plugin/base/base64.h"
#include "plugin/base/strings.h"

namespace k8s_agent {
namespace {

using Json = nlohmann::json;

/// `word` is `full` cut at its first '=': what PRRTE leaves of the word of
/// a forwarded value that held the value's first '='.
bool IsCutOf(const std::string& word, const std::string& full) {
  size_t eq = full.find('=');
  return eq != std::string::npos && full.compare(0, eq, word) == 0 &&
         word.size() == eq;
}

StatusOr<TreeSettings> FromJson(const Json& j) {
  TreeSettings s;
  if (!j.is_object() || !j.contains("level") || !j["level"].is_number_integer())
    return InvalidArgumentError("no level");
  s.level = j["level"].get<int>();
  if (s.level < 1) return InvalidArgumentError("level below 1");
  if (j.contains("via") && j["via"].is_string()) s.via = j["via"];
  if (j.contains("args")) {
    if (!j["args"].is_array()) return InvalidArgumentError("args not a list");
    for (const Json& a : j["args"]) {
      if (!a.is_string()) return InvalidArgumentError("args not strings");
      s.args.push_back(a.get<std::string>());
    }
  }
  if (j.contains("env")) {
    if (!j["env"].is_object()) return InvalidArgumentError("env not a map");
    for (const auto& [name, value] : j["env"].items()) {
      if (!value.is_string()) return InvalidArgumentError("env not strings");
      s.env[name] = value.get<std::string>();
    }
  }
  return s;
}

constexpr char kPlainChars[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_./+-";

/// Nothing a shell would read as more than a word, in double quotes or not.
bool IsPlain(const std::string& word) {
  return !word.empty() &&
         word.find_first_not_of(kPlainChars) == std::string::npos;
}

/// The agent the daemon will run for the next level, when its command
/// names it ("--prtemca plm_ssh_agent X", ORTE's "-mca plm_rsh_agent X";
/// Open MPI quotes the value) and it is a plain path or command name: its
/// first word of the first alternative ("ssh : rsh").
std::string NextLevelAgent(const std::vector<std::string>& words) {
  for (size_t i = 0; i + 2 < words.size(); ++i) {
    const std::string& flag = words[i];
    const std::string& name = words[i + 1];
    if ((flag == "--prtemca" || flag == "--mca" || flag == "-mca") &&
        (name == "plm_ssh_agent" || name == "plm_rsh_agent")) {
      std::string value = words[i + 2];
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
        value = value.substr(1, value.size() - 2);
      }
      value = value.substr(0, value.find_first_of(" :"));
      return IsPlain(value) ? value : std::string();
    }
  }
  return {};
}

}  // namespace

std::string TreeSettings::Encode() const {
  Json j = {{"level", level}, {"via", via}, {"args", args}, {"env", env}};
  return Base64Encode(j.dump());
}

StatusOr<TreeSettings> TreeSettings::Decode(std::string_view text) {
  std::optional<std::string> bytes = Base64Decode(text);
  if (!bytes) return InvalidArgumentError("not base64");
  Json j = Json::parse(*bytes, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return InvalidArgumentError("not JSON");
  return FromJson(j);
}

bool IsTreeLaunch(const std::vector<std::string>& words) {
  return std::find(words.begin(), words.end(), "--tree-spawn") != words.end();
}

std::map<std::string, std::string> TreeEnvironment(
    const std::map<std::string, std::string>& env) {
  std::map<std::string, std::string> out;
  for (const auto& [name, value] : env) {
    if (name == kTreeSettingsEnv || name == kTreeReportEnv) continue;
    if (StartsWith(name, "K8S_AGENT_") || name == "KUBERNETES_SERVICE_HOST" ||
        name == "KUBERNETES_SERVICE_PORT") {
      out[name] = value;
    }
  }
  return out;
}

bool IsFileSetting(const std::string& name) {
  if (name == "K8S_AGENT_CONFIG") return true;
  for (const LongOption& opt : LongOptions()) {
    if (opt.arg != nullptr && std::string_view(opt.arg) == "FILE" &&
        EnvName(opt) == name) {
      return true;
    }
  }
  return false;
}

std::string TreeLaunchCommand(const std::string& command,
                              const std::vector<std::string>& words,
                              const TreeSettings& settings) {
  const std::string value = settings.Encode();
  // Open MPI writes "setenv NAME VALUE ;" for a csh login shell and
  // "NAME=VALUE;export NAME;" for the others. csh cannot name descriptor 9,
  // so a csh tree has no report channel.
  if (command.find("setenv ") != std::string::npos) {
    return std::string("setenv ") + kTreeSettingsEnv + " " + value + " ; " +
           command;
  }
  const std::string fd = std::to_string(kTreeReportFd);
  // The daemon keeps descriptor 9 (it points 0-2 at /dev/null and closes
  // nothing else), so an agent it starts can reach this session's stderr
  // through /proc/PPID/fd/9 once it has checked that it is still this
  // pipe: readlink gives "pipe:[INODE]", unique while it is open.
  std::string out = "exec " + fd + ">&2;" + kTreeSettingsEnv + "=" + value +
                    ";" + kTreeReportEnv + "=$(readlink /proc/$$/fd/" + fd +
                    " 2>/dev/null);export " + kTreeSettingsEnv + " " +
                    kTreeReportEnv + ";";
  // A daemon that cannot find its agent exits 213 when it launches the next
  // level, which the launcher reports only as "lost communication": say it
  // here, where a line still reaches the launcher's output.
  const std::string agent = NextLevelAgent(words);
  if (!agent.empty()) {
    const std::string host = IsPlain(settings.via) ? settings.via : "HOST";
    out += "command -v " + agent +
           " >/dev/null 2>&1||echo \"k8s-agent: " + host + ": " + agent +
           " (plm_ssh_agent) is not on this pod (PATH=$PATH): its daemon "
           "cannot launch the next level of the tree; put the agent at the "
           "same absolute path in every pod\" >&2;";
  }
  return out + command;
}

std::vector<std::string> CompleteFromTree(
    const std::vector<std::string>& args,
    const std::vector<std::string>& tree_args) {
  size_t next = 0;  // The first word of tree_args not yet matched.
  size_t used = 0;  // The words of args matched so far.
  bool cut = false;
  for (; used < args.size(); ++used) {
    const std::string& word = args[used];
    auto match = std::find_if(
        tree_args.begin() + static_cast<std::ptrdiff_t>(next), tree_args.end(),
        [&](const std::string& t) { return word == t || IsCutOf(word, t); });
    if (match == tree_args.end()) break;  // HOST: the options end.
    size_t at = static_cast<size_t>(match - tree_args.begin());
    if (at != next || word != *match) cut = true;
    next = at + 1;
  }
  if (!cut && next == tree_args.size()) return args;
  std::vector<std::string> out = tree_args;
  out.insert(out.end(), args.begin() + static_cast<std::ptrdiff_t>(used),
             args.end());
  return out;
}

}  // namespace k8s_agent
