// Certificate generation (OpenSSL 3 EVP APIs) and SSL context construction for the client and the server.
#include "protocol/http/tls.hpp"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <boost/asio/ip/address.hpp>
#include <memory>
#include <stdexcept>

#include "common/log.hpp"
#include "protocol/http/detail/tls_context.hpp"

namespace bootstorm::http {
namespace {

struct BioFree {
  void operator()(BIO* p) const { BIO_free_all(p); }
};
struct PkeyFree {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
};
struct X509Free {
  void operator()(X509* p) const { X509_free(p); }
};
using BioPtr = std::unique_ptr<BIO, BioFree>;
using PkeyPtr = std::unique_ptr<EVP_PKEY, PkeyFree>;
using X509Ptr = std::unique_ptr<X509, X509Free>;

std::string openssl_error_text() {
  unsigned long code = ERR_get_error();
  if (code == 0) return "unknown OpenSSL error";
  char buf[256];
  ERR_error_string_n(code, buf, sizeof buf);
  ERR_clear_error();
  return buf;
}

[[noreturn]] void fail(const std::string& what) {
  throw std::runtime_error("certificate generation failed: " + what + ": " + openssl_error_text());
}

PkeyPtr generate_p256_key() {
  PkeyPtr key(EVP_EC_gen("P-256"));
  if (!key) fail("EC P-256 key generation");
  return key;
}

std::string key_to_pem(EVP_PKEY* key) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_PrivateKey(bio.get(), key, nullptr, nullptr, 0, nullptr, nullptr) != 1) {
    fail("writing a private key as PEM");
  }
  char* data = nullptr;
  long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

std::string cert_to_pem(X509* cert) {
  BioPtr bio(BIO_new(BIO_s_mem()));
  if (!bio || PEM_write_bio_X509(bio.get(), cert) != 1) fail("writing a certificate as PEM");
  char* data = nullptr;
  long size = BIO_get_mem_data(bio.get(), &data);
  return std::string(data, static_cast<std::size_t>(size));
}

X509Ptr cert_from_pem(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  X509Ptr cert(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr));
  if (!cert) fail("reading the CA certificate PEM");
  return cert;
}

PkeyPtr key_from_pem(const std::string& pem) {
  BioPtr bio(BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())));
  PkeyPtr key(PEM_read_bio_PrivateKey(bio.get(), nullptr, nullptr, nullptr));
  if (!key) fail("reading the CA private key PEM");
  return key;
}

void add_extension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (!ext) fail("building extension " + std::string(OBJ_nid2sn(nid)) + "=" + value);
  X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
}

// A certificate with a random 128-bit serial, valid from one hour ago (clock skew) for ten years.
X509Ptr new_certificate(EVP_PKEY* subject_key, const std::string& common_name) {
  X509Ptr cert(X509_new());
  if (!cert) fail("allocating a certificate");
  X509_set_version(cert.get(), 2);
  unsigned char serial_bytes[16];
  if (RAND_bytes(serial_bytes, sizeof serial_bytes) != 1) fail("random serial");
  serial_bytes[0] &= 0x7F;  // positive
  BIGNUM* serial_bn = BN_bin2bn(serial_bytes, sizeof serial_bytes, nullptr);
  BN_to_ASN1_INTEGER(serial_bn, X509_get_serialNumber(cert.get()));
  BN_free(serial_bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 10L * 365 * 24 * 3600);
  X509_set_pubkey(cert.get(), subject_key);
  X509_NAME* name = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(name, "O", MBSTRING_ASC, reinterpret_cast<const unsigned char*>("bootstorm"), -1,
                             -1, 0);
  X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1, 0);
  return cert;
}

void sign(X509* cert, X509* issuer_cert, EVP_PKEY* issuer_key) {
  X509_set_issuer_name(cert, X509_get_subject_name(issuer_cert));
  if (X509_sign(cert, issuer_key, EVP_sha256()) == 0) fail("signing a certificate");
}

std::string subject_alt_names(const std::vector<std::string>& names) {
  std::string san;
  for (const auto& name : names) {
    if (!san.empty()) san += ',';
    san += (detail::is_ip_literal(name) ? "IP:" : "DNS:") + name;
  }
  return san;
}

}  // namespace

