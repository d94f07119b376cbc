#pragma once
// The legacy `/rest` dialect of the vCenter REST API (vSphere 6.5 – 7.0U1; still served, deprecated,
// by 7.0U2+ next to /api), as a translation to and from the front's /api handlers. The /rest paths and bodies
// are the ones vcenter-7.0.3.json and cis-8.0.2.json document under /rest/...:
//
//   POST   /rest/com/vmware/cis/session            -> 200 {"value": token}          (POST /api/session: 201)
//   POST   /rest/com/vmware/cis/session?~action=get -> 200 {"value": {user, ...}}    (GET /api/session)
//   DELETE /rest/com/vmware/cis/session            -> 200                            (204)
//   GET    /rest/vcenter/vm?filter.names.1=a&filter.names.2=b   (also filter.names=a, repeated)
//   POST   /rest/vcenter/vm?action=clone {"spec": CloneSpec}      (`~action=` accepted as well)
//   POST   /rest/vcenter/vm/{vm}/power/start|stop|reset|suspend  -> 200 (power?action=...: 204)
//   PUT    /rest/vcenter/vm/{vm}/guest/customization {"spec": SetSpec}
//   every other /rest/vcenter/... path maps 1:1 onto /api/vcenter/...
//
// Results come back wrapped as {"value": ...}, maps (VM.Info disks, nics, ...) as arrays of {"key", "value"},
// 201/204 as 200, and errors as {"type": "com.vmware.vapi.std.errors.<snake>", "value": {"error_type",
// "messages"}} with the legacy status codes (400 for every "bad request" kind, including the 4,000-VM list
// limit and RESOURCE_BUSY, which /api answers with 500).
#include <optional>
#include <string>

#include "protocol/http/server.hpp"

namespace bootstorm::sim::vcenter::legacy_rest {

enum class ResultShape {
  value,    // {"value": <api body>} (or an empty 200 for bodiless results)
  vm_info,  // like value, plus the VM.Info maps as {key, value} arrays
};

struct Translation {
  ResultShape shape = ResultShape::value;
};

// Rewrites a /rest request in place into its /api form (method, path, target, query, body). Returns the
// legacy error response when the request is malformed for /rest (e.g. a spec-less body).
std::optional<http::ServerResponse> translate_request(http::ServerRequest& req, Translation& out);

// Converts an /api response into its /rest form.
http::ServerResponse to_legacy_response(http::ServerResponse api_response, const Translation& translation);

// The legacy error body for an /api error_type ("NOT_FOUND" -> "com.vmware.vapi.std.errors.not_found").
std::string legacy_error_type(std::string_view api_error_type);
// The HTTP status the legacy dialect uses for an error kind (`api_status` is kept for generic errors).
int legacy_status(std::string_view api_error_type, int api_status);

}  // namespace bootstorm::sim::vcenter::legacy_rest
