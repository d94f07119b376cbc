#pragma once
// The StormPlan's fields declared as tables (common/yaml_table.hpp), one per mapping of the plan format:
// their keys, the members they fill and the checks their values pass. The rules that span keys or depend on
// the platform kind stay in the loader (load.cpp). The MigrationPlan loader reads its TLS settings with the
// same table.
#include "common/yaml_table.hpp"
#include "orchestrator/plan/plan.hpp"

namespace bootstorm::plan::fields {

const yaml::FieldTable<StormPlan>& root_fields();
const yaml::FieldTable<Tls>& tls_fields();
// Both credential forms' keys; the kind's descriptor says which a plan of it may use.
const yaml::FieldTable<Credentials>& credential_fields();
const yaml::FieldTable<Storm>& storm_fields();
const yaml::FieldTable<Ready>& ready_fields();
const yaml::FieldTable<Beacon>& beacon_fields();
const yaml::FieldTable<Slo>& slo_fields();
const yaml::FieldTable<Telemetry>& telemetry_fields();

}  // namespace bootstorm::plan::fields
