// Checks the generated PKI with OpenSSL itself: chain verification, CA constraints, subjectAltName, validity.
#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <memory>

#include "protocol/http/tls.hpp"

namespace bootstorm::http {
namespace {

using X509Ptr = std::unique_ptr<X509, decltype(&X509_free)>;

X509Ptr read_cert(const std::string& pem) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509Ptr cert(PEM_read_bio_X509(bio, nullptr, nullptr, nullptr), &X509_free);
  BIO_free(bio);
  return cert;
}

bool private_key_matches(const std::string& key_pem, X509* cert) {
  BIO* bio = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
  EVP_PKEY* key = PEM_read_bio_PrivateKey(bio, nullptr, nullptr, nullptr);
  BIO_free(bio);
  if (!key) return false;
  bool ok = X509_check_private_key(cert, key) == 1;
  bool ec = EVP_PKEY_is_a(key, "EC");
  EVP_PKEY_free(key);
  return ok && ec;
}

// Verifies `leaf` against `ca` as a TLS server (or client) certificate; returns the X509_V_* result.
int verify(X509* leaf, X509* ca, int purpose) {
  X509_STORE* store = X509_STORE_new();
  X509_STORE_add_cert(store, ca);
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  X509_STORE_CTX_init(ctx, store, leaf, nullptr);
  X509_STORE_CTX_set_purpose(ctx, purpose);
  int result = X509_verify_cert(ctx) == 1 ? X509_V_OK : X509_STORE_CTX_get_error(ctx);
  X509_STORE_CTX_free(ctx);
  X509_STORE_free(store);
  return result;
}

TEST(GeneratePki, LeafVerifiesAgainstCaAndCarriesNames) {
  auto pki = generate_pki("lab.local", {"localhost", "lab.local", "127.0.0.1", "::1"});
  auto ca = read_cert(pki.ca_cert_pem);
  auto leaf = read_cert(pki.leaf_cert_pem);
  ASSERT_TRUE(ca);
  ASSERT_TRUE(leaf);
  EXPECT_TRUE(private_key_matches(pki.ca_key_pem, ca.get()));
  EXPECT_TRUE(private_key_matches(pki.leaf_key_pem, leaf.get()));
  EXPECT_EQ(X509_check_ca(ca.get()), 1);
  EXPECT_EQ(X509_check_ca(leaf.get()), 0);
  EXPECT_TRUE(X509_get_key_usage(ca.get()) & KU_KEY_CERT_SIGN);
  EXPECT_EQ(verify(leaf.get(), ca.get(), X509_PURPOSE_SSL_SERVER), X509_V_OK);

  EXPECT_EQ(X509_check_host(leaf.get(), "localhost", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(leaf.get(), "lab.local", 0, 0, nullptr), 1);
  EXPECT_EQ(X509_check_host(leaf.get(), "other.local", 0, 0, nullptr), 0);
  EXPECT_EQ(X509_check_ip_asc(leaf.get(), "127.0.0.1", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(leaf.get(), "::1", 0), 1);
  EXPECT_EQ(X509_check_ip_asc(leaf.get(), "127.0.0.2", 0), 0);
}

TEST(GeneratePki, ValidityStartsInThePastAndLastsTenYears) {
  auto pki = generate_pki("lab", {"localhost"});
  auto leaf = read_cert(pki.leaf_cert_pem);
  ASSERT_TRUE(leaf);
  std::time_t now = std::time(nullptr);
  std::time_t in_nine_years = now + 9L * 365 * 24 * 3600;
  std::time_t in_eleven_years = now + 11L * 365 * 24 * 3600;
  EXPECT_LT(X509_cmp_time(X509_get0_notBefore(leaf.get()), &now), 0);
  EXPECT_GT(X509_cmp_time(X509_get0_notAfter(leaf.get()), &in_nine_years), 0);
  EXPECT_LT(X509_cmp_time(X509_get0_notAfter(leaf.get()), &in_eleven_years), 0);
}

TEST(GeneratePki, EachCallMakesADistinctCa) {
  auto first = generate_pki("lab", {"localhost"});
  auto second = generate_pki("lab", {"localhost"});
  EXPECT_NE(first.ca_cert_pem, second.ca_cert_pem);
  auto leaf = read_cert(first.leaf_cert_pem);
  auto other_ca = read_cert(second.ca_cert_pem);
  EXPECT_NE(verify(leaf.get(), other_ca.get(), X509_PURPOSE_SSL_SERVER), X509_V_OK);
}

TEST(GenerateClientCert, SignedByCaForClientAuthWithCommonName) {
  auto pki = generate_pki("lab", {"localhost"});
  auto [cert_pem, key_pem] = generate_client_cert(pki, "system:admin");
  auto cert = read_cert(cert_pem);
  auto ca = read_cert(pki.ca_cert_pem);
  ASSERT_TRUE(cert);
  EXPECT_TRUE(private_key_matches(key_pem, cert.get()));
  EXPECT_EQ(verify(cert.get(), ca.get(), X509_PURPOSE_SSL_CLIENT), X509_V_OK);
  char cn[128] = {};
  X509_NAME_get_text_by_NID(X509_get_subject_name(cert.get()), NID_commonName, cn, sizeof cn);
  EXPECT_STREQ(cn, "system:admin");
}

}  // namespace
}  // namespace bootstorm::http
