// Watch streams: `?watch=1` (or the legacy /watch/ prefix) answered as newline-delimited JSON events over a
// chunked response, with resourceVersion resumption, label/field selectors (objects moving in or out of the
// selection become ADDED/DELETED, as the API server's watch cache does), periodic BOOKMARKs, timeoutSeconds,
// 410 Gone for a resourceVersion older than the history window, and the lab's watch faults.
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/use_awaitable.hpp>

#include "simulator/kube/kube_front_impl.hpp"
#include "simulator/kube/selectors.hpp"

namespace bootstorm::sim::kube {
namespace {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

struct WatchState {
  Kind kind = Kind::namespaces;
  std::string ns;
  LabelSelector labels;
  FieldSelector fields;
  bool bookmarks = false;
  bool initial_events_end = false;  // sendInitialEvents: a bookmark marks the end of the initial state
  std::chrono::milliseconds timeout{0};
  ObjectStore::Subscription subscription;
  std::string gone_message;  // non-empty: answer a 410 ERROR event and end
  ResponseShape shape;       // kubectl get -w asks for each event's object as a one-row Table
  IncludeObject include = IncludeObject::metadata;
};

bool selected(const WatchState& state, const ObjectPtr& object) {
  if (!object) return false;
  const json& meta = object->object["metadata"];
  if (!state.ns.empty() && meta.value("namespace", "") != state.ns) return false;
  if (!state.labels.empty()) {
    auto it = meta.find("labels");
    if (!state.labels.matches(it == meta.end() ? json() : *it)) return false;
  }
  return state.fields.empty() || state.fields.matches(object->object);
}

void append_event(std::string& out, const char* type, const std::string& object_text) {
  out += R"({"type":")";
  out += type;
  out += R"(","object":)";
  out += object_text;
  out += "}\n";
}

// Appends an event of `object` in the shape the watcher asked for; `now` (Unix seconds) dates Table ages.
void append_object_event(std::string& out, const WatchState& state, const char* type, const ObjectPtr& object,
                         double now) {
  if (state.shape.as == ResponseShape::As::object) {
    append_event(out, type, object->text);
    return;
  }
  const json metadata = {{"resourceVersion", object->object["metadata"].value("resourceVersion", "")}};
  append_event(
      out, type,
      render_shaped(state.kind, {&object->object}, metadata, state.shape, state.include, now, false).dump());
}

// Appends the event as this watcher sees it; returns whether anything was appended.
bool append_filtered(const WatchState& state, const WatchEvent& event, std::string& out, double now) {
  bool now_in = selected(state, event.object);
  switch (event.type) {
    case EventType::added:
      if (!now_in) return false;
      append_object_event(out, state, "ADDED", event.object, now);
      return true;
    case EventType::deleted:
      if (!selected(state, event.previous ? event.previous : event.object)) return false;
      append_object_event(out, state, "DELETED", event.object, now);
      return true;
    case EventType::modified: {
      bool was_in = selected(state, event.previous);
      if (was_in && now_in) {
        append_object_event(out, state, "MODIFIED", event.object, now);
      } else if (was_in) {
        append_object_event(out, state, "DELETED", event.object, now);
      } else if (now_in) {
        append_object_event(out, state, "ADDED", event.object, now);
      } else {
        return false;
      }
      return true;
    }
  }
  return false;
}

// (end offset in the chunk, VMI resourceVersion) of the events a chunk carries.
using Carried = std::vector<std::pair<std::size_t, std::uint64_t>>;

// Writes `chunk` (whole lines) in pieces of at most one TLS record and clears it. Beast's TLS stream
// coalesces a chunk of up to 16 KB into one record that is sent when the write is initiated; a larger write
// sends one record per turn of the lab's event loop, which during a burst of requests is a long wait per
// record. Writing record-sized pieces costs no extra turns and makes the moment each piece reaches the socket
// known: the truth's "delivered" time of the VMI versions in the piece is stamped just before its write is
// initiated, and their "written" time when the write has completed.
asio::awaitable<bool> write_records(KubeFront::Impl& front, http::StreamWriter& writer, std::string& chunk,
                                    Carried& carried) {
  constexpr std::size_t kRecordBytes = 16000;  // 16 KB less the chunked encoding's framing
  std::size_t begin = 0, next = 0;
  std::vector<std::uint64_t> versions;
  bool ok = true;
  while (ok && begin < chunk.size()) {
    std::size_t end = chunk.size();
    if (end - begin > kRecordBytes) {
      std::size_t cut = chunk.rfind('\n', begin + kRecordBytes - 1);
      if (cut == std::string::npos || cut < begin)
        cut = chunk.find('\n', begin);  // one line longer than a record
      end = cut == std::string::npos ? chunk.size() : cut + 1;
    }
    versions.clear();
    while (next < carried.size() && carried[next].first <= end) versions.push_back(carried[next++].second);
    const auto delivered = front.virt_handler.mark_delivered(versions);
    ok = co_await writer.write(chunk.substr(begin, end - begin));
    if (ok) front.virt_handler.mark_written(delivered);
    begin = end;
  }
  chunk.clear();
  carried.clear();
  co_return ok;
}

