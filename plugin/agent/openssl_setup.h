// SPDX-License-Identifier: Apache-2.0
// How this process sets OpenSSL up, once, before anything uses it.

#ifndef K8S_AGENT_PLUGIN_AGENT_OPENSSL_SETUP_H_
#define K8S_AGENT_PLUGIN_AGENT_OPENSSL_SETUP_H_

namespace k8s_agent {

/// Two process-wide choices, both about cost (bench/cpu_breakdown.sh):
///
/// - No cleanup at exit. OpenSSL registers an atexit handler that frees
///   every cache it built (name map, method stores, providers, DRBGs):
///   0.8 M instructions of an agent that otherwise runs 12 M, spent on
///   memory the kernel takes back anyway. Nothing secret is lost by
///   skipping it: libssh2 frees (and clears) the session's keys itself,
///   and the DRBG's state goes with the process as it does when a signal
///   ends it.
/// - Hash_DRBG over SHA-256 instead of the default CTR_DRBG over AES-256
///   for the primary and per-thread generators. Both are SP 800-90A
///   generators seeded from the kernel; instantiating CTR_DRBG fetches a
///   cipher, and OpenSSL 3.0's first cipher fetch builds every cipher the
///   default provider has, about 3.1 M instructions. SHA-256 is fetched
///   anyway for the lookup's cache key.
///
/// Must run before OpenSSL is first used (the atexit choice is made by its
/// first initialisation, the generator when the first random byte is
/// drawn); a later call changes nothing, so it is called once from main.
/// A refusal only keeps OpenSSL's default, which is as sound.
void SetUpOpenSsl();

}  // namespace k8s_agent

#endif  // K8S_AGENT_PLUGIN_AGENT_OPENSSL_SETUP_H_
