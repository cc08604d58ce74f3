// SPDX-License-Identifier: Apache-2.0
// gMock matchers for Status and StatusOr, in the style of abseil's.

#ifndef K8S_AGENT_TESTS_FAKES_STATUS_MATCHERS_H_
#define K8S_AGENT_TESTS_FAKES_STATUS_MATCHERS_H_

#include <gmock/gmock.h>

#include "plugin/base/status.h"

namespace k8s_agent {

inline const Status& GetStatus(const Status& s) { return s; }
template <typename T>
Status GetStatus(const StatusOr<T>& s) {
  return s.status();
}

MATCHER(IsOk, "is OK") {
  Status s = GetStatus(arg);
  if (!s.ok()) *result_listener << s.ToString();
  return s.ok();
}

MATCHER_P(StatusIs, code, "has code " + std::string(CodeName(code))) {
  Status s = GetStatus(arg);
  *result_listener << s.ToString();
  return s.code() == code;
}

MATCHER_P2(StatusIs, code, substring,
           "has code " + std::string(CodeName(code)) + " and message with \"" +
               std::string(substring) + "\"") {
  Status s = GetStatus(arg);
  *result_listener << s.ToString();
  return s.code() == code && s.message().find(substring) != std::string::npos;
}

}  // namespace k8s_agent

#endif  // K8S_AGENT_TESTS_FAKES_STATUS_MATCHERS_H_
