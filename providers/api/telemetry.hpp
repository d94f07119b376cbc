#pragma once
// Storage telemetry: what the platform's own monitoring measured during a storm, per VM, per host (its HBA
// link) and per datastore, beside the boot curve. A TelemetrySource is made by the provider that holds the
// session it needs (KubeVirt: the cluster's Prometheus; vSphere vim25: PerformanceManager) and asked once,
// after the storm and before cleanup (vCenter drops a destroyed VM's statistics).
//
// Telemetry never fails a storm: a source that cannot answer says why (Error), and the engine turns that into
// a warning in the log and the report.
//
// Threading: like the provider, made on and used from the engine's executor.
#include <boost/asio/awaitable.hpp>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.hpp"
#include "providers/api/storage_telemetry.hpp"

namespace bootstorm::api {

class TelemetrySource {
 public:
  virtual ~TelemetrySource() = default;
  virtual std::string name() const = 0;  // "prometheus", "vsphere-perf"
  // How often the platform samples the request's subjects (Prometheus: the scrape interval it finds; vCenter:
  // its real-time refresh rate, 20 s), for the engine to wait one step past the last ready before it
  // collects. The default is vCenter's 20 s.
  virtual boost::asio::awaitable<Expected<double>> sample_step_s(const TelemetryRequest& request);
  // Reads the window. Errors say what could not be read and why (403, timeout, no monitoring stack).
  virtual boost::asio::awaitable<Expected<TelemetryReport>> collect(const TelemetryRequest& request) = 0;
};

}  // namespace bootstorm::api
