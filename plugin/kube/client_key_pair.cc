// SPDX-License-Identifier: Apache-2.0
// CheckClientKeyPair with OpenSSL (the library libcurl does TLS with), and
// on the kubeconfig's certificate and key.

#include "plugin/kube/client_key_pair.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

#include <memory>
#include <string>

#include "plugin/base/strings.h"

namespace k8s_agent::kube {
namespace {

struct BioFree {
  void operator()(BIO* b) const { BIO_free(b); }
};
struct X509Free {
  void operator()(X509* x) const { X509_free(x); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* k) const { EVP_PKEY_free(k); }
};

std::unique_ptr<BIO, BioFree> MemBio(std::string_view pem) {
  return std::unique_ptr<BIO, BioFree>(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
}

}  // namespace

Status CheckClientKeyPair(std::string_view cert_pem, std::string_view key_pem,
                          const std::string& cert_origin,
                          const std::string& key_origin) {
  auto cert_bio = MemBio(cert_pem);
  auto key_bio = MemBio(key_pem);
  if (!cert_bio || !key_bio) return InternalError("BIO_new_mem_buf failed");
  std::unique_ptr<X509, X509Free> cert(
      PEM_read_bio_X509(cert_bio.get(), nullptr, nullptr, nullptr));
  if (!cert) {
    ERR_clear_error();
    return FailedPreconditionError(
        "tls: failed to find any PEM certificate in " + cert_origin +
        " (it must hold a PEM \"CERTIFICATE\" block)");
  }
  // No passphrase callback: an encrypted key fails here, as in kubectl.
  std::unique_ptr<EVP_PKEY, PkeyFree> key(
      PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr));
  if (!key) {
    ERR_clear_error();
    return FailedPreconditionError(
        "tls: failed to find any PEM private key in " + key_origin +
        " (it must hold an unencrypted PEM private key)");
  }
  if (X509_check_private_key(cert.get(), key.get()) != 1) {
    ERR_clear_error();
    return FailedPreconditionError(
        "tls: private key does not match public key: " + key_origin +
        " is not the key of " + cert_origin +
        " (give the certificate and the key it was issued for)");
  }
  return OkStatus();
}

Status CheckConfiguredKeyPair(const ClusterConfig& config) {
  bool has_cert =
      !config.client_cert_pem.empty() || !config.client_cert_file.empty();
  bool has_key =
      !config.client_key_pem.empty() || !config.client_key_file.empty();
  if (!has_cert || !has_key) return OkStatus();
  auto pem = [&](const std::string& data, const std::string& file,
                 const char* field,
                 std::string* origin) -> StatusOr<std::string> {
    if (!data.empty()) {
      *origin = std::string(field) + "-data of " + config.source;
      return data;
    }
    *origin = std::string(field) + " " + file;
    return ReadFileToString(file, 1 << 20);
  };
  std::string cert_origin, key_origin;
  K8S_ASSIGN_OR_RETURN(std::string cert,
                       pem(config.client_cert_pem, config.client_cert_file,
                           "client-certificate", &cert_origin));
  K8S_ASSIGN_OR_RETURN(std::string key,
                       pem(config.client_key_pem, config.client_key_file,
                           "client-key", &key_origin));
  return CheckClientKeyPair(cert, key, cert_origin, key_origin);
}

}  // namespace k8s_agent::kube
