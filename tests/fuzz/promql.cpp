// Fuzz target: the lab Prometheus' query engine (simulator/prometheus). The input is a PromQL query: it is
// parsed, its canonical text must parse back to the same text, and it is evaluated over a small fixed store
// as an instant query and as a range query of 121 steps, the answers rendered as the HTTP API's JSON. The
// input also goes through the HTTP parameter path as the query and as each time and step parameter (whose
// resolution limit bounds the steps at 11,001 of a cheap selector).
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "simulator/prometheus/answer_json.hpp"

namespace {

using namespace bootstorm::sim::prometheus;

constexpr double t0 = 1700000000;

// Three KubeVirt-style counters on two nodes, one with a reset, one starting late, and a gauge with NaN.
const MemorySeriesStore& fixture() {
  static const MemorySeriesStore store = [] {
    MemorySeriesStore s;
    const char* vms[] = {"desk-1", "desk-2", "web-1"};
    const char* nodes[] = {"n1", "n1", "n2"};
    for (int v = 0; v < 3; ++v) {
      const Labels read{{"__name__", "kubevirt_vmi_storage_read_traffic_bytes_total"},
                        {"name", vms[v]},
                        {"namespace", "storm"},
                        {"node", nodes[v]}};
      Labels iops = read;
      iops["__name__"] = "kubevirt_vmi_storage_iops_read_total";
      for (int k = v; k <= 40; ++k) {
        const double counter = (k > 25 && v == 1 ? k - 25 : k) * 1000.0 * (v + 1);
        s.add(read, t0 + 15 * k, counter);
        s.add(iops, t0 + 15 * k + v, counter / 19);
      }
    }
    for (int k = 0; k <= 40; ++k)
      s.add({{"__name__", "g"}, {"k", k % 7 ? "a" : "b"}}, t0 + 15 * k, k % 5 ? k : NAN);
    return s;
  }();
  return store;
}

void check(bool ok, const char* what, const std::string& text) {
  if (ok) return;
  std::fprintf(stderr, "%s: %s\n", what, text.c_str());
  std::abort();
}

void render(const bootstorm::Expected<QueryResult>& r) {
  const std::string body = r ? render_result(*r) : render_error(r.error());
  check(!body.empty() && body.front() == '{' && body.back() == '}', "an answer is a JSON object", body);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  const MemorySeriesStore& store = fixture();
  if (auto expr = parse_query(text)) {
    const std::string canonical = format_expr(*expr);
    auto again = parse_query(canonical);
    check(again.has_value(), "the canonical text of a query must parse", canonical);
    check(format_expr(*again) == canonical, "the canonical text must parse to itself", canonical);
    render(evaluate_instant(*expr, t0 + 300, store));
    render(evaluate_range(*expr, t0, t0 + 600, 5, store));
  } else {
    check(expr.error().message.rfind("parse error at char ", 0) == 0, "a parse error says where", text);
  }
  int status = 0;
  auto answer = [&](QueryEndpoint endpoint, std::map<std::string, std::string> values) {
    const std::string body =
        answer_query(QueryParams{endpoint, std::move(values), t0 + 60, {}}, store, status);
    check(status == 200 || status == 400 || status == 422, "an answer's status", body);
  };
  answer(QueryEndpoint::instant, {{"query", text}});
  answer(QueryEndpoint::instant,
         {{"query", "kubevirt_vmi_storage_read_traffic_bytes_total"}, {"time", text}});
  answer(QueryEndpoint::range, {{"query", "g"}, {"start", text}, {"end", "1700000600"}, {"step", "60"}});
  answer(QueryEndpoint::range,
         {{"query", "g"}, {"start", "1700000000"}, {"end", "1700000060"}, {"step", text}});
  return 0;
}
