// Fuzz target: Kubernetes watch streams end to end on the client side — HTTP/1.1 chunked framing and line
// splitting in http::Client::stream (over a real loopback socket), then decode_watch_line and decode_list in
// both modes, the VMI status view, the milestone tracker and the DataVolume state decoder on every object.
//
// Input: the first byte picks the framing. Odd: the rest is the raw response body after the headers
// "Transfer-Encoding: chunked", so the fuzzer writes the chunk framing itself (sizes, extensions, trailers).
// Even: the rest is the payload (newline-delimited watch events), chunked here into pieces whose sizes come
// from the first byte, so lines split across chunks at every position.
//
// Property checked beyond "no crash": both decoding modes (the full parser and the milestone-fields scanner)
// agree on the event and on everything the observers read from it.
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/read_until.hpp>
#include <boost/asio/streambuf.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/write.hpp>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "protocol/http/client.hpp"
#include "providers/kubevirt/kube_objects.hpp"
#include "providers/kubevirt/vmi_tracker.hpp"

namespace {

namespace asio = boost::asio;
using asio::ip::tcp;
using namespace bootstorm;

std::string fmt_hex(std::size_t n) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%zx", n);
  return buf;
}

std::string response_bytes(const std::uint8_t* data, std::size_t size) {
  std::string out =
      "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n"
      "Connection: close\r\n\r\n";
  if (size == 0) return out + "0\r\n\r\n";
  const std::uint8_t mode = data[0];
  const std::string payload(reinterpret_cast<const char*>(data + 1), size - 1);
  if (mode & 1) return out + payload;
  const std::size_t piece = 1 + mode % 97;
  for (std::size_t at = 0; at < payload.size(); at += piece) {
    const std::size_t n = std::min(piece, payload.size() - at);
    out += fmt_hex(n) + "\r\n" + payload.substr(at, n) + "\r\n";
  }
  return out + "0\r\n\r\n";
}

bool same_view(const kubevirt::VmiStatusView& a, const kubevirt::VmiStatusView& b) {
  return a.name == b.name && a.phase == b.phase && a.node == b.node && a.scheduled == b.scheduled &&
         a.running == b.running && a.agent_connected == b.agent_connected && a.ip == b.ip &&
         a.scheduled_at == b.scheduled_at && a.running_at == b.running_at && a.agent_at == b.agent_at;
}

[[noreturn]] void disagree(std::string_view what, std::string_view line) {
  std::fprintf(stderr, "decoding modes disagree on %.*s for the line:\n%.*s\n", static_cast<int>(what.size()),
               what.data(), static_cast<int>(line.size()), line.data());
  std::abort();
}

// The same property for list responses (decode_list), on the line itself and on the line as list items.
void check_list(std::string_view body) {
  auto full = kube::decode_list(body, kube::WatchDecode::full);
  auto fields = kube::decode_list(body, kube::WatchDecode::milestone_fields);
  if (full.has_value() && !fields.has_value()) disagree("whether the body is a list", body);
  if (!full || !fields) return;
  if (full->resource_version != fields->resource_version) disagree("the list's resourceVersion", body);
  if (full->items.size() != fields->items.size()) disagree("the number of items", body);
  for (std::size_t i = 0; i < full->items.size(); ++i) {
    if (!same_view(kubevirt::view_vmi(full->items[i]), kubevirt::view_vmi(fields->items[i])))
      disagree("a listed VMI's status", body);
    if (kubevirt::datavolume_state(full->items[i]).detail !=
        kubevirt::datavolume_state(fields->items[i]).detail)
      disagree("a listed DataVolume's state", body);
  }
}

