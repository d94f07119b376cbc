// TLS over loopback with a CA generated at run time: trust, host name checks, insecure mode, client certs.
#include <boost/asio/detached.hpp>
#include <fstream>

#include "support.hpp"
#include "tests/support/scratch_dir.hpp"

namespace bootstorm::http::test {
namespace {

class HttpTls : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    pki_ = new GeneratedPki(generate_pki("bootstorm-test", {"localhost", "127.0.0.1"}));
    other_pki_ = new GeneratedPki(generate_pki("bootstorm-test", {"localhost", "127.0.0.1"}));
  }
  static void TearDownTestSuite() {
    delete pki_;
    delete other_pki_;
  }

  // A TLS server answering with the client certificate subject it saw.
  std::unique_ptr<Server> make_server(TlsServerOptions tls = {}) {
    tls.cert_data = pki_->leaf_cert_pem;
    tls.key_data = pki_->leaf_key_pem;
    ServerOptions options;
    options.tls = tls;
    auto server = std::make_unique<Server>(io_.get_executor(), options,
                                           [this](ServerRequest& request) -> net::awaitable<ServerResponse> {
                                             ++handled_;
                                             co_return text(200, "subject=" + request.client_cert_subject);
                                           });
    EXPECT_TRUE(server->start());
    return server;
  }

  ClientOptions client_options(const Server& server) {
    ClientOptions options;
    options.base_url = server.base_url();
    options.tls.ca_data = pki_->ca_cert_pem;
    options.retry.max_attempts = 1;
    return options;
  }

  Expected<Response> get(ClientOptions options, std::string target = "/") {
    Client client(io_.get_executor(), std::move(options));
    std::optional<Expected<Response>> result;
    run(io_, [&]() -> net::awaitable<void> { result = co_await client.request(Request("GET", target)); });
    return std::move(*result);
  }

  static GeneratedPki* pki_;
  static GeneratedPki* other_pki_;
  net::io_context io_;
  int handled_ = 0;
};

GeneratedPki* HttpTls::pki_ = nullptr;
GeneratedPki* HttpTls::other_pki_ = nullptr;

TEST_F(HttpTls, TrustedCaPassesAndConnectionIsReused) {
  auto server = make_server();
  EXPECT_EQ(server->base_url().rfind("https://127.0.0.1:", 0), 0u);
  Client client(io_.get_executor(), client_options(*server));
  run(io_, [&]() -> net::awaitable<void> {
    for (int i = 0; i < 5; ++i) {
      auto response = co_await client.request(Request("GET", "/"));
      CO_ASSERT(response);
      EXPECT_EQ(response->status, 200);
      EXPECT_EQ(response->body, "subject=");
    }
  });
  EXPECT_EQ(server->stats().connections_accepted, 1u);
  EXPECT_EQ(handled_, 5);
}

TEST_F(HttpTls, PrewarmedConnectionsAreReused) {
  auto server = make_server();
  ClientOptions options = client_options(*server);
  options.max_connections = 3;
  Client client(io_.get_executor(), options);
  int reused = 0;
  run(io_, [&]() -> net::awaitable<void> {
    auto warmed = co_await client.prewarm(3);
    CO_ASSERT(warmed);
    co_await sleep_for(20ms);  // lets TLS 1.3 session tickets arrive on the idle connections
    reused = co_await concurrent_gets_on_reused_connections(client, 3);
  });
  EXPECT_EQ(reused, 3);
  EXPECT_EQ(server->stats().connections_accepted, 3u);
  EXPECT_EQ(client.stats().connections_opened, 3u);
}

// A storm-sized pool must not open all its connections at once (the server's accept queue overflows and the
// kernel drops handshakes): at most max_connecting handshakes are in flight, the rest queue and all succeed.
TEST_F(HttpTls, ConnectionOpeningsAreCappedAndQueued) {
  auto server = make_server();
  ClientOptions options = client_options(*server);
  options.max_connections = 40;
  options.max_connecting = 3;
  Client client(io_.get_executor(), options);
  int ok = 0;
  run(io_, [&]() -> net::awaitable<void> {
    auto warmed = co_await client.prewarm(20);
    CO_ASSERT(warmed);
    int finished = 0;
    for (int i = 0; i < 40; ++i) {  // 20 idle, then 20 more opened on demand by concurrent requests
      net::co_spawn(
          io_,
          [&]() -> net::awaitable<void> {
            auto response = co_await client.request(Request("GET", "/"));
            if (response && response->status == 200) ++ok;
            ++finished;
          },
          net::detached);
    }
    while (finished < 40) co_await sleep_for(5ms);
  });
  EXPECT_EQ(ok, 40);
  EXPECT_EQ(client.stats().peak_connecting, 3u);
  EXPECT_GE(client.stats().connections_opened, 21u);
  EXPECT_LE(client.stats().connections_opened, 40u);
}

TEST_F(HttpTls, CaFromFileAndDnsHostName) {
  auto server = make_server();
  const test_support::ScratchDir dir("http-ca");
  const auto path = dir / "ca.pem";
  std::ofstream(path) << pki_->ca_cert_pem;
  ClientOptions options = client_options(*server);
  options.tls.ca_data.clear();
  options.tls.ca_file = path.string();
  options.base_url = "https://localhost:" + std::to_string(server->port());
  auto response = get(options);
  ASSERT_TRUE(response) << response.error().what();
  EXPECT_EQ(response->status, 200);
}

