// Fuzz target: vim25 (SOAP) answers, through the XML document, the SOAP framing, the fault decoding and every
// decoder, and through a session that logs in, calls and logs out against a fake /sdk that answers with the
// input's records in order.
//
// Input: answers separated by a line "====". Each starts with a line holding the HTTP status (three digits;
// anything else means 200) and may set the session cookie with a second line "Set-Cookie: ..."; the rest is
// the body. When the answers run out, the transport fails like a refused connection.
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <cstdint>
#include <deque>
#include <exception>
#include <string>
#include <string_view>

#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/fault.hpp"
#include "protocol/vim25/messages.hpp"
#include "providers/vsphere/vim25/session.hpp"

namespace {

namespace asio = boost::asio;
using namespace bootstorm;
using namespace bootstorm::vsphere::vim25;

std::deque<http::Response> parse_answers(std::string_view input) {
  std::deque<http::Response> out;
  for (;;) {
    const auto separator = input.find("\n====\n");
    std::string_view record = input.substr(0, separator);
    input = separator == std::string_view::npos ? std::string_view() : input.substr(separator + 6);
    http::Response r;
    r.status = 200;
    auto newline = record.find('\n');
    std::string_view first = record.substr(0, newline);
    if (first.size() == 3 && first.find_first_not_of("0123456789") == std::string_view::npos) {
      r.status = std::stoi(std::string(first));
      record = newline == std::string_view::npos ? std::string_view() : record.substr(newline + 1);
    }
    constexpr std::string_view kCookie = "Set-Cookie: ";
    if (record.substr(0, kCookie.size()) == kCookie) {
      newline = record.find('\n');
      r.headers.emplace_back("Set-Cookie",
                             std::string(record.substr(kCookie.size(), newline - kCookie.size())));
      record = newline == std::string_view::npos ? std::string_view() : record.substr(newline + 1);
    }
    r.body = std::string(record);
    out.push_back(std::move(r));
    if (input.empty()) break;
  }
  return out;
}

class ScriptedSdk final : public bootstorm::vsphere::Transport {
 public:
  explicit ScriptedSdk(std::deque<http::Response> answers) : answers_(std::move(answers)) {}
  asio::awaitable<Expected<http::Response>> send(http::Request) override {
    if (answers_.empty()) co_return make_error(ErrorKind::io, "connection refused (no more answers)");
    http::Response r = std::move(answers_.front());
    answers_.pop_front();
    co_return r;
  }
  asio::awaitable<Expected<void>> prewarm(std::size_t) override { co_return Expected<void>{}; }
  void close_idle() override {}

 private:
  std::deque<http::Response> answers_;
};

void decode_all(const SoapReply& reply) {
  if (reply.is_fault()) {
    (void)fault_error(reply.fault(), "fuzz");
    return;
  }
  (void)decode_service_content(reply.returnval());
  (void)decode_user_session(reply.returnval());
  (void)decode_update_set(reply.response(), "1");
  (void)decode_retrieve_result(reply.response());
  (void)decode_value(reply.response());
}

asio::awaitable<void> drive(Session& session) {
  if (!co_await session.login()) co_return;
  const MoRef pc = session.service_content().property_collector;
  const std::string method = "WaitForUpdatesEx";
  const std::string element = wait_for_updates_ex(pc, "", WaitOptions{0, 100});
  CallOptions keep;
  keep.keep_fault = true;
  auto reply = co_await session.call(method, element, keep);
  if (reply) decode_all(*reply);
  co_await session.logout();
}

// Outside the extern "C" function: g++ 12 mangles two lambdas of an extern "C" function to the same name.
void fuzz_one(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  auto answers = parse_answers(input);
  for (const auto& a : answers) {
    auto reply = SoapReply::parse(a.status, a.body, "fuzz");
    if (reply) decode_all(*reply);
  }
  asio::io_context io;
  ScriptedSdk sdk(std::move(answers));
  Session session(io.get_executor(), sdk,
                  bootstorm::vsphere::SessionSettings{"https://vcenter.fuzz", "administrator@vsphere.local",
                                                      "fuzz-pass", std::chrono::seconds(5)});
  asio::co_spawn(io, drive(session), [](std::exception_ptr e) {
    if (e) std::rethrow_exception(e);  // an exception escaping the client is a bug: a crash
  });
  io.run();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  fuzz_one(data, size);
  return 0;
}
