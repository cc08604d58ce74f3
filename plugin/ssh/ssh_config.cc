// SPDX-License-Identifier: Apache-2.0
// The ssh_config reader: OpenSSH 9.2's readconf.c semantics, our code.

#include "plugin/ssh/ssh_config.h"

#include <cstdio>
#include <string_view>
#include <utility>

#include "plugin/base/files.h"
#include "plugin/base/strings.h"
#include "plugin/ssh/remote_names.h"
#include "plugin/ssh/ssh_keywords.h"

namespace k8s_agent::ssh {
namespace {

// ssh's READCONF_MAX_DEPTH.
constexpr int kMaxIncludeDepth = 16;

// match_pattern_list(): comma-separated patterns, !negation; user names
// compare case-sensitively, host names do not.
bool PatternListMatches(const std::string& list, const std::string& s,
                        bool fold_case) {
  if (fold_case) return HostPatternMatches(list, s);
  bool matched = false;
  for (const std::string& pattern : Split(list, ',')) {
    if (pattern.empty()) continue;
    if (pattern[0] == '!') {
      if (MatchPattern(s, std::string_view(pattern).substr(1))) return false;
    } else if (MatchPattern(s, pattern)) {
      matched = true;
    }
  }
  return matched;
}

void AddNote(std::vector<std::string>* notes, std::string note) {
  if (note.empty()) return;
  for (const std::string& n : *notes) {
    if (n == note) return;
  }
  notes->push_back(std::move(note));
}

struct Line {
  std::string key;  ///< As written.
  std::string rest;
};

// "Key Value", "Key=Value" and "Key = Value"; empty key for a blank or
// comment line.
Line SplitLine(std::string_view raw) {
  std::string_view line = Trim(raw);
  if (line.empty() || line[0] == '#') return {};
  size_t key_end = line.find_first_of(" \t=");
  Line out;
  out.key = std::string(line.substr(0, key_end));
  if (key_end != std::string_view::npos) {
    std::string_view rest = Trim(line.substr(key_end));
    if (!rest.empty() && rest[0] == '=') rest = Trim(rest.substr(1));
    out.rest = std::string(rest);
  }
  return out;
}

class Reader {
 public:
  Reader(const std::string& host, const ConfigEnv& env, SshOptions* options,
         std::vector<std::string>* notes)
      : host_(host), env_(env), options_(options), notes_(notes) {}

  // One pass over every file; `post_canon` is ssh's second pass.
  Status Pass(const std::vector<ConfigFile>& files, bool post_canon) {
    post_canon_ = post_canon;
    for (const ConfigFile& f : files) {
      bool active = true;
      K8S_RETURN_IF_ERROR(Read(f.path, f.user,
                               f.required ? &f.named_by : nullptr,
                               f.check_permissions, false, &active, 0));
    }
    return OkStatus();
  }

  // ssh reads its config again after a "Match final", or when it
  // canonicalizes host names (Match canonical then holds).
  bool WantsFinalPass() const {
    const std::string c = options_->canonicalize_hostname.value_or("no");
    return want_final_ || c == "yes" || c == "always";
  }

 private:
  // `named_by`: how the user named a file that must exist (-F,
  // --ssh-config), for the error when it cannot be read; null otherwise.
  Status Read(const std::string& path, bool user, const std::string* named_by,
              bool check_permissions, bool never_match, bool* active,
              int depth) {
    StatusOr<ConfigText> text = env_.read_file(path);
    if (text.ok())
      K8S_RETURN_IF_ERROR(CheckFile(path, *text, check_permissions));
    if (!text.ok()) {
      if (named_by != nullptr) {
        return text.status().WithContext(*named_by + " " + path);
      }
      if (text.status().code() != Code::kNotFound) {
        AddNote(notes_, "ignoring " + path + ": " + text.status().message());
      }
      return OkStatus();
    }
    int line_no = 0;
    for (const std::string& raw : Split(text->text, '\n')) {
      ++line_no;
      Line line = SplitLine(raw);
      if (line.key.empty()) continue;
      const std::string where = path + ":" + std::to_string(line_no);
      Status s = OneLine(line, where, user, never_match, active, depth);
      if (!s.ok()) return s;
    }
    return OkStatus();
  }

