// SPDX-License-Identifier: Apache-2.0
// Fuzz target: the server's banner and first KEXINIT as received from the
// network, and the negotiation-failure message built from it.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "plugin/base/strings.h"
#include "plugin/ssh/algorithms.h"
#include "plugin/ssh/kex_offer.h"

namespace {

using k8s_agent::ssh::AlgorithmKind;

std::string Defaults(AlgorithmKind kind) {
  return k8s_agent::Join(k8s_agent::ssh::OpenSshDefaultAlgorithms(kind), ",");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  // What a session offers by default (production asks libssh2; these are
  // the same kind of lists and need no session).
  static const k8s_agent::ssh::KexAlgorithms ours{
      Defaults(AlgorithmKind::kKex), Defaults(AlgorithmKind::kHostKey),
      Defaults(AlgorithmKind::kCipher), Defaults(AlgorithmKind::kMac), "none"};
  auto offer = k8s_agent::ssh::ParseServerKexinit(in);
  if (offer.has_value()) {
    (void)k8s_agent::ssh::DescribeNegotiationFailure(*offer, ours);
    // The server's lists against themselves reach the "every kind
    // overlaps" summary when they are not empty.
    (void)k8s_agent::ssh::DescribeNegotiationFailure(*offer, *offer);
  }
  return 0;
}