std::string bookmark_line(const ResourceType& type, std::uint64_t rv, bool initial_events_end) {
  json meta = {{"resourceVersion", std::to_string(rv)}, {"creationTimestamp", nullptr}};
  if (initial_events_end) meta["annotations"] = {{"k8s.io/initial-events-end", "true"}};
  json event = {{"type", "BOOKMARK"},
                {"object", {{"kind", type.kind}, {"apiVersion", type.api_version()}, {"metadata", meta}}}};
  return event.dump() + "\n";
}

}  // namespace

namespace {

// A watch's stream: the backlog (a fresh watch's ADDED events, or the history after its version), then
// every change as it comes, bookmarks, and the end at its timeout, a dropped connection or a lab fault.
asio::awaitable<void> stream_watch(std::shared_ptr<KubeFront::Impl> self, std::shared_ptr<WatchState> state,
                                   http::StreamWriter& writer) {
  const ResourceType& type = resource_type(state->kind);
  ++self->stats.watches_active;
  struct ActiveGuard {
    KubeFront::Impl* impl;
    std::shared_ptr<WatchQueue> queue;
    ~ActiveGuard() {
      --impl->stats.watches_active;
      if (queue) impl->store.unsubscribe(queue);
    }
  } guard{self.get(), state->subscription.queue};

  if (!state->gone_message.empty()) {
    ++self->stats.watches_gone;
    std::string line;
    append_event(line, "ERROR", expired(state->gone_message).status.dump());
    co_await writer.write(std::move(line));
    co_return;
  }

  auto executor = writer.executor();
  auto timer = std::make_shared<asio::steady_timer>(executor);
  auto notified = std::make_shared<std::atomic<bool>>(false);
  std::weak_ptr<asio::steady_timer> weak_timer = timer;
  auto queue = state->subscription.queue;
  queue->set_waker([weak_timer, notified, executor] {
    if (notified->exchange(true)) return;
    asio::post(executor, [weak_timer] {
      if (auto t = weak_timer.lock()) t->cancel();
    });
  });

  const auto started = Clock::now();
  const auto deadline = started + state->timeout;
  auto next_bookmark = started + self->options.bookmark_interval;
  constexpr std::size_t kChunkBytes = 1 << 20;

  // The backlog: synthetic ADDED events of a fresh watch, or the history after the requested version.
  std::string chunk;
  Carried carried;  // VMI versions in `chunk`, for the truth's "delivered"
  // Tables date each row's age; plain events need no clock.
  auto table_now = [&] { return state->shape.as == ResponseShape::As::object ? 0.0 : self->now(); };
  double now = table_now();
  for (const auto& event : state->subscription.backlog) {
    if (append_filtered(*state, event, chunk, now)) {
      ++self->stats.watch_events_sent;
      if (event.kind == Kind::virtual_machine_instances)
        carried.emplace_back(chunk.size(), event.resource_version);
    }
    if (chunk.size() >= kChunkBytes) {
      if (!co_await write_records(*self, writer, chunk, carried)) co_return;
    }
  }
  state->subscription.backlog.clear();
  if (state->initial_events_end) {
    chunk += bookmark_line(type, state->subscription.resource_version, true);
    ++self->stats.bookmarks_sent;
  }
  if (!chunk.empty()) {
    if (!co_await write_records(*self, writer, chunk, carried)) co_return;
  }

  while (self->alive && writer.open() && !queue->closed()) {
    notified->store(false);
    auto events = queue->take();
    if (queue->overflowed()) co_return;  // too slow a consumer: end the watch, the client re-lists
    now = table_now();
    for (const auto& event : events) {
      if (append_filtered(*state, event, chunk, now)) {
        ++self->stats.watch_events_sent;
        if (event.kind == Kind::virtual_machine_instances)
          carried.emplace_back(chunk.size(), event.resource_version);
      }
    }
    if (!chunk.empty()) {
      if (!co_await write_records(*self, writer, chunk, carried)) co_return;
      continue;  // more may have arrived while writing
    }
    auto now = Clock::now();
    if (now >= deadline) co_return;
    double drop_after_s = self->lab.faults().watch_drop_after_s;
    auto drop_at = started + std::chrono::microseconds(static_cast<std::int64_t>(drop_after_s * 1e6));
    if (drop_after_s > 0 && now >= drop_at) {
      ++self->stats.watches_dropped;
      writer.abort();
      co_return;
    }
    if (state->bookmarks && now >= next_bookmark) {
      // Nothing is pending (the queue was just drained without suspending), so the current version is safe.
      std::string line = bookmark_line(type, self->store.current_resource_version(), false);
      ++self->stats.bookmarks_sent;
      next_bookmark = now + self->options.bookmark_interval;
      if (!co_await writer.write(std::move(line))) co_return;
      continue;
    }
    auto wake_at = std::min(deadline, now + std::chrono::milliseconds(250));
    if (state->bookmarks) wake_at = std::min(wake_at, next_bookmark);
    if (drop_after_s > 0) wake_at = std::min(wake_at, drop_at);
    if (notified->load()) continue;
    timer->expires_at(wake_at);
    co_await timer->async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

}  // namespace

http::ServerResponse KubeFront::Impl::watch(const Route& route, const http::ServerRequest& request) {
  const ResourceType& type = *route.type;
  auto state = std::make_shared<WatchState>();
  state->kind = route.kind;
  state->ns = route.ns;
  auto labels = LabelSelector::parse(request.query_param("labelSelector").value_or(""));
  std::string field_text = request.query_param("fieldSelector").value_or("");
  if (!route.name.empty())
    field_text += (field_text.empty() ? "" : ",") + std::string("metadata.name=") + route.name;
  auto fields = FieldSelector::parse(field_text, type.field_selectors);
  if (!labels) return error_response(bad_request(labels.error().message));
  if (!fields) return error_response(bad_request(fields.error().message));
  state->shape = route.shape;
  state->include = route.include;
  state->labels = std::move(*labels);
  state->fields = std::move(*fields);
  state->bookmarks = query_bool(request.query_param("allowWatchBookmarks"));
  state->timeout = options.default_watch_timeout;
  if (auto text = request.query_param("timeoutSeconds")) {
    try {
      long long seconds = std::stoll(*text);
      if (seconds > 0) state->timeout = std::chrono::seconds(seconds);
    } catch (const std::exception&) {
      return error_response(bad_request("invalid timeoutSeconds \"" + *text + "\""));
    }
  }
  std::optional<std::uint64_t> from;
  std::string rv_text = request.query_param("resourceVersion").value_or("");
  bool send_initial = query_bool(request.query_param("sendInitialEvents"));
  if (!rv_text.empty() && rv_text != "0" && !send_initial) {
    try {
      from = std::stoull(rv_text);
    } catch (const std::exception&) {
      return error_response(bad_request("invalid resource version: " + rv_text));
    }
  }
  state->initial_events_end = send_initial && state->bookmarks;

  bool forced_gone = lab.faults().force_gone_rate > 0 && lab.random_uniform() < lab.faults().force_gone_rate;
  if (forced_gone) {
    ++stats.forced_gone;
    state->gone_message = "too old resource version: " + (rv_text.empty() ? std::string("0") : rv_text) +
                          " (" + std::to_string(store.current_resource_version()) + ")";
  } else {
    state->subscription = store.subscribe(route.kind, route.ns, from);
    if (state->subscription.too_old) {
      state->gone_message = "too old resource version: " + rv_text + " (" +
                            std::to_string(store.compacted_resource_version() + 1) + ")";
    }
  }
  ++stats.watches_opened;

  http::ServerResponse response;
  response.status = 200;
  response.headers.emplace_back("Content-Type", "application/json");
  response.headers.emplace_back("Cache-Control", "no-cache, private");
  std::shared_ptr<Impl> self = shared_from_this();
  response.stream = [self, state](http::StreamWriter& writer) { return stream_watch(self, state, writer); };
  return response;
}

}  // namespace bootstorm::sim::kube