  Status OneLine(const Line& line, const std::string& where, bool user,
                 bool never_match, bool* active, int depth) {
    const std::string key = ToLower(line.key);
    if (key == "host") {
      std::vector<std::string> words = SplitConfigWords(line.rest);
      if (words.empty()) {
        return InvalidArgumentError(where + ": Host: missing host pattern");
      }
      *active =
          !never_match && HostPatternMatches(Join(words, " "),
                                             post_canon_ ? MatchHost() : host_);
      return OkStatus();
    }
    if (key == "match") {
      StatusOr<bool> m = MatchLine(SplitConfigWords(line.rest), where);
      if (!m.ok()) return m.status();
      *active = !never_match && *m;
      return OkStatus();
    }
    if (key == "include") {
      return Include(line.rest, where, user, never_match, active, depth);
    }
    std::string note;
    if (*active) {
      const bool had_user = options_->user.has_value();
      Status s = ApplySshSetting(line.key, line.rest, options_, &note);
      if (!s.ok()) return s.WithContext(where);
      // Stricter than ssh, which trusts a literal User: a Match exec after
      // this line would put it in a shell command as %r.
      if (!had_user && options_->user) {
        K8S_RETURN_IF_ERROR(CheckRemoteUser(*options_->user, where + ": User"));
      }
      if (!note.empty()) AddNote(notes_, where + ": " + note);
      return OkStatus();
    }
    // ssh checks every line, applied or not: a typo in a block for other
    // hosts is still a typo. What cannot be honoured matters only where
    // it applies.
    const SshKeyword* keyword = FindSshKeyword(line.key);
    if (keyword != nullptr && keyword->use == KeywordUse::kUnsupported) {
      return OkStatus();
    }
    SshOptions scratch;
    scratch.ignore_unknown = options_->ignore_unknown;
    Status s = ApplySshSetting(line.key, line.rest, &scratch, &note);
    return s.ok() ? s : s.WithContext(where);
  }

  Status Include(const std::string& rest, const std::string& where, bool user,
                 bool never_match, bool* active, int depth) {
    std::vector<std::string> words = SplitConfigWords(rest);
    if (words.empty()) {
      return InvalidArgumentError(where + ": Include: missing file name");
    }
    const bool outer_active = *active;
    for (const std::string& word : words) {
      std::string pattern = word;
      if (pattern == "~" || StartsWith(pattern, "~/")) {
        pattern = env_.home + pattern.substr(1);
      } else if (pattern[0] != '/' && pattern[0] != '~') {
        pattern =
            (user ? env_.home + "/.ssh/" : std::string("/etc/ssh/")) + pattern;
      }
      std::vector<std::string> paths = env_.glob(pattern);
      if (paths.empty()) {
        AddNote(notes_, where + ": Include " + word + ": no file matches");
      }
      for (const std::string& path : paths) {
        if (depth + 1 > kMaxIncludeDepth) {
          return InvalidArgumentError(where + ": Include " + path +
                                      ": nested more than 16 deep");
        }
        // An Include in a block that does not apply is still read (and
        // checked), but nothing in it may apply; and no block in it
        // changes the including file's state.
        // ssh checks every included file's owner and mode.
        K8S_RETURN_IF_ERROR(Read(path, user, nullptr, true,
                                 never_match || !outer_active, active,
                                 depth + 1));
        *active = outer_active;
      }
    }
    return OkStatus();
  }

  // ssh's read_config_file_depth(): a user's config (and an Include) that
  // another user could have written is refused, not read; and only a
  // regular file is read at all (an Include of /dev/zero never ends).
  Status CheckFile(const std::string& path, const ConfigText& file,
                   bool check_permissions) const {
    if (!S_ISREG(file.mode)) {
      return FailedPreconditionError(
          path + " is not a regular file (" + FileTypeName(file.mode) +
          "): ssh_config and Include name regular files only");
    }
    if (!check_permissions) return OkStatus();
    if ((file.owner != 0 && file.owner != env_.uid) || (file.mode & 022) != 0) {
      char mode[8];
      std::snprintf(mode, sizeof(mode), "%04o", file.mode & 07777);
      return FailedPreconditionError(
          "Bad owner or permissions on " + path + " (uid " +
          std::to_string(file.owner) + ", mode " + mode +
          "): ssh refuses a config file another user could write, since its "
          "Match exec runs as you; it must be owned by you (uid " +
          std::to_string(env_.uid) +
          ") or root and writable by its owner alone (chmod go-w " + path +
          ")");
    }
    return OkStatus();
  }

  // What "Match host" compares: HostName as set so far, else the host.
  std::string MatchHost() const {
    if (!options_->hostname) return host_;
    StatusOr<std::string> h = ExpandHostName(*options_->hostname, host_);
    return h.ok() ? *h : host_;  // Resolve() reports a bad HostName.
  }

  std::string RemoteUser() const {
    return options_->user.value_or(env_.local_user);
  }