TEST_F(HttpTls, WrongHostNameFails) {
  auto server = make_server();
  ClientOptions options = client_options(*server);
  options.tls.server_name = "wrong.example";
  auto response = get(options);
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, ErrorKind::tls) << response.error().what();
  EXPECT_NE(response.error().message.find("certificate verification failed"), std::string::npos)
      << response.error().message;
  EXPECT_NE(response.error().message.find("wrong.example"), std::string::npos) << response.error().message;
  EXPECT_EQ(handled_, 0);
}

TEST_F(HttpTls, UntrustedCaFailsWithAnActionableMessage) {
  auto server = make_server();
  ClientOptions options = client_options(*server);
  options.tls.ca_data = other_pki_->ca_cert_pem;
  auto response = get(options);
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, ErrorKind::tls) << response.error().what();
  EXPECT_NE(response.error().message.find("certificate verification failed"), std::string::npos)
      << response.error().message;
  EXPECT_NE(response.error().hint.find("CA"), std::string::npos) << response.error().hint;
  EXPECT_EQ(handled_, 0);
}

TEST_F(HttpTls, SystemTrustStoreRejectsPrivateCa) {
  auto server = make_server();
  ClientOptions options = client_options(*server);
  options.tls.ca_data.clear();
  auto response = get(options);
  ASSERT_FALSE(response);
  EXPECT_EQ(response.error().kind, ErrorKind::tls) << response.error().what();
}

TEST_F(HttpTls, InsecureModeSkipsVerification) {
  auto server = make_server();
  ClientOptions options = client_options(*server);
  options.tls.ca_data = other_pki_->ca_cert_pem;
  options.tls.server_name = "wrong.example";
  options.tls.insecure_skip_verify = true;
  auto response = get(options);
  ASSERT_TRUE(response) << response.error().what();
  EXPECT_EQ(response->status, 200);
}

TEST_F(HttpTls, ClientCertificateIsPresentedAndSeenByTheServer) {
  auto server =
      make_server(TlsServerOptions{.client_ca_data = pki_->ca_cert_pem, .require_client_cert = true});
  auto [cert, key] = generate_client_cert(*pki_, "system:bootstorm");
  ClientOptions options = client_options(*server);
  options.tls.client_cert_data = cert;
  options.tls.client_key_data = key;
  auto response = get(options);
  ASSERT_TRUE(response) << response.error().what();
  EXPECT_EQ(response->body, "subject=system:bootstorm");
}

TEST_F(HttpTls, MissingClientCertificateIsRefused) {
  auto server =
      make_server(TlsServerOptions{.client_ca_data = pki_->ca_cert_pem, .require_client_cert = true});
  auto response = get(client_options(*server));
  EXPECT_FALSE(response);
  EXPECT_EQ(handled_, 0);
}

TEST_F(HttpTls, ClientCertificateFromAnotherCaIsRefused) {
  auto server =
      make_server(TlsServerOptions{.client_ca_data = pki_->ca_cert_pem, .require_client_cert = true});
  auto [cert, key] = generate_client_cert(*other_pki_, "intruder");
  ClientOptions options = client_options(*server);
  options.tls.client_cert_data = cert;
  options.tls.client_key_data = key;
  auto response = get(options);
  EXPECT_FALSE(response);
  EXPECT_EQ(handled_, 0);
}

TEST_F(HttpTls, StreamsOverTls) {
  ServerOptions server_options;
  server_options.tls = TlsServerOptions{.cert_data = pki_->leaf_cert_pem, .key_data = pki_->leaf_key_pem};
  Server server(io_.get_executor(), server_options, [](ServerRequest&) -> net::awaitable<ServerResponse> {
    ServerResponse response;
    response.stream = [](StreamWriter& writer) -> net::awaitable<void> {
      co_await writer.write("a\nb");
      co_await writer.write("c\n");
    };
    co_return response;
  });
  ASSERT_TRUE(server.start());
  Client client(io_.get_executor(), client_options(server));
  std::vector<std::string> lines;
  run(io_, [&]() -> net::awaitable<void> {
    auto result = co_await client.stream(Request("GET", "/w"), nullptr,
                                         [&](std::string_view line) { lines.emplace_back(line); });
    EXPECT_TRUE(result) << (result ? "" : result.error().what());
  });
  EXPECT_EQ(lines, (std::vector<std::string>{"a", "bc"}));
}

TEST_F(HttpTls, UnreadableCaFileIsAFatalSetupError) {
  ClientOptions options;
  options.base_url = "https://127.0.0.1:1";
  options.tls.ca_file = "/nonexistent/ca.pem";
  EXPECT_THROW(Client(io_.get_executor(), options), std::runtime_error);
  options.base_url = "not a url";
  EXPECT_THROW(Client(io_.get_executor(), options), std::invalid_argument);
}

}  // namespace
}  // namespace bootstorm::http::test
