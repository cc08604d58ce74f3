// SPDX-License-Identifier: Apache-2.0
#include "plugin/agent/openssl_setup.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

namespace k8s_agent {

void SetUpOpenSsl() {
  // First: whichever initialisation runs first decides the atexit handler.
  (void)OPENSSL_init_crypto(OPENSSL_INIT_NO_ATEXIT, nullptr);
  (void)RAND_set_DRBG_type(nullptr, "HASH-DRBG", nullptr, nullptr, "SHA256");
}

}  // namespace k8s_agent
