#pragma once
// Server-side printing, as the API server does it for `kubectl get`: the response media type a request's
// Accept header asks for (a metav1.Table, PartialObjectMetadata, or the object itself), the printer columns
// of each served type, and the Table built from them. Custom resources get the columns their CRDs declare
// (KubeVirt's VirtualMachine: Age, Status, Ready; CDI's DataVolume: Phase, Progress, Restarts, Age;
// Forklift's from its CRDs), or Age alone when a CRD declares none; core types get the API server's built-in
// columns. Pure functions: no I/O, no clock (the caller passes `now`).
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "simulator/kube/resource_types.hpp"

namespace bootstorm::sim::kube {

// What a response carries, negotiated from the Accept header.
struct ResponseShape {
  enum class As { object, table, partial_metadata } as = As::object;
  std::string version = "v1";  // of meta.k8s.io for Table and PartialObjectMetadata
};

// The first media type of `accept` this server can produce (application/json, */*, or application/json with
// as=Table or as=PartialObjectMetadata[List] of meta.k8s.io v1 or v1beta1); nullopt when it offers none
// (406 Not Acceptable). An absent or empty header means plain JSON.
std::optional<ResponseShape> negotiate_response(std::string_view accept);

// includeObject of a Table request: None, Metadata (the default) or Object.
enum class IncludeObject { none, metadata, object };
std::optional<IncludeObject> parse_include_object(std::string_view value);

// One column of a Table. Custom resources' columns are JSONPath expressions (the subset CRDs use: .a.b,
// [N], [?(@.key=='value')]); a core printer's column names a computed cell in `builtin` instead.
struct PrinterColumn {
  std::string name;
  std::string type;  // string, integer, number, boolean, date
  std::string format;
  std::string description;
  int priority = 0;  // 0: shown by `kubectl get`; 1: only with -o wide
  std::string json_path;
  std::string builtin;  // e.g. "node.status", "pvc.accessModes"
};

// The columns after Name, in order.
const std::vector<PrinterColumn>& printer_columns(Kind kind);

// The value a printer-column JSONPath selects in `object`: the first match, null when there is none.
nlohmann::json json_path_value(const nlohmann::json& object, std::string_view path);

// apimachinery's HumanDuration: "45s", "3m20s", "15m", "5h3m", "2d4h", "3y12d".
std::string human_duration(double seconds);

// The cell of `column` for `object`; dates become ages relative to `now` (Unix seconds), missing values null.
nlohmann::json table_cell(const PrinterColumn& column, const nlohmann::json& object, double now);

// A metav1.Table of `objects` (full objects of `kind`) with list metadata `list_metadata`
// ({"resourceVersion": ..., "continue": ...}).
nlohmann::json make_table(Kind kind, const std::vector<const nlohmann::json*>& objects,
                          const nlohmann::json& list_metadata, const ResponseShape& shape,
                          IncludeObject include, double now);

// The PartialObjectMetadata of `object` (apiVersion meta.k8s.io/<version>).
nlohmann::json partial_metadata(const nlohmann::json& object, const std::string& version);

// A read answered in a shape other than the object itself: a Table of `objects`, or their
// PartialObjectMetadataList (`list`) or the PartialObjectMetadata of the single object.
nlohmann::json render_shaped(Kind kind, const std::vector<const nlohmann::json*>& objects,
                             const nlohmann::json& list_metadata, const ResponseShape& shape,
                             IncludeObject include, double now, bool list);

}  // namespace bootstorm::sim::kube
