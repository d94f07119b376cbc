#pragma once
// Internal to protocol/http: builds Asio SSL contexts from TlsClientOptions / TlsServerOptions and reads
// certificate details (Asio SSL, no Beast). Included by client.cpp, client_pool.cpp, server.cpp, tls.cpp.
#include <openssl/ssl.h>

#include <boost/asio/ssl/context.hpp>
#include <string>

#include "protocol/http/tls.hpp"

namespace bootstorm::http::detail {

// TLS 1.2+, verify_peer unless insecure, CA from file/data/system store, optional client certificate.
// Throws std::runtime_error on unreadable or malformed PEM (fatal setup error).
boost::asio::ssl::context make_client_context(const TlsClientOptions& options);
// TLS 1.2+, server certificate and key, optional client-certificate verification.
boost::asio::ssl::context make_server_context(const TlsServerOptions& options);

// True when `host` is an IP literal (no SNI for those, RFC 6066).
bool is_ip_literal(const std::string& host);

// CN of the peer certificate when it was presented and verified; empty otherwise.
std::string verified_peer_common_name(SSL* ssl);

}  // namespace bootstorm::http::detail
