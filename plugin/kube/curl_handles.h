// SPDX-License-Identifier: Apache-2.0
// RAII owners for libcurl handles.

#ifndef K8S_AGENT_PLUGIN_KUBE_CURL_HANDLES_H_
#define K8S_AGENT_PLUGIN_KUBE_CURL_HANDLES_H_

#include <curl/curl.h>

#include <memory>

namespace k8s_agent::kube {

struct CurlEasyDeleter {
  void operator()(CURL* easy) const { curl_easy_cleanup(easy); }
};
struct CurlMultiDeleter {
  void operator()(CURLM* multi) const { curl_multi_cleanup(multi); }
};
struct CurlShareDeleter {
  void operator()(CURLSH* share) const { curl_share_cleanup(share); }
};
struct CurlSlistDeleter {
  void operator()(curl_slist* list) const { curl_slist_free_all(list); }
};

using CurlEasy = std::unique_ptr<CURL, CurlEasyDeleter>;
using CurlMulti = std::unique_ptr<CURLM, CurlMultiDeleter>;
using CurlShare = std::unique_ptr<CURLSH, CurlShareDeleter>;
using CurlSlist = std::unique_ptr<curl_slist, CurlSlistDeleter>;

}  // namespace k8s_agent::kube

#endif  // K8S_AGENT_PLUGIN_KUBE_CURL_HANDLES_H_
