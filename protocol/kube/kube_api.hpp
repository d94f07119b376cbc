#pragma once
// The seam between bootstorm and a Kubernetes API server: one request, a burst of pipelined requests, one
// watch stream. HttpKubeApi (http_kube_api.hpp) is the real client;
// tests/unit/protocol/kube/fake_kube_api.hpp answers from memory so that the logic above it (list_watch, the
// KubeVirt provider, the migration) is tested without sockets.
//
// What an implementation owns, so that its callers need not: credentials and their refresh, the request
// budget, dry-run, counting every attempt in ApiStats, and errors that name the call and what to do. Targets
// are API paths ("/api/v1/namespaces"), below whatever path prefix the server URL has.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/cancel.hpp"
#include "common/expected.hpp"
#include "protocol/http/api_stats.hpp"
#include "protocol/http/types.hpp"
#include "protocol/kube/client_instant.hpp"
#include "protocol/kube/watch_decode.hpp"

namespace bootstorm::kube {

class LatenessMonitor;

// Whether a call waits for its turn in the request budget (requestsPerSecond). Start requests of a storm do
// not: pacing them would turn a simultaneous start into a ramp (1,000 starts at 50/s = 20 s).
enum class Budget { paced, unpaced };

struct ApiCall {
  std::string method;  // GET, POST, PUT, PATCH, DELETE
  std::string target;  // API path with its query
  std::string body;    // JSON ("" = none)
  std::string content_type = "application/json";
  Budget budget = Budget::paced;
};

// One call of a pipelined burst and what it does, for its errors.
struct PipelinedCall {
  ApiCall call;
  std::string what;
};

// The check connect() makes: GET `path` must answer 200. A 404 means the API group is not installed:
// "the API server ... does not serve `what`", with `missing_hint` as what to do.
struct ConnectProbe {
  std::string path;
  std::string what;
  std::string missing_hint;
};

// One watch stream: `target` is the collection with its query (watch=1, resourceVersion, timeoutSeconds).
struct WatchRequest {
  std::string target;
  WatchDecode decode = WatchDecode::full;
  // Read, split and stamp the stream on the client's own watch thread rather than the caller's event loop;
  // events are still handed to the caller on its executor, in order. An implementation without such a thread
  // reads on the caller's loop.
  bool own_thread = false;
  // Bounds how long each line waited in this process before its stamp (LatenessMonitor); optional.
  std::shared_ptr<LatenessMonitor> lateness;
};

// One decoded line: when it was handed over (`at`), how late that stamp may be (`lateness_s`), and when its
// stream's response headers arrived (`connected_at`).
using WatchEventHandler = std::function<void(const Expected<WatchEvent>& event, ClientInstant at,
                                             double lateness_s, ClientInstant connected_at)>;

struct WatchOutcome {
  Expected<void> result;   // cancelled when the caller (or a handler, through `cancel`) ended it
  int status = 0;          // the HTTP status of the stream (0: no answer)
  std::string error_body;  // the body of a non-200 answer
};

class KubeApi {
 public:
  virtual ~KubeApi() = default;

  // Sets up the connection and checks `probe`.
  virtual boost::asio::awaitable<Expected<void>> connect(const ConnectProbe& probe) = 0;
  // One call; every HTTP status comes back as a Response (status_error() turns one into an Error). `what`
  // names the call in errors ("creating VirtualMachine ns/name").
  virtual boost::asio::awaitable<Expected<http::Response>> call(ApiCall call, std::string what) = 0;
  // A burst of unpaced calls, `per_connection` of them written back to back on each connection (HTTP/1.1
  // pipelining), each answered on its own, in order. Everything a call needs is prepared before the first
  // batch is written, so the batches leave one right after the other; a call's written_at is when its batch
  // was handed over.
  virtual boost::asio::awaitable<std::vector<Expected<http::Response>>> pipeline(
      std::vector<PipelinedCall> calls, std::size_t per_connection) = 0;
  // Reads one watch stream until the server ends it, `cancel` fires or the connection drops.
  virtual boost::asio::awaitable<WatchOutcome> watch(WatchRequest request, WatchEventHandler on_event,
                                                     CancelSignal cancel) = 0;
  // Waits for a turn in the request budget now, for work that must queue before it builds its request (a
  // create's body is not held while it waits); the call that follows passes Budget::unpaced.
  virtual boost::asio::awaitable<void> wait_for_budget() = 0;
  // Spends one turn without waiting (a list the watch needs at once).
  virtual void charge_budget() = 0;
  // Opens `connections` connections ahead of a burst, with credentials checked first.
  virtual boost::asio::awaitable<Expected<void>> prewarm(std::size_t connections) = 0;
  // The executor that reads the streams of watches asked for `own_thread` (starting the client's watch
  // thread now); executor() when the implementation has no such thread or cannot start it.
  virtual boost::asio::any_io_executor watch_executor() = 0;
  // Closes idle connections and stops the watch thread.
  virtual void close() = 0;

  virtual http::ApiStats stats() const = 0;
  // A retry decided above this client (a create answered 429, say) counts in its stats.
  virtual void count_retry() = 0;
  // The API server URL, for messages.
  virtual const std::string& server() const = 0;
  virtual boost::asio::any_io_executor executor() const = 0;
  // Why the API server is gone (connections have failed in a row for a while: http::ClientOptions
  // on_unreachable), for waits that would otherwise outlast it; nullopt while it answers. Any thread.
  virtual std::optional<std::string> gone() const { return std::nullopt; }
};

}  // namespace bootstorm::kube
