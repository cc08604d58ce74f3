// SPDX-License-Identifier: Apache-2.0
// known_hosts parsing, matching, appending, and the host key policy.

#include "plugin/ssh/known_hosts.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <functional>

#include "plugin/base/base64.h"
#include "plugin/base/log.h"
#include "plugin/base/strings.h"
#include "plugin/base/unique_fd.h"
#include "plugin/ssh/libssh2_handles.h"

namespace k8s_agent::ssh {
namespace {

// One parsed known_hosts line.
struct Entry {
  std::string marker;  // "", "@revoked", "@cert-authority"
  std::string hosts;   // pattern list or "|1|salt|hash"
  std::string key_type;
  std::string key_b64;
  std::string text;  // the line without its marker, for libssh2
};

std::optional<Entry> ParseLine(std::string_view raw) {
  std::string_view line = Trim(raw);
  if (line.empty() || line[0] == '#') return std::nullopt;
  std::vector<std::string> fields;
  for (const std::string& f : Split(line, ' ')) {
    for (const std::string& g : Split(f, '\t')) {
      if (!g.empty()) fields.push_back(g);
    }
  }
  Entry e;
  size_t i = 0;
  if (!fields.empty() && fields[0][0] == '@') {
    e.marker = fields[0];
    i = 1;
    line = Trim(line.substr(e.marker.size()));
  }
  if (fields.size() < i + 3) return std::nullopt;
  e.hosts = fields[i];
  e.key_type = fields[i + 1];
  e.key_b64 = fields[i + 2];
  e.text = std::string(line);
  return e;
}

// Calls `fn(file, line_no, entry)` for each entry of each readable file.
void ForEachEntry(
    const std::vector<std::string>& files,
    const std::function<void(const std::string&, int, const Entry&)>& fn) {
  for (const std::string& file : files) {
    StatusOr<std::string> text = ReadFileToString(file);
    if (!text.ok()) continue;  // Missing files are normal (ssh ignores them).
    int line_no = 0;
    for (const std::string& line : Split(*text, '\n')) {
      ++line_no;
      if (std::optional<Entry> e = ParseLine(line)) fn(file, line_no, *e);
    }
  }
}

int KnownHostKeyBits(const std::string& type) {
  if (type == "ssh-rsa") return LIBSSH2_KNOWNHOST_KEY_SSHRSA;
  if (type == "ssh-dss") return LIBSSH2_KNOWNHOST_KEY_SSHDSS;
  if (type == "ecdsa-sha2-nistp256") return LIBSSH2_KNOWNHOST_KEY_ECDSA_256;
  if (type == "ecdsa-sha2-nistp384") return LIBSSH2_KNOWNHOST_KEY_ECDSA_384;
  if (type == "ecdsa-sha2-nistp521") return LIBSSH2_KNOWNHOST_KEY_ECDSA_521;
  if (type == "ssh-ed25519") return LIBSSH2_KNOWNHOST_KEY_ED25519;
  return LIBSSH2_KNOWNHOST_KEY_UNKNOWN;
}

// Checks a hashed entry through libssh2 (it knows the HMAC-SHA1 scheme).
HostKeyStatus CheckHashed(LIBSSH2_SESSION* session, const Entry& e,
                          const std::string& name, std::string_view blob) {
  if (session == nullptr) return HostKeyStatus::kNotFound;
  KnownHostsPtr kh(libssh2_knownhost_init(session));
  if (!kh) return HostKeyStatus::kNotFound;
  if (libssh2_knownhost_readline(kh.get(), e.text.data(), e.text.size(),
                                 LIBSSH2_KNOWNHOST_FILE_OPENSSH) != 0) {
    return HostKeyStatus::kNotFound;  // A type libssh2 cannot parse.
  }
  int type_bits = KnownHostKeyBits(KeyBlobType(blob));
  if (type_bits == LIBSSH2_KNOWNHOST_KEY_UNKNOWN) {
    return HostKeyStatus::kNotFound;
  }
  int rc = libssh2_knownhost_checkp(
      kh.get(), name.c_str(), -1, blob.data(), blob.size(),
      LIBSSH2_KNOWNHOST_TYPE_PLAIN | LIBSSH2_KNOWNHOST_KEYENC_RAW | type_bits,
      nullptr);
  if (rc == LIBSSH2_KNOWNHOST_CHECK_MATCH) return HostKeyStatus::kMatch;
  if (rc == LIBSSH2_KNOWNHOST_CHECK_MISMATCH) return HostKeyStatus::kMismatch;
  return HostKeyStatus::kNotFound;
}

HostKeyStatus CheckPlain(const Entry& e, const std::string& name,
                         std::string_view blob) {
  // known_hosts patterns are comma-separated; HostPatternMatches handles
  // both separators, '*', '?' and '!'.
  if (!HostPatternMatches(e.hosts, name)) return HostKeyStatus::kNotFound;
  if (e.key_type != KeyBlobType(blob)) return HostKeyStatus::kNotFound;
  std::optional<std::string> key = Base64Decode(e.key_b64);
  if (key && *key == blob) return HostKeyStatus::kMatch;
  return HostKeyStatus::kMismatch;
}

}  // namespace

std::string Sha256Fingerprint(std::string_view digest) {
  std::string b64 = Base64Encode(digest);
  while (!b64.empty() && b64.back() == '=') b64.pop_back();
  return "SHA256:" + b64;
}

std::string KeyBlobType(std::string_view blob) {
  if (blob.size() < 4) return "";
  uint32_t len =
      (static_cast<uint32_t>(static_cast<unsigned char>(blob[0])) << 24) |
      (static_cast<uint32_t>(static_cast<unsigned char>(blob[1])) << 16) |
      (static_cast<uint32_t>(static_cast<unsigned char>(blob[2])) << 8) |
      static_cast<uint32_t>(static_cast<unsigned char>(blob[3]));
  if (len > 64 || len > blob.size() - 4) return "";
  return std::string(blob.substr(4, len));
}

std::string KnownHostsName(const std::string& host, int port) {
  if (port == 22) return host;
  return "[" + host + "]:" + std::to_string(port);
}

HostKeyLookup LookupHostKey(LIBSSH2_SESSION* session,
                            const std::vector<std::string>& files,
                            const std::string& name,
                            std::string_view key_blob) {
  HostKeyLookup best;
  ForEachEntry(files, [&](const std::string& file, int line, const Entry& e) {
    if (e.marker == "@cert-authority") return;
    if (!e.marker.empty() && e.marker != "@revoked") return;
    HostKeyStatus s = StartsWith(e.hosts, "|1|")
                          ? CheckHashed(session, e, name, key_blob)
                          : CheckPlain(e, name, key_blob);
    if (e.marker == "@revoked") {
      // A revoked line names a key, not a host binding: only an exact key
      // match matters.
      if (s != HostKeyStatus::kMatch) return;
      s = HostKeyStatus::kRevoked;
    }
    // Revoked beats match beats mismatch; the first entry of a rank wins.
    if (static_cast<int>(s) > static_cast<int>(best.status)) {
      best.status = s;
      best.file = file;
      best.line = line;
    }
  });
  return best;
}

std::vector<std::string> KnownKeyTypes(const std::vector<std::string>& files,
                                       const std::vector<std::string>& names) {
  std::vector<std::string> types;
  ForEachEntry(files, [&](const std::string&, int, const Entry& e) {
    if (!e.marker.empty() || StartsWith(e.hosts, "|1|")) return;
    for (const std::string& name : names) {
      if (!HostPatternMatches(e.hosts, name)) continue;
      bool seen = false;
      for (const std::string& t : types) seen = seen || t == e.key_type;
      if (!seen) types.push_back(e.key_type);
    }
  });
  return types;
}

Status AppendKnownHost(const std::string& file, const std::string& name,
                       std::string_view key_blob) {
  UniqueFd fd(
      ::open(file.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  if (!fd.valid() && errno == ENOENT) {
    size_t slash = file.rfind('/');
    if (slash != std::string::npos && slash > 0) {
      ::mkdir(file.substr(0, slash).c_str(), 0700);  // ~/.ssh, as ssh does.
    }
    fd.reset(
        ::open(file.c_str(), O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  }
  if (!fd.valid()) return ErrnoError("open " + file, errno);
  // Writers hold the lock for microseconds; blocking here is fine.
  while (::flock(fd.get(), LOCK_EX) != 0) {
    if (errno != EINTR) return ErrnoError("flock " + file, errno);
  }
  // Another agent may have added the same key while we were deciding.
  if (LookupHostKey(nullptr, {file}, name, key_blob).status ==
      HostKeyStatus::kMatch) {
    return OkStatus();
  }
  std::string line;
  struct stat st;
  if (::fstat(fd.get(), &st) == 0 && st.st_size > 0) {
    char last = '\n';
    if (::pread(fd.get(), &last, 1, st.st_size - 1) == 1 && last != '\n') {
      line += '\n';
    }
  }
  line +=
      name + " " + KeyBlobType(key_blob) + " " + Base64Encode(key_blob) + "\n";
  // One write(2) with O_APPEND: even a reader without the lock never sees
  // half a line.
  ssize_t n = ::write(fd.get(), line.data(), line.size());
  if (n != static_cast<ssize_t>(line.size())) {
    return ErrnoError("write " + file, n < 0 ? errno : EIO);
  }
  return OkStatus();
}

Status VerifyHostKey(LIBSSH2_SESSION* session, StrictHostKeyChecking policy,
                     const std::vector<std::string>& files,
                     const std::string& alias, const std::string& ip, int port,
                     std::string_view key_blob,
                     const std::string& fingerprint) {
  std::vector<std::string> names = {KnownHostsName(alias, port)};
  if (!ip.empty() && ip != alias) names.push_back(KnownHostsName(ip, port));
  std::string key_type = KeyBlobType(key_blob);
  std::string who = alias + (ip != alias ? " (" + ip + ")" : "") + " port " +
                    std::to_string(port);

  HostKeyLookup mismatch;
  std::string mismatch_name;
  for (const std::string& name : names) {
    HostKeyLookup r = LookupHostKey(session, files, name, key_blob);
    if (r.status == HostKeyStatus::kRevoked) {
      return FailedPreconditionError(
          "host key for " + who + " (" + key_type + " " + fingerprint +
          ") is marked @revoked in " + r.file + ":" + std::to_string(r.line));
    }
    if (r.status == HostKeyStatus::kMatch) return OkStatus();
    if (r.status == HostKeyStatus::kMismatch && mismatch_name.empty()) {
      mismatch = r;
      mismatch_name = name;
    }
  }
  if (!mismatch_name.empty()) {
    return FailedPreconditionError(
        "REMOTE HOST IDENTIFICATION HAS CHANGED for " + who + ": the " +
        key_type + " key it sent has fingerprint " + fingerprint + ", but " +
        mismatch.file + ":" + std::to_string(mismatch.line) +
        " holds a different " + key_type + " key for " + mismatch_name +
        ". If the pod was recreated with a new host key, remove the old "
        "entry with: ssh-keygen -R '" +
        mismatch_name + "' -f " + mismatch.file +
        " (host key mismatches are never accepted)");
  }
  if (policy == StrictHostKeyChecking::kYes) {
    return FailedPreconditionError("host key verification failed: no " +
                                   key_type + " key for " + names[0] + " in " +
                                   Join(files, ", ") + " (the server offers " +
                                   fingerprint + "); add it (ssh-keyscan -p " +
                                   std::to_string(port) + " " + ip +
                                   "), mount a known_hosts file, or use -o "
                                   "StrictHostKeyChecking=accept-new");
  }
  // Unknown key: accepted, and remembered as ssh does for accept-new/no.
  if (!files.empty() && files[0] != "/dev/null") {
    Status s = AppendKnownHost(files[0], names[0], key_blob);
    if (s.ok()) {
      LogInfo("permanently added '" + names[0] + "' (" + key_type +
              ") to the list of known hosts (" + files[0] + ")");
    } else {
      LogWarning("could not add host key for " + names[0] + ": " +
                 s.ToString());
    }
  }
  return OkStatus();
}

}  // namespace k8s_agent::ssh
