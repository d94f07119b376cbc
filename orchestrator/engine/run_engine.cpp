// RunEngine: one run on its own io_context, driven by a RunSession (detail/run_session.hpp), and the ready
// milestone of a plan.
#include "orchestrator/engine/run_engine.hpp"

#include <boost/asio/co_spawn.hpp>
#include <boost/asio/io_context.hpp>
#include <exception>
#include <memory>
#include <nlohmann/json.hpp>

#include "orchestrator/engine/detail/run_session.hpp"
#include "orchestrator/engine/journal_events.hpp"

namespace bootstorm::engine {

namespace asio = boost::asio;

nlohmann::json slo_json(const plan::StormPlan& plan) {
  nlohmann::json slo = nlohmann::json::array();
  for (const auto& s : plan.slo) {
    slo.push_back({{fields::milestone, s.milestone},
                   {fields::slo_stat, s.stat},
                   {fields::slo_max, s.max},
                   {fields::slo_is_min, s.is_min}});
  }
  return slo;
}

std::optional<api::Milestone> ready_milestone(const plan::StormPlan& plan) {
  if (!plan.ready.signal.empty() && plan.ready.signal != "ready")
    return api::milestone_from_string(plan.ready.signal);
  return plan.ready.beacon.enabled ? api::Milestone::beacon : api::Milestone::guest_agent;
}

RunEngine::RunEngine(plan::StormPlan plan, RunOptions options, EngineHooks hooks)
    : plan_(std::move(plan)), options_(std::move(options)), hooks_(std::move(hooks)) {}

RunResult RunEngine::run() {
  asio::io_context io;
  auto session = std::make_unique<detail::RunSession>(plan_, options_, hooks_, io);
  asio::co_spawn(io, session->main(), [&](std::exception_ptr e) {
    if (e) {
      try {
        std::rethrow_exception(e);
      } catch (const std::exception& ex) {
        session->result.error = make_error(ErrorKind::internal, std::string("run aborted: ") + ex.what());
        session->result.exit_code = 1;
        session->result.outcome = "error";
      }
    }
    io.stop();
  });
  io.run();
  RunResult result = std::move(session->result);
  session->release();
  session.reset();
  return result;
}

}  // namespace bootstorm::engine
