// The Prometheus HTTP API answers (simulator/prometheus/answer_json.hpp): value and timestamp formats, the
// JSON bodies byte for byte, parameter parsing and every error with Prometheus' wording and status.
#include "simulator/prometheus/answer_json.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>

namespace bootstorm::sim::prometheus {
namespace {

constexpr double t0 = 1700000000;  // 2023-11-14T22:13:20Z

TEST(PromAnswer, SampleValuesAreFormattedAsPrometheusDoes) {
  EXPECT_EQ(format_sample_value(0), "0");
  EXPECT_EQ(format_sample_value(2), "2");
  EXPECT_EQ(format_sample_value(0.1), "0.1");
  EXPECT_EQ(format_sample_value(-0.5), "-0.5");
  EXPECT_EQ(format_sample_value(1.0 / 3), "0.3333333333333333");
  EXPECT_EQ(format_sample_value(123456789.123), "123456789.123");
  EXPECT_EQ(format_sample_value(1e20), "100000000000000000000");
  // The shortest digits, padded: not the binary value's exact decimal expansion (100000000000000016384).
  EXPECT_EQ(format_sample_value(1e20 + 16384), "100000000000000020000");
  EXPECT_EQ(format_sample_value(0.000001), "0.000001");
  EXPECT_EQ(format_sample_value(1e21), "1e+21");
  EXPECT_EQ(format_sample_value(1.5e-7), "1.5e-07");
  EXPECT_EQ(format_sample_value(-2.5e300), "-2.5e+300");
  EXPECT_EQ(format_sample_value(std::numeric_limits<double>::quiet_NaN()), "NaN");
  EXPECT_EQ(format_sample_value(std::numeric_limits<double>::infinity()), "+Inf");
  EXPECT_EQ(format_sample_value(-std::numeric_limits<double>::infinity()), "-Inf");
}

TEST(PromAnswer, TimestampsKeepTheirMilliseconds) {
  EXPECT_EQ(format_timestamp_ms(1700000000000), "1700000000");
  EXPECT_EQ(format_timestamp_ms(1700000000123), "1700000000.123");
  EXPECT_EQ(format_timestamp_ms(1700000000120), "1700000000.120");
  EXPECT_EQ(format_timestamp_ms(1700000000005), "1700000000.005");
  EXPECT_EQ(format_timestamp_ms(-1500), "-1.500");
  EXPECT_EQ(format_timestamp_ms(0), "0");
}

TEST(PromAnswer, RenderedResultsAreByteForByte) {
  QueryResult vector;
  vector.series.push_back(Series{{{"__name__", "up"}, {"job", "lab"}}, {{t0 + 0.12, 1}}});
  EXPECT_EQ(render_result(vector),
            R"({"status":"success","data":{"resultType":"vector","result":[)"
            R"({"metric":{"__name__":"up","job":"lab"},"value":[1700000000.120,"1"]}]}})");
  QueryResult matrix;
  matrix.type = ResultType::matrix;
  matrix.series.push_back(Series{{{"node", "n1"}}, {{t0, 0.5}, {t0 + 15, 2}}});
  matrix.series.push_back(Series{{}, {}});
  EXPECT_EQ(render_result(matrix),
            R"({"status":"success","data":{"resultType":"matrix","result":[)"
            R"({"metric":{"node":"n1"},"values":[[1700000000,"0.5"],[1700000015,"2"]]},)"
            R"({"metric":{},"values":[]}]}})");
  EXPECT_EQ(render_result(QueryResult{}),
            R"({"status":"success","data":{"resultType":"vector","result":[]}})");
}

TEST(PromAnswer, RenderedErrors) {
  Error bad = make_error(ErrorKind::invalid_input, "a \"quoted\" problem");
  bad.status = 400;
  EXPECT_EQ(render_error(bad), R"({"status":"error","errorType":"bad_data","error":"a \"quoted\" problem"})");
  Error exec = make_error(ErrorKind::invalid_input, "vector cannot contain metrics with the same labelset");
  exec.status = 422;
  EXPECT_EQ(render_error(exec), R"({"status":"error","errorType":"execution",)"
                                R"("error":"vector cannot contain metrics with the same labelset"})");
}

TEST(PromAnswer, TimeAndDurationParameters) {
  EXPECT_EQ(*parse_time_param("1700000000"), t0);
  EXPECT_EQ(*parse_time_param("+1700000000.5"), t0 + 0.5);
  EXPECT_EQ(*parse_time_param("1700000000.1234"), t0 + 0.123);  // rounded to the millisecond
  EXPECT_EQ(*parse_time_param("1700000000.9996"), t0 + 1);
  EXPECT_EQ(*parse_time_param("1.7e9"), t0);
  EXPECT_EQ(*parse_time_param("2023-11-14T22:13:20Z"), t0);
  EXPECT_EQ(*parse_time_param("2023-11-14T23:13:20.25+01:00"), t0 + 0.25);
  for (const char* bad : {"", "abc", "NaN", "Inf", "1700000000x", "2023-11-14"}) {
    auto t = parse_time_param(bad);
    ASSERT_FALSE(t.has_value()) << bad;
    EXPECT_EQ(t.error().message, std::string("cannot parse \"") + bad + "\" to a valid timestamp");
  }
  EXPECT_EQ(*parse_duration_param("15"), 15);
  EXPECT_EQ(*parse_duration_param("0.5"), 0.5);
  EXPECT_EQ(*parse_duration_param("15s"), 15);
  EXPECT_EQ(*parse_duration_param("1m30s"), 90);
  EXPECT_EQ(*parse_duration_param("-1"), -1);  // refused later, as a step
  EXPECT_EQ(parse_duration_param("abc").error().message, "cannot parse \"abc\" to a valid duration");
  EXPECT_EQ(parse_duration_param("1e30").error().message,
            "cannot parse \"1e30\" to a valid duration. It overflows int64");
}

class PromAnswerQuery : public ::testing::Test {
 protected:
  MemorySeriesStore store;
  int status = 0;

