// SPDX-License-Identifier: Apache-2.0
// Fuzz target: known_hosts lookup (plain, wildcard, negated, hashed,
// @revoked lines) and key type listing, from a file as in production.

#include <libssh2.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "plugin/base/base64.h"
#include "plugin/ssh/known_hosts.h"
#include "tests/fuzz/input_file.h"

namespace {

LIBSSH2_SESSION* Session() {
  // An unconnected session is enough for libssh2's knownhost API.
  static LIBSSH2_SESSION* session = [] {
    libssh2_init(0);
    return libssh2_session_init();
  }();
  return session;
}

// A real ssh-ed25519 key blob (the seed corpus uses this key).
std::string KeyBlob() {
  return *k8s_agent::Base64Decode(
      "AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string path = k8s_agent::fuzz::InputAsFile(data, size);
  if (path.empty() || Session() == nullptr) return 0;
  std::vector<std::string> files = {path};
  static const std::string blob = KeyBlob();
  for (const std::string& name :
       {std::string("w-0"), k8s_agent::ssh::KnownHostsName("w-0", 2222),
        std::string("10.0.0.5")}) {
    (void)k8s_agent::ssh::LookupHostKey(Session(), files, name, blob);
  }
  (void)k8s_agent::ssh::KnownKeyTypes(files, {"w-0", "[w-0]:2222"});
  // The input as base64 and as a key blob, too.
  std::string_view text(reinterpret_cast<const char*>(data), size);
  (void)k8s_agent::Base64Decode(text);
  (void)k8s_agent::ssh::KeyBlobType(text);
  return 0;
}
