#pragma once
// ClusterSync: the lab's Kubernetes front acting as a cluster's controllers through another API server (lab
// attach). The front's controllers keep working on their own ObjectStore; this keeps that store and the
// server's in step, each way by the ownership of sync_kinds.hpp:
//  - down: one list + watch per watched kind on the server. A client's create, spec change or delete reaches
//    the controllers as the same request to the front would (KubeFront::client_created and the rest);
//    mirrored kinds are copied.
//  - up: every version the controllers store is written to the server, one write in flight per object and
//    the latest version each time (intermediate ones coalesce): created, then the object and its status each
//    when they changed, deleted (after the lab's own finalizers are taken off). A 409 re-reads the object and
//    writes again; a 404 means a client deleted it, whose deletion is on its way down.
//  - the truth: a lab milestone is "visible" when the server accepted the VirtualMachineInstance carrying it.
// Everything runs on the lab's executor, as the front and the model do.
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/async/semaphore.hpp"
#include "common/cancel.hpp"
#include "common/expected.hpp"
#include "protocol/kube/kube_api.hpp"
#include "simulator/attach/sync_kinds.hpp"
#include "simulator/attach/virt_api.hpp"
#include "simulator/kube/object_store.hpp"
#include "simulator/lab/lab_server.hpp"

namespace bootstorm::sim::kube {
class KubeFront;
}

namespace bootstorm::sim::attach {

struct ClusterSyncOptions {
  std::size_t writes_in_flight = 32;
  // How long the API server may take to call virt-api's APIService Available.
  std::chrono::seconds virt_api_wait{60};
  // Consecutive failed writes of one object (conflicts aside) before that version is given up and logged.
  int max_failures = 8;
  // Told once, on the lab's thread, when the sync is ready (seeded, every watched kind listed) or cannot be
  // (the error).
  std::function<void(Expected<void>)> on_ready;
};

struct ClusterSyncStats {
  std::uint64_t creates = 0;
  std::uint64_t updates = 0;
  std::uint64_t status_updates = 0;
  std::uint64_t deletes = 0;
  std::uint64_t conflicts = 0;  // 409s answered to a write, each followed by a read and a new write
  std::uint64_t failures = 0;   // failed writes (retried)
  std::uint64_t given_up = 0;   // versions abandoned after max_failures
  std::uint64_t server_events = 0;
  std::uint64_t client_changes = 0;  // creates, spec changes and deletes of clients handed to the controllers
  std::uint64_t refused = 0;         // of those, what the lab's admission refused
  std::uint64_t milestones_visible = 0;
};

class ClusterSync final : public KubeFrontCompanion, public std::enable_shared_from_this<ClusterSync> {
 public:
  ClusterSync(kube::KubeFront& front, model::Lab& lab, std::unique_ptr<bootstorm::kube::KubeApi> api,
              boost::asio::any_io_executor executor, ClusterSyncOptions options);
  ~ClusterSync() override;

  // Connects, seeds the server with what the lab's front starts with, and starts both directions.
  void start();
  // Takes virt-api's APIService off the server (before stop(): the lab is leaving the cluster).
  boost::asio::awaitable<void> leave();
  void stop() override;

  nlohmann::json stats_json() const;

 private:
  // One object as both sides know it.
  struct Entry {
    Kind kind = Kind::namespaces;
    std::string ns;
    std::string name;
    std::optional<nlohmann::json> remote;  // the newest version the server answered or reported
    std::uint64_t remote_version = 0;      // its resourceVersion
    nlohmann::json pushed_main;            // main_part() as last written (or taken from the server)
    nlohmann::json pushed_status;          // status as last written
    bool in_flight = false;                // a flush is running
    bool dirty = false;                    // changed since that flush read it
    bool gone = false;                     // a client deleted it on the server: not to be created again
    int failures = 0;
    int conflicts = 0;
    std::vector<std::uint64_t> local_versions;  // local resourceVersions not yet written (VMIs)
    std::uint64_t written_version = 0;          // the newest local resourceVersion the server accepted
    double sent_at = 0;                         // when the write that carried it was sent (unix s)
    double accepted_at = 0;                     // when its answer came (unix s)
  };
  Entry& entry_for(Kind kind, const std::string& ns, const std::string& name);

  boost::asio::awaitable<void> run();
  boost::asio::awaitable<Expected<void>> seed();
  void ready(Expected<void> outcome);

  // ---- up (upstream.cpp) ----
  void subscribe_local();
  void drain_local();
  void on_local(const kube::WatchEvent& event);
  void schedule(Entry& entry);
  boost::asio::awaitable<void> flush(Entry& entry);
  boost::asio::awaitable<Expected<void>> push(Entry& entry);
  boost::asio::awaitable<Expected<void>> push_deletion(Entry& entry);
  boost::asio::awaitable<Expected<void>> create_remote(Entry& entry, const nlohmann::json& local);
  boost::asio::awaitable<Expected<void>> refresh(Entry& entry);
  void note_remote(Entry& entry, const nlohmann::json& object);
  // Whether an object the server holds names `uid` (a server uid) as its owner.
  bool has_dependants(const std::string& uid) const;
  Entry* entry_of_uid(const std::string& uid);
  void stamp_visible(Entry& entry, const std::vector<std::uint64_t>& local_versions);

  // ---- down (downstream.cpp) ----
  boost::asio::awaitable<void> mirror(Kind kind);
  void on_server(Kind kind, bootstorm::kube::WatchEvent::Type type, nlohmann::json object);
  void on_server_list(Kind kind, const std::vector<nlohmann::json>& items, bool relist);

  kube::KubeFront& front_;
  model::Lab& lab_;
  std::unique_ptr<bootstorm::kube::KubeApi> api_;
  boost::asio::any_io_executor executor_;
  ClusterSyncOptions options_;
  async::AsyncSemaphore writes_;
  CancelSignal cancel_;
  bool stopped_ = false;
  bool ready_told_ = false;
  std::vector<bool> served_;       // by Kind: the server serves the kind
  std::size_t lists_pending_ = 0;  // watched kinds whose first list is not applied yet
  bool seeded_ = false;
  std::unordered_map<std::string, Entry> entries_;  // by kind/namespace/name; references stay valid
  UidMap uids_;
  std::unordered_map<std::string, Entry*> by_uid_;  // the server's uids of the objects it holds
  std::vector<std::shared_ptr<kube::WatchQueue>> local_queues_;
  bool drain_posted_ = false;  // a drain_local() is posted and has not run yet
  ClusterSyncStats stats_;
  std::unique_ptr<VirtApi> virt_api_;
};

}  // namespace bootstorm::sim::attach
