// The vim25 session over a fake /sdk (the Transport seam): login with the session cookie, SOAPAction's
// version, one shared re-login after NotAuthenticated, faults as errors or as replies, logout.
#include "providers/vsphere/vim25/session.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <functional>
#include <string>
#include <vector>

#include "protocol/vim25/messages.hpp"
#include "tests/support/run_task.hpp"

namespace {

namespace asio = boost::asio;
using namespace bootstorm;
using namespace bootstorm::vsphere::vim25;
using bootstorm::testing::run_task;

std::string envelope(const std::string& body) {
  return R"(<?xml version="1.0" encoding="UTF-8"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" )"
         R"(xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>)" +
         body + "</soapenv:Body></soapenv:Envelope>";
}

std::string fault_body(const std::string& type) {
  return envelope("<soapenv:Fault><faultcode>ServerFaultCode</faultcode><faultstring>" + type +
                  "</faultstring><detail><" + type + "Fault xmlns=\"urn:vim25\" xsi:type=\"" + type +
                  "\"/></detail></soapenv:Fault>");
}

// A scripted /sdk: knows the password, hands out numbered session cookies, can expire the session.
class FakeSdk final : public vsphere::Transport {
 public:
  std::string api_version = "6.5";
  std::string password = "right";
  bool expired = false;  // the next authenticated call answers NotAuthenticated (once)
  int sessions = 0;
  std::vector<http::Request> seen;
  std::function<std::optional<http::Response>(const http::Request&)> override_answer;

  asio::awaitable<Expected<http::Response>> send(http::Request req) override {
    seen.push_back(req);
    if (override_answer) {
      if (auto r = override_answer(req)) co_return *r;
    }
    http::Response r;
    r.status = 200;
    const std::string& b = req.body;
    auto cookie = req.header("Cookie");
    if (b.find("<RetrieveServiceContent ") != std::string::npos) {
      r.body = envelope(
          R"(<RetrieveServiceContentResponse xmlns="urn:vim25"><returnval><rootFolder type="Folder">group-d1</rootFolder>)"
          R"(<propertyCollector type="PropertyCollector">propertyCollector</propertyCollector><about><apiType>VirtualCenter</apiType><apiVersion>)" +
          api_version +
          R"(</apiVersion></about><sessionManager type="SessionManager">SessionManager</sessionManager></returnval></RetrieveServiceContentResponse>)");
    } else if (b.find("<Login ") != std::string::npos) {
      if (b.find("<password>" + password + "</password>") == std::string::npos) {
        r.status = 500;
        r.body = fault_body("InvalidLogin");
      } else {
        ++sessions;
        r.headers.emplace_back("Set-Cookie", "vmware_soap_session=\"s" + std::to_string(sessions) +
                                                 "\"; Path=/; HttpOnly; Secure;");
        r.body = envelope(
            R"(<LoginResponse xmlns="urn:vim25"><returnval><key>k</key><userName>u</userName></returnval></LoginResponse>)");
      }
    } else if (!cookie || *cookie != "vmware_soap_session=\"s" + std::to_string(sessions) + "\"" || expired) {
      expired = false;
      r.status = 500;
      r.body = fault_body("NotAuthenticated");
    } else if (b.find("<Logout ") != std::string::npos) {
      r.body = envelope(R"(<LogoutResponse xmlns="urn:vim25"/>)");
    } else if (b.find("<PowerOnVM_Task ") != std::string::npos) {
      r.status = 500;
      r.body = fault_body("InvalidPowerState");
    } else {
      r.body = envelope(R"(<DestroyViewResponse xmlns="urn:vim25"/>)");
    }
    co_return r;
  }
  asio::awaitable<Expected<void>> prewarm(std::size_t) override { co_return Expected<void>{}; }
  void close_idle() override {}
};

class Vim25Session : public ::testing::Test {
 protected:
  asio::io_context io;
  FakeSdk sdk;
  Session session{io.get_executor(), sdk,
                  vsphere::SessionSettings{"https://vc.example.com", "administrator@vsphere.local", "right",
                                           std::chrono::seconds(5)}};
};

TEST_F(Vim25Session, LoginKeepsTheCookieAndSendsItBack) {
  auto login = run_task(io, session.login());
  ASSERT_TRUE(login) << login.error().what();
  EXPECT_TRUE(session.logged_in());
  EXPECT_EQ(session.service_content().about.api_version, "6.5");
  EXPECT_EQ(session.api_version(), "6.5");
  auto reply = run_task(io, session.call("DestroyView", destroy_view({"ContainerView", "v"})));
  ASSERT_TRUE(reply) << reply.error().what();
  ASSERT_EQ(sdk.seen.size(), 3u);
  EXPECT_EQ(sdk.seen[0].target, "/sdk");
  EXPECT_EQ(sdk.seen[0].method, "POST");
  EXPECT_EQ(sdk.seen[0].header("SOAPAction"), "\"urn:vim25/5.5\"");  // before the server's version is known
  EXPECT_FALSE(sdk.seen[0].header("Cookie"));
  EXPECT_EQ(sdk.seen[2].header("Cookie"), "vmware_soap_session=\"s1\"");
  EXPECT_EQ(sdk.seen[2].header("SOAPAction"), "\"urn:vim25/6.5\"");
  EXPECT_NE(sdk.seen[2].header("Content-Type")->find("text/xml"), std::string::npos);
}