GeneratedPki generate_pki(const std::string& common_name, const std::vector<std::string>& names) {
  GeneratedPki pki;
  PkeyPtr ca_key = generate_p256_key();
  X509Ptr ca = new_certificate(ca_key.get(), common_name + " CA");
  add_extension(ca.get(), ca.get(), NID_basic_constraints, "critical,CA:TRUE");
  add_extension(ca.get(), ca.get(), NID_key_usage, "critical,keyCertSign,cRLSign");
  add_extension(ca.get(), ca.get(), NID_subject_key_identifier, "hash");
  sign(ca.get(), ca.get(), ca_key.get());

  PkeyPtr leaf_key = generate_p256_key();
  X509Ptr leaf = new_certificate(leaf_key.get(), common_name);
  add_extension(leaf.get(), ca.get(), NID_basic_constraints, "critical,CA:FALSE");
  add_extension(leaf.get(), ca.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment");
  add_extension(leaf.get(), ca.get(), NID_ext_key_usage, "serverAuth,clientAuth");
  add_extension(leaf.get(), ca.get(), NID_subject_key_identifier, "hash");
  add_extension(leaf.get(), ca.get(), NID_authority_key_identifier, "keyid:always");
  if (!names.empty()) add_extension(leaf.get(), ca.get(), NID_subject_alt_name, subject_alt_names(names));
  sign(leaf.get(), ca.get(), ca_key.get());

  pki.ca_cert_pem = cert_to_pem(ca.get());
  pki.ca_key_pem = key_to_pem(ca_key.get());
  pki.leaf_cert_pem = cert_to_pem(leaf.get());
  pki.leaf_key_pem = key_to_pem(leaf_key.get());
  log::register_secret(pki.ca_key_pem);
  log::register_secret(pki.leaf_key_pem);
  return pki;
}

std::pair<std::string, std::string> generate_client_cert(const GeneratedPki& ca_pki,
                                                         const std::string& common_name) {
  X509Ptr ca = cert_from_pem(ca_pki.ca_cert_pem);
  PkeyPtr ca_key = key_from_pem(ca_pki.ca_key_pem);
  PkeyPtr key = generate_p256_key();
  X509Ptr cert = new_certificate(key.get(), common_name);
  add_extension(cert.get(), ca.get(), NID_basic_constraints, "critical,CA:FALSE");
  add_extension(cert.get(), ca.get(), NID_key_usage, "critical,digitalSignature,keyEncipherment");
  add_extension(cert.get(), ca.get(), NID_ext_key_usage, "clientAuth");
  add_extension(cert.get(), ca.get(), NID_subject_key_identifier, "hash");
  add_extension(cert.get(), ca.get(), NID_authority_key_identifier, "keyid:always");
  sign(cert.get(), ca.get(), ca_key.get());
  std::string key_pem = key_to_pem(key.get());
  log::register_secret(key_pem);
  return {cert_to_pem(cert.get()), std::move(key_pem)};
}

namespace detail {
namespace ssl = boost::asio::ssl;

namespace {

[[noreturn]] void setup_failure(const std::string& what, const boost::system::error_code& ec) {
  throw std::runtime_error("TLS setup failed: " + what + ": " + ec.message() +
                           " (check that the file exists, is readable and holds PEM data)");
}

void require_tls12(ssl::context& ctx) {
  SSL_CTX_set_min_proto_version(ctx.native_handle(), TLS1_2_VERSION);
  ctx.set_options(ssl::context::default_workarounds | ssl::context::no_compression);
  // OpenSSL keeps a 16 KB read and a 16 KB write buffer per connection for its lifetime unless told to
  // release them when idle: at a storm's thousands of pooled, mostly idle connections that alone is
  // hundreds of megabytes on both the client and the lab.
  SSL_CTX_set_mode(ctx.native_handle(), SSL_MODE_RELEASE_BUFFERS);
}

void load_certificate_and_key(ssl::context& ctx, const std::string& cert_file, const std::string& cert_data,
                              const std::string& key_file, const std::string& key_data, const char* role) {
  boost::system::error_code ec;
  if (!cert_data.empty()) {
    ctx.use_certificate_chain(boost::asio::buffer(cert_data), ec);
    if (ec) setup_failure(std::string(role) + " certificate (inline PEM)", ec);
  } else if (!cert_file.empty()) {
    ctx.use_certificate_chain_file(cert_file, ec);
    if (ec) setup_failure(std::string(role) + " certificate file " + cert_file, ec);
  }
  if (!key_data.empty()) {
    log::register_secret(key_data);
    ctx.use_private_key(boost::asio::buffer(key_data), ssl::context::pem, ec);
    if (ec) setup_failure(std::string(role) + " private key (inline PEM)", ec);
  } else if (!key_file.empty()) {
    ctx.use_private_key_file(key_file, ssl::context::pem, ec);
    if (ec) setup_failure(std::string(role) + " private key file " + key_file, ec);
  }
}

}  // namespace

bool is_ip_literal(const std::string& host) {
  boost::system::error_code ec;
  (void)boost::asio::ip::make_address(host, ec);
  return !ec;
}

ssl::context make_client_context(const TlsClientOptions& options) {
  ssl::context ctx(ssl::context::tls_client);
  require_tls12(ctx);
  boost::system::error_code ec;
  bool insecure = options.insecure_skip_verify || !options.verify;
  if (insecure) {
    ctx.set_verify_mode(ssl::verify_none);
  } else {
    ctx.set_verify_mode(ssl::verify_peer);
    if (!options.ca_data.empty()) {
      ctx.add_certificate_authority(boost::asio::buffer(options.ca_data), ec);
      if (ec) setup_failure("CA certificate (inline PEM)", ec);
    }
    if (!options.ca_file.empty()) {
      ctx.load_verify_file(options.ca_file, ec);
      if (ec) setup_failure("CA file " + options.ca_file, ec);
    }
    if (options.ca_data.empty() && options.ca_file.empty()) {
      ctx.set_default_verify_paths(ec);
      if (ec) setup_failure("system trust store", ec);
    }
  }
  load_certificate_and_key(ctx, options.client_cert_file, options.client_cert_data, options.client_key_file,
                           options.client_key_data, "client");
  return ctx;
}

ssl::context make_server_context(const TlsServerOptions& options) {
  ssl::context ctx(ssl::context::tls_server);
  require_tls12(ctx);
  ctx.set_options(ssl::context::single_dh_use);
  if (options.cert_data.empty() && options.cert_file.empty()) {
    throw std::runtime_error(
        "TLS setup failed: the server has TLS enabled but no certificate (set cert_file or "
        "cert_data)");
  }
  load_certificate_and_key(ctx, options.cert_file, options.cert_data, options.key_file, options.key_data,
                           "server");
  boost::system::error_code ec;
  bool verify_clients = !options.client_ca_data.empty() || !options.client_ca_file.empty();
  if (verify_clients) {
    if (!options.client_ca_data.empty()) {
      ctx.add_certificate_authority(boost::asio::buffer(options.client_ca_data), ec);
      if (ec) setup_failure("client CA (inline PEM)", ec);
    }
    if (!options.client_ca_file.empty()) {
      ctx.load_verify_file(options.client_ca_file, ec);
      if (ec) setup_failure("client CA file " + options.client_ca_file, ec);
    }
    ssl::verify_mode mode = ssl::verify_peer;
    if (options.require_client_cert) mode |= ssl::verify_fail_if_no_peer_cert;
    ctx.set_verify_mode(mode);
  } else {
    ctx.set_verify_mode(ssl::verify_none);
  }
  return ctx;
}

std::string verified_peer_common_name(SSL* ssl) {
  X509Ptr cert(SSL_get1_peer_certificate(ssl));
  if (!cert || SSL_get_verify_result(ssl) != X509_V_OK) return {};
  X509_NAME* subject = X509_get_subject_name(cert.get());
  int index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (index < 0) return {};
  ASN1_STRING* data = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index));
  unsigned char* utf8 = nullptr;
  int length = ASN1_STRING_to_UTF8(&utf8, data);
  if (length < 0) return {};
  std::string cn(reinterpret_cast<char*>(utf8), static_cast<std::size_t>(length));
  OPENSSL_free(utf8);
  return cn;
}

}  // namespace detail
}  // namespace bootstorm::http
