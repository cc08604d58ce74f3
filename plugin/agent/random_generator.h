// SPDX-License-Identifier: Apache-2.0
// Which of OpenSSL's SP 800-90A generators feeds this process.

#ifndef K8S_AGENT_PLUGIN_AGENT_RANDOM_GENERATOR_H_
#define K8S_AGENT_PLUGIN_AGENT_RANDOM_GENERATOR_H_

namespace k8s_agent {

/// Makes OpenSSL's primary and per-thread generators Hash_DRBG over SHA-256
/// instead of the default CTR_DRBG over AES-256. Both are SP 800-90A
/// generators seeded from the kernel; the difference is cost: instantiating
/// CTR_DRBG fetches a cipher, and OpenSSL 3.0's first cipher fetch builds
/// every cipher the default provider has, about 3.1 M instructions of an
/// agent that otherwise runs 16.5 M (bench/cpu_breakdown.sh). SHA-256 is
/// fetched anyway for the lookup's cache key. Must run before the first
/// random byte is drawn; a later call changes nothing, so it is safe to
/// call once from main, and a failure only keeps the default.
void SelectHashDrbg();

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_AGENT_RANDOM_GENERATOR_H_
