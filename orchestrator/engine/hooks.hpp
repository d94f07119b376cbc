#pragma once
// The engine's boundary to the rest of bootstorm. The engine itself knows only the Provider interface, the
// plan model and the run record; whoever drives it (the CLI, a test) supplies how to create providers, start
// the embedded lab, listen for beacons and render the run directory's outputs. Keeping these as functions
// lets a test drive RunEngine with any registered provider kind and lets the engine build without the
// simulator, the HTTP stack or the report renderers.
#include <boost/asio/any_io_executor.hpp>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>

#include "common/expected.hpp"
#include "orchestrator/beacon/listener.hpp"
#include "orchestrator/engine/live_run.hpp"
#include "providers/api/provider.hpp"
#include "results/run_record.hpp"

namespace bootstorm::engine {

// Where a lab simulator listens and how to log in (embedded lab or a `bootstorm lab serve` state dir).
struct LabEndpoints {
  std::string vcenter_url;
  std::string kube_url;
  std::string ca_pem;   // CA that signed the lab's certificates
  std::string ca_file;  // or a file with it
  std::string username;
  std::string password;
  std::string kube_token;
  std::string kubeconfig;  // path of a kubeconfig for the kube front (state dir); empty for embedded
  std::string lab;         // lab profile name, when known
};

struct EmbeddedLab {
  LabEndpoints endpoints;
  std::shared_ptr<void> keepalive;  // owns the running lab; released (lab stopped) after the run
};

struct EngineHooks {
  // Creates the provider for config.kind (default when empty: api::create_provider).
  std::function<std::unique_ptr<api::Provider>(boost::asio::any_io_executor, const api::ProviderConfig&)>
      make_provider;
  // Starts the in-process lab for `endpoint: embedded` (`lab` is platform.lab). Empty: embedded unsupported.
  std::function<Expected<EmbeddedLab>(boost::asio::any_io_executor, const std::string& lab)>
      start_embedded_lab;
  // Creates and starts the beacon listener. Empty: plans with a beacon are refused.
  std::function<Expected<std::unique_ptr<beacon::ReadyListener>>(boost::asio::any_io_executor,
                                                                 const beacon::ListenerOptions&)>
      make_beacon;
  // Writes every output of the run directory (summary.json, vms.csv, reports...) from the record; returns
  // whether every SLO passed. Empty: only plan.yaml and journal.jsonl are written and SLOs count as passed.
  std::function<Expected<bool>(const std::filesystem::path& run_dir, const results::RunRecord& record)>
      write_outputs;
  // Serves the run's figures while it runs (`run --metrics-listen`), on the engine's executor, from the
  // moment run_started is journaled. What it returns is kept until the run has ended and
  // RunOptions::metrics_linger has passed; an error fails the run before anything is created. Empty: none.
  std::function<Expected<std::shared_ptr<void>>(boost::asio::any_io_executor, const LiveRun&)> serve_live;
};

}  // namespace bootstorm::engine
