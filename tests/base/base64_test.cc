// SPDX-License-Identifier: Apache-2.0
// Base64: the one decoder known_hosts, key files and kubeconfig share.

#include "plugin/base/base64.h"

#include <gtest/gtest.h>

#include <string>
#include <string_view>

namespace k8s_agent {
namespace {

TEST(Base64Test, RoundTrip) {
  for (const std::string s : {"", "f", "fo", "foo", "foob", "fooba"}) {
    EXPECT_EQ(Base64Decode(Base64Encode(s)), s);
  }
  EXPECT_EQ(Base64Encode("foob"), "Zm9vYg==");
  EXPECT_EQ(Base64Encode(std::string("\xff\xfe", 2)), "//4=");
  EXPECT_EQ(Base64Decode("//4="), std::string("\xff\xfe", 2));
}

TEST(Base64Test, RejectsWhatIsNotStandardBase64) {
  EXPECT_FALSE(Base64Decode("Zm9v!").has_value());
  EXPECT_FALSE(Base64Decode(std::string_view("Zm9v\0", 5)).has_value());
  EXPECT_FALSE(Base64Decode("Zg==Zg").has_value());  // Data after padding.
  EXPECT_FALSE(Base64Decode("Zg===").has_value());
  EXPECT_FALSE(Base64Decode("_-8").has_value());  // URL-safe alphabet.
}

TEST(Base64Test, RejectsTruncatedText) {
  // A cut-off certificate-authority-data must say "invalid base64", not
  // turn up later as a broken PEM.
  EXPECT_FALSE(Base64Decode("Zm9vY").has_value());  // One digit left over.
  EXPECT_FALSE(Base64Decode("Z").has_value());
  EXPECT_FALSE(Base64Decode("Zm9v=").has_value());  // Padding past a group.
  EXPECT_FALSE(Base64Decode("Zm9vYg=").has_value());
  EXPECT_EQ(Base64Decode("Zm9vYg=="), "foob");
  EXPECT_EQ(Base64Decode("Zm9vYmE="), "fooba");
}

TEST(Base64Test, SkipsWhitespaceAndMissingPadding) {
  // kubeconfig *-data values and PEM bodies may be wrapped.
  EXPECT_EQ(Base64Decode("Q0Et\nUEVN\r\n"), "CA-PEM");
  EXPECT_EQ(Base64Decode(" Q0VS VA== "), "CERT");
  EXPECT_EQ(Base64Decode("S0VZ"), "KEY");
  EXPECT_EQ(Base64Decode("Zm9vYg"), "foob");
}

}  // namespace
}  // namespace k8s_agent
