// Decoding the Prometheus query API's answers: vectors, matrices, scalars, errors and what is not an answer.
#include "providers/prometheus/answer.hpp"

#include <gtest/gtest.h>

#include <cmath>

namespace bootstorm::prometheus {
namespace {

TEST(PrometheusAnswer, AVectorAndAMatrixKeepTheirLabelsAndSamples) {
  auto vector = decode_answer(
      R"({"status":"success","data":{"resultType":"vector","result":[
           {"metric":{"name":"desk-1","node":"worker-0"},"value":[1700000000.5,"12.25"]}]}})",
      "https://q");
  ASSERT_TRUE(vector.has_value()) << vector.error().what();
  EXPECT_EQ(vector->result_type, "vector");
  ASSERT_EQ(vector->series.size(), 1u);
  EXPECT_EQ(vector->series[0].labels.at("node"), "worker-0");
  EXPECT_DOUBLE_EQ(vector->series[0].samples[0].at, 1700000000.5);
  EXPECT_DOUBLE_EQ(vector->series[0].samples[0].value, 12.25);
  auto matrix = decode_answer(
      R"({"status":"success","warnings":["partial response"],"data":{"resultType":"matrix","result":[
           {"metric":{"__name__":"m"},"values":[[10,"1"],[25,"NaN"],[40,"+Inf"]]}]}})",
      "https://q");
  ASSERT_TRUE(matrix.has_value()) << matrix.error().what();
  ASSERT_EQ(matrix->series[0].samples.size(), 3u);
  EXPECT_TRUE(std::isnan(matrix->series[0].samples[1].value));
  EXPECT_TRUE(std::isinf(matrix->series[0].samples[2].value));
  EXPECT_EQ(matrix->warnings, std::vector<std::string>{"partial response"});
  auto scalar = decode_answer(R"({"status":"success","data":{"resultType":"scalar","result":[5,"2"]}})", "q");
  ASSERT_TRUE(scalar.has_value());
  EXPECT_DOUBLE_EQ(scalar->series[0].samples[0].value, 2);
}

TEST(PrometheusAnswer, AnErrorAnswerQuotesPrometheusAndNamesTheEndpoint) {
  auto error = decode_answer(
      R"({"status":"error","errorType":"bad_data","error":"1:5: parse error: unexpected end of input"})",
      "https://thanos");
  ASSERT_FALSE(error.has_value());
  EXPECT_EQ(error.error().kind, ErrorKind::api);
  EXPECT_NE(error.error().message.find("https://thanos"), std::string::npos);
  EXPECT_NE(error.error().message.find("bad_data"), std::string::npos);
  EXPECT_NE(error.error().message.find("unexpected end of input"), std::string::npos);
}

TEST(PrometheusAnswer, WhatIsNotTheApisJsonIsAProtocolError) {
  for (
      const char* body :
      {"<html>login</html>", R"({"status":"success"})",
       R"({"status":"success","data":{"resultType":"x","result":[]}})",
       R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{},"value":[1,2]}]}})",
       R"({"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[2,"1"],[1,"2"]]}]}})",
       R"({"status":"success","data":{"resultType":"vector","result":[{"metric":{"a":1},"value":[1,"2"]}]}})",
       R"({"status":{"resultType":"matrix"},"data":{}})"}) {
    auto decoded = decode_answer(body, "https://q");
    ASSERT_FALSE(decoded.has_value()) << body;
    EXPECT_EQ(decoded.error().kind, ErrorKind::protocol) << body;
    EXPECT_NE(decoded.error().message.find("https://q"), std::string::npos);
  }
}

}  // namespace
}  // namespace bootstorm::prometheus
