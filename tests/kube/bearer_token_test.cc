// SPDX-License-Identifier: Apache-2.0
// Token files: what is trimmed, what is refused, and that the token never
// appears in an error.

#include "plugin/kube/bearer_token.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "plugin/kube/curl_transport.h"
#include "tests/fakes/status_matchers.h"

namespace k8s_agent::kube {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(BearerTokenTest, TrimsTheLineEndAsClientGoDoes) {
  // Given a token file written by echo (or on Windows), expect the token.
  EXPECT_THAT(BearerTokenFrom("abc.def-ghi\n", "f"), IsOk());
  EXPECT_EQ(*BearerTokenFrom("abc.def-ghi\n", "f"), "abc.def-ghi");
  EXPECT_EQ(*BearerTokenFrom("abc\r\n", "f"), "abc");
  EXPECT_EQ(*BearerTokenFrom("  abc \t\n\n", "f"), "abc");
}

TEST(BearerTokenTest, RefusesHeaderInjectionWithoutShowingTheToken) {
  // Given CR LF inside the token, expect a refusal that names the origin
  // and the position but holds none of the file's bytes.
  StatusOr<std::string> t =
      BearerTokenFrom("s3cr3t\r\nX-Injected: yes\n", "token file /x/token");
  EXPECT_THAT(t, StatusIs(Code::kInvalidArgument, "token file /x/token"));
  EXPECT_THAT(t.status().message(), HasSubstr("0x0d"));
  EXPECT_THAT(t.status().message(), HasSubstr("byte 6"));
  EXPECT_THAT(t.status().message(), Not(HasSubstr("s3cr3t")));
  EXPECT_THAT(t.status().message(), Not(HasSubstr("Injected")));
  EXPECT_NE(ClassifyForRetry(t.status().code()), RetryClass::kBackoff);
}

TEST(BearerTokenTest, RefusesEveryOtherControlCharacter) {
  for (char c : {'\n', '\r', '\0', '\t', '\x1b', '\x7f', '\x01'}) {
    std::string text = std::string("ab") + c + "cd";
    EXPECT_THAT(BearerTokenFrom(text, "f"), StatusIs(Code::kInvalidArgument))
        << static_cast<int>(c);
  }
  EXPECT_THAT(BearerTokenFrom("\n \n", "token file f"),
              StatusIs(Code::kUnauthenticated, "token file f is empty"));
}

TEST(BearerTokenTest, TransportRefusesAnInjectingTokenFileAtCreate) {
  // Given a token file holding a second header, expect CurlTransport to
  // refuse it before any request could carry it.
  char path[] = "/tmp/k8s-agent-token-XXXXXX";
  int fd = ::mkstemp(path);
  ASSERT_GE(fd, 0);
  std::string text = "tok\r\nX-Injected: yes\n";
  ASSERT_EQ(::write(fd, text.data(), text.size()),
            static_cast<ssize_t>(text.size()));
  ::close(fd);
  ClusterConfig c;
  c.server = "https://127.0.0.1:1";
  c.token_file = path;
  auto transport = CurlTransport::Create(c, RealClock::Get());
  ::unlink(path);
  EXPECT_THAT(transport, StatusIs(Code::kInvalidArgument, path));
  EXPECT_THAT(transport.status().message(), Not(HasSubstr("Injected")));

  // The same for a kubeconfig's literal token.
  ClusterConfig literal;
  literal.server = "https://127.0.0.1:1";
  literal.token = "tok\nX-Injected: yes";
  EXPECT_THAT(CurlTransport::Create(literal, RealClock::Get()),
              StatusIs(Code::kInvalidArgument, "kubeconfig's token"));
}

}  // namespace
}  // namespace k8s_agent::kube
