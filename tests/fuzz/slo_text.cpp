// Fuzz target: the one-line SLO of `bootstorm capacity --slo` (results/slo_text). Whatever the
// input, it either parses or is an invalid_input error naming the SLO; what parses renders back to text that
// parses to the same SLO.
#include "results/slo_text.hpp"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string_view>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto slo = bootstorm::results::parse_slo_text(text);
  if (!slo) {
    if (slo.error().kind != bootstorm::ErrorKind::invalid_input) std::abort();
    return 0;
  }
  const std::string rendered = bootstorm::results::slo_text(*slo);
  auto again = bootstorm::results::parse_slo_text(rendered);
  if (!again) {
    std::fprintf(stderr, "'%s' does not parse back: %s\n", rendered.c_str(), again.error().what().c_str());
    std::abort();
  }
  if (again->milestone != (slo->milestone.empty() ? "ready" : slo->milestone) || again->stat != slo->stat ||
      again->is_min != slo->is_min) {
    std::abort();
  }
  // {:g} keeps six significant digits: the bound must come back within that.
  const double a = again->max, b = slo->max;
  if (!(std::abs(a - b) <= 1e-5 * std::max(std::abs(a), std::abs(b)))) {
    std::fprintf(stderr, "'%s': %.17g became %.17g\n", rendered.c_str(), b, a);
    std::abort();
  }
  return 0;
}
