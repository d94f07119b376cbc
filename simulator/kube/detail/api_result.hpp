#pragma once
// Internal to bootstorm::sim_kube: the outcome of an API operation, shared by the REST verbs and the
// controllers that carry them out (deletion).
#include <variant>

#include "simulator/kube/api_objects.hpp"
#include "simulator/kube/object_store.hpp"

namespace bootstorm::sim::kube {

// The outcome of an API operation: the stored object or an API error.
using ApiResult = std::variant<ObjectPtr, ApiError>;
inline bool failed(const ApiResult& result) {
  return std::holds_alternative<ApiError>(result);
}

}  // namespace bootstorm::sim::kube
