// SPDX-License-Identifier: Apache-2.0
// CacheKey: length-prefixed fields hashed with SHA-256.

#include "plugin/kube/cache_key.h"

#include <openssl/sha.h>

namespace k8s_agent::kube {

std::string CacheKey(const std::vector<std::string>& fields) {
  std::string data;
  for (const std::string& field : fields) {
    data += std::to_string(field.size()) + ":" + field + ";";
  }
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(),
         digest);
  static const char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned char c : digest) {
    hex += kHex[c >> 4];
    hex += kHex[c & 15];
  }
  return hex;
}

}  // namespace k8s_agent::kube
