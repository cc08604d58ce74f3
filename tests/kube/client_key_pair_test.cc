// SPDX-License-Identifier: Apache-2.0
// CheckClientKeyPair: a certificate and the key it was issued for, or a
// message naming both; CheckConfiguredKeyPair: the same on a kubeconfig.

#include "plugin/kube/client_key_pair.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "tests/fakes/status_matchers.h"

namespace k8s_agent::kube {
namespace {

using ::testing::HasSubstr;

std::string KeyPem(EVP_PKEY* key) {
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_PrivateKey(bio, key, nullptr, nullptr, 0, nullptr, nullptr);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(n));
  BIO_free(bio);
  return pem;
}

// A self-signed certificate for `key`.
std::string CertPem(EVP_PKEY* key) {
  X509* x = X509_new();
  ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
  X509_gmtime_adj(X509_getm_notBefore(x), 0);
  X509_gmtime_adj(X509_getm_notAfter(x), 3600);
  X509_set_pubkey(x, key);
  X509_NAME* name = X509_get_subject_name(x);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("u"), -1,
                             -1, 0);
  X509_set_issuer_name(x, name);
  X509_sign(x, key, EVP_sha256());
  BIO* bio = BIO_new(BIO_s_mem());
  PEM_write_bio_X509(bio, x);
  char* data = nullptr;
  long n = BIO_get_mem_data(bio, &data);
  std::string pem(data, static_cast<size_t>(n));
  BIO_free(bio);
  X509_free(x);
  return pem;
}

class ClientKeyPairTest : public ::testing::Test {
 protected:
  ClientKeyPairTest()
      : a_(EVP_EC_gen("P-256"), EVP_PKEY_free),
        b_(EVP_EC_gen("P-256"), EVP_PKEY_free) {}
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> a_, b_;
};

TEST_F(ClientKeyPairTest, APairPasses) {
  EXPECT_THAT(CheckClientKeyPair(CertPem(a_.get()), KeyPem(a_.get()), "c", "k"),
              IsOk());
}

TEST_F(ClientKeyPairTest, AnotherKeyIsNamedAsKubectlDoes) {
  // Given a certificate and a key of another pair, expect kubectl's words
  // and both origins, not a server verification failure.
  EXPECT_THAT(
      CheckClientKeyPair(CertPem(a_.get()), KeyPem(b_.get()),
                         "client-certificate /x/c.crt", "client-key /x/k.key"),
      StatusIs(Code::kFailedPrecondition,
               "tls: private key does not match public key: client-key "
               "/x/k.key is not the key of client-certificate /x/c.crt"));
}

TEST_F(ClientKeyPairTest, NoPemIsNamed) {
  EXPECT_THAT(CheckClientKeyPair("junk", KeyPem(a_.get()), "client-cert c",
                                 "client-key k"),
              StatusIs(Code::kFailedPrecondition,
                       "tls: failed to find any PEM certificate in "
                       "client-cert c"));
  EXPECT_THAT(CheckClientKeyPair(CertPem(a_.get()), "junk", "client-cert c",
                                 "client-key k"),
              StatusIs(Code::kFailedPrecondition,
                       "failed to find any PEM private key in client-key k"));
}

// CheckConfiguredKeyPair reads what the kubeconfig names: files or data.
class ConfiguredKeyPairTest : public ClientKeyPairTest {
 protected:
  ConfiguredKeyPairTest() {
    char tmpl[] = "/tmp/k8s-kube-keypair-XXXXXX";
    dir_ = ::mkdtemp(tmpl);
    config_.source = "/home/u/.kube/config";
  }
  ~ConfiguredKeyPairTest() override { std::filesystem::remove_all(dir_); }

  std::string Write(const std::string& name, const std::string& text) {
    std::string path = dir_ + "/" + name;
    std::ofstream(path) << text;
    return path;
  }

  std::string dir_;
  ClusterConfig config_;
};

TEST_F(ConfiguredKeyPairTest, NoCertificateOrNoKeyIsNotChecked) {
  EXPECT_THAT(CheckConfiguredKeyPair(config_), IsOk());
  config_.client_cert_pem = CertPem(a_.get());
  EXPECT_THAT(CheckConfiguredKeyPair(config_), IsOk());
  config_.client_cert_pem.clear();
  config_.client_key_file = dir_ + "/absent.key";
  EXPECT_THAT(CheckConfiguredKeyPair(config_), IsOk());
}

TEST_F(ConfiguredKeyPairTest, FilesThatArePairPass) {
  config_.client_cert_file = Write("c.crt", CertPem(a_.get()));
  config_.client_key_file = Write("k.key", KeyPem(a_.get()));
  EXPECT_THAT(CheckConfiguredKeyPair(config_), IsOk());
}

TEST_F(ConfiguredKeyPairTest, AMismatchNamesTheFiles) {
  config_.client_cert_file = Write("c.crt", CertPem(a_.get()));
  config_.client_key_file = Write("k.key", KeyPem(b_.get()));
  EXPECT_THAT(CheckConfiguredKeyPair(config_),
              StatusIs(Code::kFailedPrecondition,
                       "client-key " + dir_ +
                           "/k.key is not the key of client-certificate " +
                           dir_ + "/c.crt"));
}

TEST_F(ConfiguredKeyPairTest, AMismatchInDataNamesTheFieldsAndKubeconfig) {
  config_.client_cert_pem = CertPem(a_.get());
  config_.client_key_pem = KeyPem(b_.get());
  EXPECT_THAT(CheckConfiguredKeyPair(config_),
              StatusIs(Code::kFailedPrecondition,
                       "client-key-data of /home/u/.kube/config is not the "
                       "key of client-certificate-data of "
                       "/home/u/.kube/config"));
}

TEST_F(ConfiguredKeyPairTest, DataIsPreferredOverAFile) {
  config_.client_cert_pem = CertPem(a_.get());
  config_.client_cert_file = Write("other.crt", CertPem(b_.get()));
  config_.client_key_file = Write("k.key", KeyPem(a_.get()));
  EXPECT_THAT(CheckConfiguredKeyPair(config_), IsOk());
}

TEST_F(ConfiguredKeyPairTest, AnUnreadableFileIsAnError) {
  config_.client_cert_file = dir_ + "/absent.crt";
  config_.client_key_file = Write("k.key", KeyPem(a_.get()));
  Status status = CheckConfiguredKeyPair(config_);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("absent.crt"));
}

}  // namespace
}  // namespace k8s_agent::kube
