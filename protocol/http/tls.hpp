#pragma once
// TLS settings for clients and servers, as PEM file paths or inline PEM data.
#include <string>
#include <utility>
#include <vector>

namespace bootstorm::http {

struct TlsClientOptions {
  bool verify = true;                 // certificate chain + hostname verification (default on)
  bool insecure_skip_verify = false;  // explicit opt-out; logs a warning once per client
  std::string ca_file;                // PEM bundle; empty: system default trust store
  std::string ca_data;                // inline PEM (kubeconfig certificate-authority-data, decoded)
  std::string client_cert_file, client_cert_data;  // client certificate (mTLS)
  std::string client_key_file, client_key_data;    // its private key (never logged)
  std::string server_name;                         // override for SNI + hostname check; empty: the URL's host
};

struct TlsServerOptions {
  std::string cert_file, cert_data;            // server certificate chain (PEM)
  std::string key_file, key_data;              // private key (PEM)
  std::string client_ca_file, client_ca_data;  // when set, client certificates are requested and verified
  bool require_client_cert = false;
};

// A self-signed CA and a leaf certificate signed by it, generated with OpenSSL at run time.
// Used by the lab simulator (so that verification is testable) and by tests.
struct GeneratedPki {
  std::string ca_cert_pem;
  std::string ca_key_pem;
  std::string leaf_cert_pem;  // for the given DNS names / IPs (subjectAltName)
  std::string leaf_key_pem;
};
// `names` are DNS names or IP literals for subjectAltName; `common_name` for the leaf subject.
GeneratedPki generate_pki(const std::string& common_name, const std::vector<std::string>& names);
// A client certificate signed by the given CA (for mTLS tests and the simulator's kubeconfig).
std::pair<std::string, std::string> generate_client_cert(const GeneratedPki& ca,
                                                         const std::string& common_name);

}  // namespace bootstorm::http
