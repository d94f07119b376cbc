#pragma once
// An SLO written as one line, as `bootstorm capacity --slo` takes it:
//
//   [MILESTONE] STAT OP VALUE      e.g.  ready p95 <= 60s,  p50 <= 30s,  guest_agent max <= 2m,
//                                        ready_fraction >= 99%
//
// MILESTONE is "ready" (the default) or a milestone name; STAT one of kSloStats; OP is <= for the time
// statistics and >= for ready_fraction; VALUE a duration (60s, 1m30s, 1500ms; a bare number is seconds) or,
// for ready_fraction, a fraction (0.99) or a percentage (99%). Spaces around OP are optional.
#include <string>
#include <string_view>

#include "common/expected.hpp"
#include "results/run_record.hpp"

namespace bootstorm::results {

// The SLO for `text` (milestone "ready" unless it names another); ErrorKind::invalid_input with what is wrong
// and an example otherwise.
Expected<SloRecord> parse_slo_text(std::string_view text);

// The one-line form of an SLO: "ready p95 <= 60s", "ready ready_fraction >= 0.99".
std::string slo_text(const SloRecord& slo);

}  // namespace bootstorm::results
