#pragma once
// RFC 4648 base64, the one implementation of the tree: Basic authorization headers, kubeconfig *-data
// fields, Kubernetes continue tokens.
#include <optional>
#include <string>
#include <string_view>

namespace bootstorm {

// Standard alphabet, '=' padded.
std::string base64_encode(std::string_view data);

// Accepts the standard and the URL-safe alphabet, with or without padding, ignoring whitespace (kubeconfig
// data is sometimes wrapped). nullopt on any other character or on data after padding.
std::optional<std::string> base64_decode(std::string_view text);

}  // namespace bootstorm
