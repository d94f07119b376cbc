#pragma once
// The OpenSearch/Elasticsearch index that `report --index` writes to and `history --index` reads from:
// its URL (https://HOST:PORT/INDEX), TLS and Basic credentials (BOOTSTORM_INDEX_USERNAME /
// BOOTSTORM_INDEX_PASSWORD, registered as secrets so that no log shows them), and one request at a time.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/expected.hpp"
#include "protocol/http/client.hpp"

namespace bootstorm::cli {

struct IndexArgs {
  std::string url;  // https://opensearch:9200/INDEX
  std::string ca_file;
  bool insecure = false;
};

// --index URL, --index-ca FILE, --index-insecure, `what` saying what the index is for in this command.
void add_index_options(CLI::App& command, IndexArgs& args, const std::string& what);

struct IndexTarget {
  std::string origin;  // https://opensearch:9200
  std::string index;   // bootstorm
};
// The URL's origin and index; invalid_input naming the form when it is not one.
Expected<IndexTarget> index_target(const IndexArgs& args);

// One request to the index server (`target` on its origin), waited for; a status outside 2xx is an error
// that says what was being done (`what`) and, for 401, which variables hold the credentials.
Expected<http::Response> index_request(const IndexArgs& args, const IndexTarget& target, std::string method,
                                       std::string path, std::string body, std::string content_type,
                                       const std::string& what);

// Every quantile document (metricName vmiLatencyQuantilesMeasurement) of the index, of plan `plan` when
// not empty, through _search pages of 1,000 (from/size: at most the server's max_result_window, 10,000 by
// default; more is an error that says how to narrow it).
Expected<nlohmann::json> fetch_quantile_documents(const IndexArgs& args, const std::string& plan);

}  // namespace bootstorm::cli