  StatusOr<bool> MatchLine(const std::vector<std::string>& words,
                           const std::string& where) {
    if (words.empty()) {
      return InvalidArgumentError(where + ": Match: missing criteria");
    }
    bool result = true;
    for (size_t i = 0; i < words.size(); ++i) {
      std::string attrib = ToLower(words[i]);
      const bool negate = !attrib.empty() && attrib[0] == '!';
      if (negate) attrib.erase(0, 1);
      if (attrib == "all") {
        bool alone = i + 1 == words.size();
        for (size_t j = 0; j < i; ++j) {
          std::string before = ToLower(words[j]);
          alone = alone && (before == "canonical" || before == "final");
        }
        if (!alone) {
          return InvalidArgumentError(
              where +
              ": Match all cannot be combined with other criteria "
              "(but canonical or final before it)");
        }
        if (negate) result = false;
        continue;
      }
      if (attrib == "canonical" || attrib == "final") {
        if (attrib == "final") want_final_ = true;
        if (post_canon_ == negate) result = false;
        continue;
      }
      if (i + 1 >= words.size()) {
        return InvalidArgumentError(where + ": Match " + words[i] +
                                    ": missing argument");
      }
      const std::string& arg = words[++i];
      bool r;
      if (attrib == "host") {
        r = PatternListMatches(arg, MatchHost(), true);
      } else if (attrib == "originalhost") {
        r = PatternListMatches(arg, host_, true);
      } else if (attrib == "user") {
        r = PatternListMatches(arg, RemoteUser(), false);
      } else if (attrib == "localuser") {
        r = PatternListMatches(arg, env_.local_user, false);
      } else if (attrib == "exec") {
        if (!result) {
          // ssh skips an exec once a criterion before it failed.
          AddNote(notes_, where +
                              ": Match exec skipped: an earlier "
                              "criterion did not match");
          continue;
        }
        StatusOr<std::string> command = ExpandTokens(arg, where);
        if (!command.ok()) return command.status();
        StatusOr<bool> ran = env_.run_exec(*command);
        if (!ran.ok()) return ran.status().WithContext(where + ": Match exec");
        r = *ran;
      } else {
        return InvalidArgumentError(
            where + ": Match " + Printable(words[i - 1]) +
            ": unsupported criterion (OpenSSH 9.2 has all, canonical, "
            "final, exec, host, originalhost, user and localuser)");
      }
      if (r == negate) result = false;
    }
    return result;
  }

  // The %-tokens of a Match exec command, as ssh expands them there.
  StatusOr<std::string> ExpandTokens(const std::string& in,
                                     const std::string& where) const {
    // What a shell runs takes no name with shell metacharacters.
    const std::string exec = where + ": Match exec";
    std::string out;
    for (size_t i = 0; i < in.size(); ++i) {
      if (in[i] != '%') {
        out += in[i];
        continue;
      }
      char t = i + 1 < in.size() ? in[++i] : '\0';
      const std::string local_host = env_.local_host;
      switch (t) {
        case '%':
          out += '%';
          break;
        case 'h':
          K8S_RETURN_IF_ERROR(CheckRemoteHost(MatchHost(), exec + " %h"));
          out += MatchHost();
          break;
        case 'n':
          K8S_RETURN_IF_ERROR(CheckRemoteHost(host_, exec + " %n"));
          out += host_;
          break;
        case 'p':
          out += std::to_string(options_->port.value_or(22));
          break;
        case 'r':
          K8S_RETURN_IF_ERROR(CheckRemoteUser(RemoteUser(), exec + " %r"));
          out += RemoteUser();
          break;
        case 'u':
          out += env_.local_user;
          break;
        case 'd':
          out += env_.home;
          break;
        case 'l':
          out += local_host;
          break;
        case 'L':
          out += local_host.substr(0, local_host.find('.'));
          break;
        case 'k':
          K8S_RETURN_IF_ERROR(CheckRemoteHost(
              options_->host_key_alias.value_or(MatchHost()), exec + " %k"));
          out += options_->host_key_alias.value_or(MatchHost());
          break;
        default:
          return InvalidArgumentError(
              where + ": Match exec: token %" + std::string(1, t) +
              " is not supported by k8s-agent (it expands %%, %h, %n, %p, "
              "%r, %u, %d, %l, %L and %k)");
      }
    }
    return out;
  }

  const std::string& host_;
  const ConfigEnv& env_;
  SshOptions* options_;
  std::vector<std::string>* notes_;
  bool post_canon_ = false;
  bool want_final_ = false;
};

}  // namespace

Status ReadSshConfigs(const std::vector<ConfigFile>& files,
                      const std::string& host, const ConfigEnv& env,
                      SshOptions* options, std::vector<std::string>* notes) {
  Reader reader(host, env, options, notes);
  K8S_RETURN_IF_ERROR(reader.Pass(files, false));
  if (!reader.WantsFinalPass()) return OkStatus();
  notes->push_back("re-reading the ssh config (Match final / canonical)");
  return reader.Pass(files, true);
}

}  // namespace k8s_agent::ssh
