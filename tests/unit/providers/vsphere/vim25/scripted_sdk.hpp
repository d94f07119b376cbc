#pragma once
// A scripted vCenter /sdk for unit tests of the vim25 client's logic: it logs in, then answers each call with
// the next body of its script, and keeps every request body. Helpers build the PropertyCollector's answers.
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <deque>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "providers/vsphere/transport.hpp"

namespace bootstorm::test_support::scripted_sdk {

namespace asio = boost::asio;

inline std::string envelope(const std::string& body) {
  return R"(<?xml version="1.0"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" )"
         R"(xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>)" +
         body + "</soapenv:Body></soapenv:Envelope>";
}

// One scripted answer: a SOAP body (an empty one: a transport failure), and how many times the client wrote
// the request before it (more than 1: its first answer was lost and the call was sent again).
struct Answer {
  Answer(std::string b, int n = 1) : body(std::move(b)), attempts(n) {}  // NOLINT: a body reads as an answer
  Answer(const char* b) : body(b) {}                                     // NOLINT
  std::string body;
  int attempts = 1;
};

// Logs in, then answers every other call from `script` in order.
class ScriptedSdk final : public vsphere::Transport {
 public:
  std::deque<Answer> script;
  std::vector<std::string> bodies;  // every request body after login

  asio::awaitable<Expected<http::Response>> send(http::Request req) override {
    http::Response r;
    r.status = 200;
    if (req.body.find("<RetrieveServiceContent ") != std::string::npos) {
      r.body = envelope(
          R"(<RetrieveServiceContentResponse xmlns="urn:vim25"><returnval><rootFolder type="Folder">f</rootFolder>)"
          R"(<propertyCollector type="PropertyCollector">pc</propertyCollector><about><apiVersion>7.0</apiVersion></about>)"
          R"(<sessionManager type="SessionManager">sm</sessionManager></returnval></RetrieveServiceContentResponse>)");
      co_return r;
    }
    if (req.body.find("<Login ") != std::string::npos) {
      r.headers.emplace_back("Set-Cookie", "vmware_soap_session=\"x\"; Path=/");
      r.body =
          envelope(R"(<LoginResponse xmlns="urn:vim25"><returnval><key>k</key></returnval></LoginResponse>)");
      co_return r;
    }
    bodies.push_back(req.body);
    if (script.empty()) co_return make_error(ErrorKind::io, "no more answers");
    Answer next = std::move(script.front());
    script.pop_front();
    if (next.body.empty()) co_return make_error(ErrorKind::io, "connection reset by peer");
    if (next.body.find("<soapenv:Fault>") != std::string::npos) r.status = 500;
    r.body = envelope(next.body);
    r.attempts = next.attempts;
    // Written and answered at once, as over a socket that never waits.
    r.written_at = r.received_at = std::chrono::steady_clock::now();
    r.written_at_wall = std::chrono::system_clock::now();
    co_return r;
  }
  asio::awaitable<Expected<void>> prewarm(std::size_t) override { co_return Expected<void>{}; }
  void close_idle() override {}
};

inline std::string collector_created() {
  return R"(<CreatePropertyCollectorResponse xmlns="urn:vim25"><returnval type="PropertyCollector">session[1]c1</returnval></CreatePropertyCollectorResponse>)";
}

inline std::string collector_destroyed() {
  return R"(<DestroyPropertyCollectorResponse xmlns="urn:vim25"/>)";
}

inline std::string filter_created() {
  return R"(<CreateFilterResponse xmlns="urn:vim25"><returnval type="PropertyFilter">session[1]f1</returnval></CreateFilterResponse>)";
}

inline std::string update(const std::string& version, const std::string& objects) {
  return R"(<WaitForUpdatesExResponse xmlns="urn:vim25"><returnval><version>)" + version +
         "</version><filterSet><filter type=\"PropertyFilter\">session[1]f1</filter>" + objects +
         "</filterSet></returnval></WaitForUpdatesExResponse>";
}

inline std::string task_change(const std::string& task, const std::string& changes) {
  return "<objectSet><kind>modify</kind><obj type=\"Task\">" + task + "</obj>" + changes + "</objectSet>";
}

inline std::string change(const std::string& name, const std::string& value) {
  return "<changeSet><name>" + name + "</name><op>assign</op>" + value + "</changeSet>";
}

// A task's info.state changed to `state` (queued, running, success, error).
inline std::string task_state(const std::string& state) {
  return change("info.state", "<val xsi:type=\"TaskInfoState\">" + state + "</val>");
}

// A SOAP fault of `type` (e.g. InvalidCollectorVersion), answered with HTTP 500 as vCenter does.
inline std::string fault(const std::string& type) {
  return "<soapenv:Fault><faultcode>ServerFaultCode</faultcode><faultstring>" + type +
         "</faultstring><detail><" + type + "Fault xmlns=\"urn:vim25\" xsi:type=\"" + type +
         "\"/></detail></soapenv:Fault>";
}

inline std::string vm_change(const std::string& vm, const std::string& changes,
                             const std::string& kind = "modify") {
  return "<objectSet><kind>" + kind + "</kind><obj type=\"VirtualMachine\">" + vm + "</obj>" + changes +
         "</objectSet>";
}

}  // namespace bootstorm::test_support::scripted_sdk
