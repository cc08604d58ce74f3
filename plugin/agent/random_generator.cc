// SPDX-License-Identifier: Apache-2.0
#include "plugin/agent/random_generator.h"

#include <openssl/rand.h>

namespace k8s_agent {

void SelectHashDrbg() {
  // Ignored result: OpenSSL refuses only when a generator already exists
  // (or on allocation failure), and then the default CTR_DRBG stays, which
  // is as sound, only slower to start.
  (void)RAND_set_DRBG_type(nullptr, "HASH-DRBG", nullptr, nullptr, "SHA256");
}

}  // namespace k8s_agent
