#pragma once
// The simulator's vCenter REST front: the `/api` paths of vSphere 7.0U3 (tests/data/api-specs/vsphere) over
// the shared lab model, plus the lab-only `/_lab/*` endpoints. Mounted by the LabServer on an HTTPS
// http::Server whose executor is the lab's executor (everything runs on that one thread).
//
// Behaviour that the providers depend on, as vCenter does it:
//  * sessions: POST /api/session with Basic auth -> 201 "token"; header vmware-api-session-id; 401
//    UNAUTHENTICATED without a valid session; idle expiry; at most N sessions per user (503 beyond);
//  * blocking clone and power calls (the response comes when the operation is done);
//  * admission: at most `max_concurrent_operations` operations run at once and each host has
//    `host_cost_units` (a clone costs `clone_cost` on its destination host, a power operation `power_cost`);
//    operations beyond either limit wait in a queue (FIFO among those that fit) — they are not refused;
//  * guest identity / interfaces answer 503 SERVICE_UNAVAILABLE until VMware Tools runs;
//  * errors as {error_type, messages[{id, default_message, args}]} with the HTTP status of the spec;
//  * guest customization (PUT .../guest/customization) applied at the next power-on: the beacon settings in
//    its cloud-init user data become the VM's guestinfo, which the simulated guest agent reads at logon;
//  * the legacy /rest dialect (legacy_rest.hpp), next to /api or — with `vcenter.legacyRest` — instead of it.
// Lab endpoints (no authentication): GET /_lab/truth, GET /_lab/stats, GET|POST /_lab/faults,
// GET|PUT /_lab/vms/{vm}/guestinfo. See simulator/README.md.
#include <boost/asio/any_io_executor.hpp>
#include <cstdint>
#include <memory>
#include <string>

#include "protocol/http/server.hpp"
#include "simulator/model/lab.hpp"

namespace bootstorm::sim::vcenter {

struct VcenterFrontStats {
  std::uint64_t requests_total = 0;        // every request on /api and /rest (not /_lab)
  std::uint64_t requests_last_second = 0;  // requests received in the last full second
  std::uint64_t peak_requests_per_second = 0;
  std::uint64_t sessions_created = 0;
  std::size_t sessions_active = 0;
  std::size_t operations_running = 0;
  std::size_t operations_queued = 0;
  std::size_t peak_operations_queued = 0;
  std::uint64_t faults_injected = 0;     // error responses from Faults::error_rate / expired sessions
  std::uint64_t permission_denials = 0;  // calls refused for a missing privilege (REST 403, NoPermission)
};

class VcenterFront {
 public:
  // `lab` must outlive the front; `executor` is the lab's executor (the server's).
  VcenterFront(model::Lab& lab, boost::asio::any_io_executor executor);
  ~VcenterFront();
  VcenterFront(const VcenterFront&) = delete;
  VcenterFront& operator=(const VcenterFront&) = delete;

  // The request handler to mount on an http::Server. It keeps a reference to this front.
  http::Handler handler();

  VcenterFrontStats stats() const;
  std::string stats_json() const;  // the body of GET /_lab/stats

  struct Impl;

 private:
  std::shared_ptr<Impl> impl_;
};

}  // namespace bootstorm::sim::vcenter
