#pragma once
// Kubernetes resource quantities ("30Gi", "512Mi", "4", "500m", "1G") as numbers: bytes for memory and
// storage, units for CPU. One parser for the lab's admission and the provider's checks.
#include <optional>
#include <string_view>

namespace bootstorm {

// The value of `text` in base units; nullopt when it is not a quantity this parser knows (the decimal
// exponent forms "1e3" and "1E3" are not accepted).
std::optional<double> parse_quantity(std::string_view text);

}  // namespace bootstorm