void check_line(std::string_view line, kubevirt::VmiTracker& tracker) {
  check_list(line);
  check_list("{\"metadata\":{\"resourceVersion\":\"7\"},\"items\":[" + std::string(line) + "," +
             std::string(line) + "]}");
  auto full = kube::decode_watch_line(line, kube::WatchDecode::full);
  auto fields = kube::decode_watch_line(line, kube::WatchDecode::milestone_fields);
  // The scanner may accept lines the full parser refuses (it does not validate what it skips, e.g. invalid
  // UTF-8 inside a key it drops: corpus/kube_watch/scanner-lenient-invalid-utf8.txt); it must never refuse a
  // line the full parser accepts, and where both accept they must agree.
  if (full.has_value() && !fields.has_value()) disagree("whether the line is an event", line);
  // A compacted line (what the watch thread posts) decodes to exactly what the line decodes to.
  if (auto compact = kube::compact_watch_line(line)) {
    auto from_compact = kube::decode_watch_line(*compact, kube::WatchDecode::milestone_fields);
    if (from_compact.has_value() != fields.has_value())
      disagree("whether the compacted line is an event", line);
    if (fields && (from_compact->type != fields->type || from_compact->object != fields->object))
      disagree("the compacted line's event", line);
  }
  if (!full || !fields) return;
  if (full->type != fields->type) disagree("the event type", line);
  if (full->error_code != fields->error_code) disagree("the error code", line);
  if (full->resource_version() != fields->resource_version()) disagree("the resourceVersion", line);
  if (!same_view(kubevirt::view_vmi(full->object), kubevirt::view_vmi(fields->object)))
    disagree("the VMI status", line);
  const auto dv_full = kubevirt::datavolume_state(full->object);
  const auto dv_fields = kubevirt::datavolume_state(fields->object);
  if (dv_full.phase != dv_fields.phase || dv_full.succeeded != dv_fields.succeeded ||
      dv_full.failed != dv_fields.failed)
    disagree("the DataVolume state", line);
  const auto at = kube::ClientInstant::now();
  tracker.note_stream_alive(at);
  (void)tracker.on_watch_object(fields->object, at, false, 0.002);
  (void)tracker.on_listed_object(full->object, at);
}

struct Loopback {
  asio::io_context io;
  tcp::acceptor acceptor{io, tcp::endpoint(asio::ip::make_address("127.0.0.1"), 0)};
  http::Client client{io.get_executor(), [this] {
                        http::ClientOptions o;
                        o.base_url = "http://127.0.0.1:" + std::to_string(acceptor.local_endpoint().port());
                        o.retry.max_attempts = 1;
                        return o;
                      }()};
};

asio::awaitable<void> serve_once(tcp::acceptor& acceptor, std::string response) {
  auto [accept_ec, socket] = co_await acceptor.async_accept(asio::as_tuple(asio::use_awaitable));
  if (!accept_ec) {
    asio::streambuf request;
    auto [read_ec, n] =
        co_await asio::async_read_until(socket, request, "\r\n\r\n", asio::as_tuple(asio::use_awaitable));
    if (!read_ec)
      co_await asio::async_write(socket, asio::buffer(response), asio::as_tuple(asio::use_awaitable));
    boost::system::error_code ignored;
    socket.shutdown(tcp::socket::shutdown_both, ignored);
  }
}

// Outside the extern "C" function: g++ 12 mangles two lambdas of an extern "C" function to the same name.
void watch_one(const std::uint8_t* data, std::size_t size) {
  static Loopback* loop = new Loopback();  // lives for the process: one listening socket for every input
  kubevirt::VmiTracker tracker({"vm-001", "vm-002", "bs-3f9a2c-desk-001"}, kube::ClientInstant::now());
  int finished = 0;
  // An exception escaping either side is a bug: rethrown, it ends the process as a crash.
  auto count = [&finished](std::exception_ptr e) {
    ++finished;
    if (e) std::rethrow_exception(e);
  };
  asio::co_spawn(loop->io, serve_once(loop->acceptor, response_bytes(data, size)), count);
  asio::co_spawn(
      loop->io,
      [&]() -> asio::awaitable<void> {
        http::Request request("GET",
                              "/apis/kubevirt.io/v1/namespaces/lab/virtualmachineinstances?watch=true"
                              "&allowWatchBookmarks=true");
        request.timeout = std::chrono::seconds(5);
        (void)co_await loop->client.stream(
            std::move(request), [](int, const http::Headers&) {},
            [&](std::string_view line) { check_line(line, tracker); });
      },
      count);
  loop->io.restart();
  while (finished < 2) loop->io.run_one();
  loop->io.poll();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  watch_one(data, size);
  return 0;
}