TEST_F(Vim25Session, SoapActionIsCappedAtTheVersionThisClientSpeaks) {
  sdk.api_version = "8.0.2.0";
  ASSERT_TRUE(run_task(io, session.login()));
  EXPECT_EQ(session.api_version(), std::string(kClientApiVersion));
  EXPECT_EQ(lower_version("6.7.3", "6.7"), "6.7");
  EXPECT_EQ(lower_version("6.0", "6.7"), "6.0");
  EXPECT_EQ(lower_version("", "6.7"), "6.7");
}

TEST_F(Vim25Session, AnExpiredSessionLogsInOnceAgainAndResends) {
  ASSERT_TRUE(run_task(io, session.login()));
  sdk.expired = true;
  auto reply = run_task(io, session.call("DestroyView", destroy_view({"ContainerView", "v"})));
  ASSERT_TRUE(reply) << reply.error().what();
  EXPECT_FALSE(reply->is_fault());
  EXPECT_EQ(session.logins(), 2u);
  EXPECT_EQ(session.stats().retries, 1u);
  EXPECT_EQ(sdk.seen.back().header("Cookie"), "vmware_soap_session=\"s2\"");
  // RetrieveServiceContent is not repeated: Login, then the resend.
  int contents = 0;
  for (const auto& r : sdk.seen) contents += r.body.find("<RetrieveServiceContent ") != std::string::npos;
  EXPECT_EQ(contents, 1);
}

TEST_F(Vim25Session, AWrongPasswordIsAnAuthErrorNamingTheUser) {
  Session wrong{io.get_executor(), sdk,
                vsphere::SessionSettings{"https://vc.example.com", "administrator@vsphere.local", "wrong",
                                         std::chrono::seconds(5)}};
  auto login = run_task(io, wrong.login());
  ASSERT_FALSE(login);
  EXPECT_EQ(login.error().kind, ErrorKind::auth);
  EXPECT_NE(
      login.error().message.find("vim25 Login at https://vc.example.com/sdk as administrator@vsphere.local"),
      std::string::npos)
      << login.error().message;
  EXPECT_NE(login.error().message.find("rejected the user name or password"), std::string::npos);
  EXPECT_FALSE(wrong.logged_in());
}

TEST_F(Vim25Session, FaultsAreErrorsUnlessTheCallerKeepsThem) {
  ASSERT_TRUE(run_task(io, session.login()));
  auto as_error = run_task(io, session.call("PowerOnVM_Task", power_on_vm_task({"VirtualMachine", "vm-1"})));
  ASSERT_FALSE(as_error);
  EXPECT_EQ(as_error.error().kind, ErrorKind::conflict);
  EXPECT_NE(as_error.error().message.find("vim25 PowerOnVM_Task at https://vc.example.com/sdk"),
            std::string::npos);
  CallOptions keep;
  keep.keep_fault = true;
  auto as_reply =
      run_task(io, session.call("PowerOnVM_Task", power_on_vm_task({"VirtualMachine", "vm-1"}), keep));
  ASSERT_TRUE(as_reply);
  ASSERT_TRUE(as_reply->is_fault());
  EXPECT_TRUE(as_reply->fault().is("InvalidPowerState"));
  EXPECT_EQ(session.stats().errors, 2u);
}

TEST_F(Vim25Session, NoSdkAtTheEndpointSaysSo) {
  sdk.override_answer = [](const http::Request&) -> std::optional<http::Response> {
    http::Response r;
    r.status = 404;
    r.body = "<html><body>404 Not Found</body></html>";
    return r;
  };
  auto probe = run_task(io, session.probe());
  ASSERT_FALSE(probe);
  EXPECT_EQ(probe.error().kind, ErrorKind::http_status);
  EXPECT_NE(probe.error().message.find(
                "vim25 RetrieveServiceContent at https://vc.example.com/sdk failed: HTTP 404"),
            std::string::npos)
      << probe.error().message;
}

TEST_F(Vim25Session, ATransportFailureNamesTheCall) {
  sdk.override_answer = [](const http::Request&) -> std::optional<http::Response> { return std::nullopt; };
  struct Refusing final : vsphere::Transport {
    asio::awaitable<Expected<http::Response>> send(http::Request) override {
      co_return make_error(ErrorKind::connect, "connection refused");
    }
    asio::awaitable<Expected<void>> prewarm(std::size_t) override { co_return Expected<void>{}; }
    void close_idle() override {}
  } refusing;
  Session unreachable{io.get_executor(), refusing,
                      vsphere::SessionSettings{"https://10.0.0.9", "u", "p", std::chrono::seconds(1)}};
  auto login = run_task(io, unreachable.login());
  ASSERT_FALSE(login);
  EXPECT_EQ(login.error().kind, ErrorKind::connect);
  EXPECT_EQ(login.error().message,
            "vim25 RetrieveServiceContent at https://10.0.0.9/sdk failed: connection refused");
}

TEST_F(Vim25Session, LogoutEndsTheSession) {
  ASSERT_TRUE(run_task(io, session.login()));
  run_task(io, session.logout());
  EXPECT_FALSE(session.logged_in());
  EXPECT_NE(sdk.seen.back().body.find("<Logout "), std::string::npos);
  run_task(io, session.logout());  // a second logout sends nothing
  EXPECT_NE(sdk.seen.back().body.find("<Logout "), std::string::npos);
  EXPECT_EQ(sdk.seen.size(), 3u);
}

}  // namespace
