// SPDX-License-Identifier: Apache-2.0
// CurlTransport and its credential: requests that wait for an exec
// plugin's answer.

#include <string>
#include <utility>
#include <vector>

#include "plugin/kube/curl_transfer.h"
#include "plugin/kube/curl_transport.h"

namespace k8s_agent::kube {

StatusOr<bool> CurlTransport::CredentialReady(TimePoint now) {
  K8S_ASSIGN_OR_RETURN(MaybeCredential credential, credentials_->Get(now));
  return credential.has_value();
}

void CurlTransport::Launch(Transfer* t, const HttpRequest& request,
                           TimePoint now) {
  StatusOr<MaybeCredential> credential = credentials_->Get(now);
  if (!credential.ok()) return FailEarly(t, credential.status());
  if (!credential->has_value()) {
    t->awaiting = request;
    return;
  }
  Status status = Configure(t, request, **credential);
  if (status.ok() &&
      curl_multi_add_handle(multi_.get(), t->easy.get()) != CURLM_OK) {
    status = InternalError("curl_multi_add_handle failed");
  }
  if (!status.ok()) return FailEarly(t, status);
  t->in_multi = true;  // curl asks for a 0 ms timer: OnTimer starts it.
}

void CurlTransport::FailEarly(Transfer* t, Status why) {
  // Reported through the sink like any other failure, from the loop.
  t->finished = true;
  t->result = std::move(why);
  needs_delivery_ = true;
}

void CurlTransport::ResumeAwaiting(TimePoint now) {
  std::vector<uint64_t> ids;
  for (const auto& [id, t] : transfers_) {
    if (t->awaiting) ids.push_back(id);
  }
  if (ids.empty()) return;
  StatusOr<MaybeCredential> credential = credentials_->Get(now);
  if (credential.ok() && !credential->has_value()) return;
  for (uint64_t id : ids) {
    Transfer* t = transfers_.at(id).get();
    HttpRequest request = std::move(*t->awaiting);
    t->awaiting.reset();
    if (!credential.ok()) {
      FailEarly(t, credential.status());
    } else {
      Launch(t, request, now);
    }
  }
}

}  // namespace k8s_agent::kube
