// Header texts (common/header_text.hpp): the Warning header's values as kube-apiserver sends them.
#include "common/header_text.hpp"

#include <gtest/gtest.h>

namespace bootstorm_test {
namespace {
using bootstorm::warning_texts;
using Texts = std::vector<std::string>;

TEST(WarningHeader, OneValueAsKubeApiserverSendsIt) {
  EXPECT_EQ(warning_texts(R"(299 - "unknown field \"spec.bogus\"")"), Texts{R"(unknown field "spec.bogus")"});
}

TEST(WarningHeader, SeveralValuesDatesAndEscapes) {
  EXPECT_EQ(warning_texts(R"(299 - "a, b", 299 - "c" "Sat, 05 Dec 2026 01:00:00 GMT", 110 agent "d\\e")"),
            (Texts{"a, b", "c", R"(d\e)"}));
}

TEST(WarningHeader, WhatIsNotAWarningValueGivesNothing) {
  EXPECT_TRUE(warning_texts("").empty());
  EXPECT_TRUE(warning_texts("299 - no quotes").empty());
  EXPECT_TRUE(warning_texts(R"(299 - "never closed)").empty());
}

}  // namespace
}  // namespace bootstorm_test
