// SPDX-License-Identifier: Apache-2.0
// Where the transport's credential comes from: a token file (re-read when
// it changes), a kubeconfig literal, or an exec plugin.

#ifndef K8S_AGENT_PLUGIN_KUBE_CREDENTIAL_SOURCE_H_
#define K8S_AGENT_PLUGIN_KUBE_CREDENTIAL_SOURCE_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "plugin/base/clock.h"
#include "plugin/base/event_loop.h"
#include "plugin/base/status.h"
#include "plugin/kube/cluster_config.h"

namespace k8s_agent::kube {

/// What goes with each request. Never logged.
struct Credential {
  std::string token;            ///< Bearer token; "" = none.
  std::string client_cert_pem;  ///< From an exec plugin; "" = the config's.
  std::string client_key_pem;
};

/// A credential, or none yet: an exec plugin is being run for it.
using MaybeCredential = std::optional<Credential>;

/// Abstract so the transport need not know whether a file, a literal or a
/// plugin answers. A Pollable: an exec source runs its plugin as a child
/// whose pipes join the loop (the transport forwards its own Pollable calls
/// here); the others have nothing to wait on.
class CredentialSource : public Pollable {
 public:
  ~CredentialSource() override = default;
  /// The credential for the next request; std::nullopt while an exec
  /// plugin runs for it (started here: at start-up, when the credential
  /// nears its expiry, after Invalidate()), or while another agent holds
  /// the shared cache's lock. Never blocks. A failed run is returned once,
  /// then the next call starts again.
  virtual StatusOr<MaybeCredential> Get(TimePoint now) = 0;
  /// After a 401: the next Get() must not return the same cached answer.
  virtual void Invalidate() = 0;
  /// Where the credential comes from, for a 401's message ("the token of
  /// exec plugin P (FILE: user "u"), run 2 times"); "" = the config says.
  virtual std::string Describe() const { return ""; }
  /// What a pending Get() waits for ("exec plugin P (...), running for
  /// 3s"); "" when nothing.
  virtual std::string Waiting(TimePoint) const { return ""; }

  void CollectFds(std::vector<pollfd>*) override {}
  TimePoint NextWake() const override { return TimePoint::max(); }
  void OnFdReady(int, short, TimePoint) override {}
  void OnTimer(TimePoint) override {}
};

/// The source `config` asks for: exec, token file, literal, or none.
std::unique_ptr<CredentialSource> NewCredentialSource(
    const ClusterConfig& config);

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_CREDENTIAL_SOURCE_H_