  void SetUp() override {
    for (int k = 0; k <= 8; ++k) {
      store.add({{"__name__", "c_total"}, {"vm", "a"}}, t0 + 15 * k, 30.0 * k);
      store.add({{"__name__", "c_total"}, {"vm", "b"}}, t0 + 15 * k, 15.0 * k);
      store.add({{"__name__", "d_total"}, {"vm", "a"}}, t0 + 15 * k, 15.0 * k);
    }
  }

  std::string instant(std::map<std::string, std::string> values, double now = t0 + 60) {
    return answer_query(QueryParams{QueryEndpoint::instant, std::move(values), now, {}}, store, status);
  }
  std::string range(std::map<std::string, std::string> values) {
    return answer_query(QueryParams{QueryEndpoint::range, std::move(values), 0, {}}, store, status);
  }
  std::string error_of(const std::string& body) {
    auto j = nlohmann::json::parse(body);
    EXPECT_EQ(j.at("status"), "error");
    return j.value("errorType", "") + ": " + j.value("error", "");
  }
};

TEST_F(PromAnswerQuery, InstantQuery) {
  EXPECT_EQ(instant({{"query", "sum(rate(c_total[30s]))"}, {"time", "1700000060"}}),
            R"({"status":"success","data":{"resultType":"vector","result":[)"
            R"({"metric":{},"value":[1700000060,"3"]}]}})");
  EXPECT_EQ(status, 200);
  // Without `time`, now; `timeout` is accepted and ignored.
  EXPECT_EQ(instant({{"query", "c_total{vm='b'}"}, {"timeout", "5s"}}, t0 + 45.5),
            R"({"status":"success","data":{"resultType":"vector","result":[)"
            R"({"metric":{"__name__":"c_total","vm":"b"},"value":[1700000045.500,"45"]}]}})");
  EXPECT_EQ(
      instant({{"query", "c_total{vm='b'}[20s]"}, {"time", "2023-11-14T22:14:20Z"}}),
      R"({"status":"success","data":{"resultType":"matrix","result":[)"
      R"({"metric":{"__name__":"c_total","vm":"b"},"values":[[1700000045,"45"],[1700000060,"60"]]}]}})");
  EXPECT_EQ(status, 200);
}

TEST_F(PromAnswerQuery, RangeQuery) {
  EXPECT_EQ(range({{"query", "rate(c_total{vm=\"a\"}[30s])"},
                   {"start", "1700000030"},
                   {"end", "2023-11-14T22:14:25Z"},
                   {"step", "15s"}}),
            R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{"vm":"a"},"values":[)"
            R"([1700000030,"2"],[1700000045,"2"],[1700000060,"2"]]}]}})");
  EXPECT_EQ(status, 200);
  const std::string fractional = range(
      {{"query", "c_total{vm=\"a\"}"}, {"start", "1700000000"}, {"end", "1700000001"}, {"step", "0.25"}});
  EXPECT_EQ(status, 200);
  EXPECT_NE(fractional.find(R"([1700000000.250,"0"],[1700000000.500,"0"])"), std::string::npos) << fractional;
}

TEST_F(PromAnswerQuery, ParameterErrors) {
  const std::map<std::string, std::string> ok{
      {"query", "c_total"}, {"start", "1700000000"}, {"end", "1700000060"}, {"step", "15"}};
  auto with = [&](const std::string& key, const std::string& value) {
    auto values = ok;
    if (value.empty()) {
      values.erase(key);
    } else {
      values[key] = value;
    }
    return values;
  };
  EXPECT_EQ(error_of(range(with("start", ""))),
            "bad_data: invalid parameter \"start\": cannot parse \"\" to a valid timestamp");
  EXPECT_EQ(status, 400);
  EXPECT_EQ(error_of(range(with("end", "tomorrow"))),
            "bad_data: invalid parameter \"end\": cannot parse \"tomorrow\" to a valid timestamp");
  EXPECT_EQ(error_of(range(with("end", "1699999999"))),
            "bad_data: end timestamp must not be before start time");
  EXPECT_EQ(error_of(range(with("step", ""))),
            "bad_data: invalid parameter \"step\": cannot parse \"\" to a valid duration");
  EXPECT_EQ(
      error_of(range(with("step", "0"))),
      "bad_data: zero or negative query resolution step widths are not accepted. Try a positive integer");
  EXPECT_EQ(error_of(range(with("step", "-15s"))),
            "bad_data: invalid parameter \"step\": cannot parse \"-15s\" to a valid duration");
  EXPECT_EQ(
      error_of(range(with("step", "0.000000000001"))),  // below a nanosecond: zero
      "bad_data: zero or negative query resolution step widths are not accepted. Try a positive integer");
}

TEST_F(PromAnswerQuery, ResolutionLimit) {
  auto values = [](const char* end) {
    return std::map<std::string, std::string>{
        {"query", "c_total"}, {"start", "1700000000"}, {"end", end}, {"step", "1"}};
  };
  EXPECT_EQ(error_of(range(values("1700011001"))),
            "bad_data: exceeded maximum resolution of 11,000 points per timeseries. Try decreasing the query "
            "resolution (?step=XX)");
  EXPECT_EQ(status, 400);
  range(values("1700011000.999"));  // (end - start) / step truncates to 11,000
  EXPECT_EQ(status, 200);
}

TEST_F(PromAnswerQuery, QueryErrors) {
  EXPECT_EQ(error_of(instant({})),
            "bad_data: invalid parameter \"query\": parse error at char 1: no expression found in input");
  EXPECT_EQ(status, 400);
  EXPECT_EQ(
      error_of(instant({{"query", "rate(c_total)"}})),
      "bad_data: invalid parameter \"query\": parse error at char 6: expected type range vector in call to "
      "function \"rate\", got instant vector");
  EXPECT_EQ(error_of(instant({{"query", "c_total"}, {"time", "x"}})),
            "bad_data: invalid parameter \"time\": cannot parse \"x\" to a valid timestamp");
  EXPECT_EQ(error_of(range(
                {{"query", "c_total[1m]"}, {"start", "1700000000"}, {"end", "1700000060"}, {"step", "15"}})),
            "bad_data: invalid parameter \"query\": invalid expression type \"range vector\" for range "
            "query, must be "
            "Scalar or instant Vector");
  EXPECT_EQ(status, 400);
  EXPECT_EQ(error_of(instant({{"query", R"(rate({__name__=~"c_total|d_total", vm="a"}[1m]))"}})),
            "execution: vector cannot contain metrics with the same labelset");
  EXPECT_EQ(status, 422);
  EXPECT_EQ(error_of(instant({{"query", "c_total > 5"}}))
                .rfind("bad_data: invalid parameter \"query\": parse error at char 9: bootstorm's lab "
                       "Prometheus serves a "
                       "subset of PromQL: binary operators",
                       0),
            0u);
}

}  // namespace
}  // namespace bootstorm::sim::prometheus
