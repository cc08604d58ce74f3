// SPDX-License-Identifier: Apache-2.0
// The job's ssh keys, read from the directory a Secret volume mounts,
// whichever launcher laid it out:
//   k8s-agent (images/k8s/ssh-secret.example.yaml): id_ed25519[.pub] (or
//     id_ecdsa / id_rsa), ssh_host_<type>_key[.pub], optional
//     authorized_keys;
//   mpi-operator and Kubeflow Trainer: one ECDSA P-521 PEM key mounted as
//     id_rsa with id_rsa.pub and authorized_keys (the user key is the host
//     key too), or the Secret's own names ssh-privatekey / ssh-publickey;
//   Volcano's ssh plugin: an RSA id_rsa, id_rsa.pub, authorized_keys.
// Files are read through the kubelet's ..data symlinks, whatever their
// modes; nothing here writes.
#ifndef K8S_AGENT_PLUGIN_SSHD_JOB_KEYS_H_
#define K8S_AGENT_PLUGIN_SSHD_JOB_KEYS_H_

#include <string>

#include "plugin/base/status.h"

namespace k8s_agent::sshd {

struct JobKeys {
  std::string host_key_path;  ///< Where the host key was read from.
  std::string host_key;       ///< Its text (PEM or OpenSSH format).
  /// "type base64" of the host key, or empty when the directory holds no
  /// public half of it (tree spawn from the worker then has no known_hosts).
  std::string host_public_key;
  std::string authorized_keys_path;
  std::string authorized_keys;
  std::string user_key_path;  ///< The job's user key: empty if none.
  std::string user_key;
  /// One phrase for the start-up line: which layout was found.
  std::string layout;
};

/// Reads the job's keys from `dir`. Fails, naming the file and what to do,
/// when there is no host key, no authorized key, a file that cannot be read,
/// or a private key sshd cannot use unattended (passphrase-protected, or an
/// OpenSSH key whose body is damaged).
StatusOr<JobKeys> LoadJobKeys(const std::string& dir);

/// The "type base64" of the first line of a .pub or authorized_keys-style
/// text, or an error when it is not one.
StatusOr<std::string> PublicKeyOf(const std::string& text);

}  // namespace k8s_agent::sshd

#endif  // K8S_AGENT_PLUGIN_SSHD_JOB_KEYS_H_
