#pragma once
// Internal to bootstorm::migrate: one migration through Forklift on the destination cluster, split between
// forklift_setup.cpp (namespaces, Secret, Providers, maps and Plan, each waited on until Ready) and
// forklift_migration.cpp (the Migration, the list + watch of the Plan, the labelling of the migrated VMs).
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "common/cancel.hpp"
#include "common/expected.hpp"
#include "orchestrator/engine/journal.hpp"
#include "orchestrator/migrate/adopt_provider.hpp"
#include "orchestrator/migrate/detail/migrate_internal.hpp"
#include "orchestrator/migrate/migration_plan.hpp"
#include "orchestrator/migrate/migration_record.hpp"

namespace bootstorm::migrate {

class ForkliftMigration {
 public:
  ForkliftMigration(const MigrationPlan& plan, std::string run_id, ResolvedEndpoints& ep,
                    engine::Journal* journal, MigrationRecord& record, std::ostream& out,
                    CancelSignal interrupt);

  std::vector<std::string> vm_names;
  std::vector<AdoptedVm> migrated;

  // Sets up the Forklift objects, migrates `vm_names` and fills the record; an error when the migration could
  // not start (a failed or interrupted migration is an outcome in the record, not an error).
  boost::asio::awaitable<Expected<void>> run(boost::asio::any_io_executor executor,
                                             std::chrono::milliseconds ready_timeout);

  std::uint64_t requests() const { return api_ ? api_->stats().requests : 0; }

 private:
  // forklift_setup.cpp: the namespaces, Providers (reused when one exists), maps and Plan, all Ready; returns
  // the name of the Plan (and of its maps).
  boost::asio::awaitable<Expected<std::string>> set_up_plan(std::chrono::milliseconds ready_timeout);
  boost::asio::awaitable<Expected<void>> ensure_namespace(const std::string& name);
  boost::asio::awaitable<Expected<nlohmann::json>> create_object(const std::string& kind,
                                                                 const std::string& collection,
                                                                 const nlohmann::json& obj);
  // Waits (list + watch of the one object) until Ready=True; fails with the validation conditions verbatim
  // when Forklift reports a Critical/Error condition, or at the timeout with the last conditions seen.
  boost::asio::awaitable<Expected<void>> wait_ready(const std::string& plural, const std::string& kind,
                                                    const std::string& name,
                                                    std::chrono::milliseconds timeout);

  // forklift_migration.cpp
  void observe_plan(MigrationTracker& tracker, const nlohmann::json& obj);
  boost::asio::awaitable<void> label_migrated(const MigrationTracker& tracker);
  void journal(std::string_view type, nlohmann::json payload);
  void journal_vm(const VmMigrationRecord& v);

  const MigrationPlan& plan_;
  std::string run_id_;
  ResolvedEndpoints& ep_;
  engine::Journal* journal_;
  MigrationRecord& record_;
  std::ostream& out_;
  CancelSignal interrupt_;
  std::unique_ptr<kube::KubeApi> api_;
};

}  // namespace bootstorm::migrate
