// The PromQL subset's parser (simulator/prometheus/promql.hpp) and the matchers it builds
// (series_store.hpp): what parses to what, and every error with its message and position.
#include "simulator/prometheus/promql.hpp"

#include <gtest/gtest.h>

#include <string>

#include "simulator/prometheus/series_store.hpp"

namespace bootstorm::sim::prometheus {
namespace {

Expr parsed(std::string_view query) {
  auto e = parse_query(query);
  EXPECT_TRUE(e.has_value()) << query << ": " << (e ? "" : e.error().message);
  return e ? std::move(*e) : Expr{};
}

std::string parse_error(std::string_view query) {
  auto e = parse_query(query);
  EXPECT_FALSE(e.has_value()) << query << " parsed as " << (e ? format_expr(*e) : "");
  if (e) return {};
  EXPECT_EQ(e.error().kind, ErrorKind::invalid_input);
  EXPECT_EQ(e.error().status, 400);
  return e.error().message;
}

const std::string subset = "bootstorm's lab Prometheus serves a subset of PromQL: ";

TEST(PromQLParse, MetricNameIsANameMatcher) {
  Expr e = parsed("kubevirt_vmi_storage_read_traffic_bytes_total");
  const auto& vs = std::get<VectorSelector>(e.node);
  ASSERT_EQ(vs.matchers.size(), 1u);
  EXPECT_EQ(vs.matchers[0].label, "__name__");
  EXPECT_EQ(vs.matchers[0].op, MatchOp::equal);
  EXPECT_EQ(vs.matchers[0].value, "kubevirt_vmi_storage_read_traffic_bytes_total");
  EXPECT_FALSE(is_range_vector(e));
}

TEST(PromQLParse, AllFourMatchersWithBothQuotesAndATrailingComma) {
  Expr e = parsed(R"(x{a="1", b!="2", c=~"3.*", d!~'4', })");
  const auto& m = std::get<VectorSelector>(e.node).matchers;
  ASSERT_EQ(m.size(), 5u);
  EXPECT_EQ(m[1].label, "a");
  EXPECT_EQ(m[1].op, MatchOp::equal);
  EXPECT_EQ(m[2].op, MatchOp::not_equal);
  EXPECT_EQ(m[3].op, MatchOp::regex);
  EXPECT_EQ(m[3].value, "3.*");
  EXPECT_EQ(m[4].op, MatchOp::not_regex);
  EXPECT_EQ(m[4].value, "4");
  EXPECT_TRUE(m[3].compiled);  // compiled once, at parse time
}

TEST(PromQLParse, SelectorWithoutAName) {
  Expr e = parsed(R"({__name__=~"kubevirt_vmi_storage_.*_total", node="n1"})");
  const auto& m = std::get<VectorSelector>(e.node).matchers;
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m[0].label, "__name__");
  EXPECT_EQ(m[0].op, MatchOp::regex);
  EXPECT_EQ(format_expr(e), R"({__name__=~"kubevirt_vmi_storage_.*_total", node="n1"})");
  parsed(R"({node=~".+"})");  // does not match "": enough on its own
}

TEST(PromQLParse, StringEscapes) {
  auto value = [](std::string_view query) {
    Expr e = parsed(query);
    return std::get<VectorSelector>(e.node).matchers.back().value;
  };
  EXPECT_EQ(value(R"(x{a="\"q\"\n\t\\"})"), "\"q\"\n\t\\");
  EXPECT_EQ(value(R"(x{a="\x41\101\u00e9\U0001F600"})"), "AA\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(value(R"(x{a='it\'s "quoted"'})"), "it's \"quoted\"");
  EXPECT_EQ(value("x{a=`\\d+\\.raw`}"), "\\d+\\.raw");
}

TEST(PromQLParse, RangeSelectorsAndDurations) {
  Expr e = parsed("x[1m30s]");
  ASSERT_TRUE(is_range_vector(e));
  EXPECT_EQ(std::get<MatrixSelector>(e.node).range_ms, 90000);
  EXPECT_EQ(format_expr(e), "x[1m30s]");
  EXPECT_EQ(std::get<MatrixSelector>(parsed("x{a='b'} [ 500ms ]").node).range_ms, 500);

  EXPECT_EQ(parse_duration_ms("1y"), 365LL * 86400000);
  EXPECT_EQ(parse_duration_ms("2w"), 14LL * 86400000);
  EXPECT_EQ(parse_duration_ms("1d2h3m4s5ms"), 86400000 + 2 * 3600000 + 3 * 60000 + 4 * 1000 + 5);
  EXPECT_EQ(parse_duration_ms("0s"), 0);
  EXPECT_FALSE(parse_duration_ms("30s1m"));  // units in order
  EXPECT_FALSE(parse_duration_ms("1m1m"));
  EXPECT_FALSE(parse_duration_ms("1.5s"));
  EXPECT_FALSE(parse_duration_ms("5"));
  EXPECT_FALSE(parse_duration_ms(""));
  EXPECT_FALSE(parse_duration_ms("99999999999999999999y"));

  EXPECT_EQ(format_duration_ms(90000), "1m30s");
  EXPECT_EQ(format_duration_ms(0), "0s");
  EXPECT_EQ(format_duration_ms(8LL * 86400000), "8d");  // weeks only when exact
  EXPECT_EQ(format_duration_ms(14LL * 86400000), "2w");
  EXPECT_EQ(format_duration_ms(1500), "1s500ms");
}

TEST(PromQLParse, FunctionsTakeARangeSelector) {
  Expr e = parsed("rate(kubevirt_vmi_storage_iops_read_total[30s])");
  const auto& call = std::get<Call>(e.node);
  EXPECT_EQ(call.function, Function::rate);
  EXPECT_EQ(std::get<MatrixSelector>(call.arg->node).range_ms, 30000);
  EXPECT_EQ(std::get<Call>(parsed("increase(x[5m])").node).function, Function::increase);
  EXPECT_EQ(std::get<Call>(parsed("irate((x[5m]))").node).function, Function::irate);
}

TEST(PromQLParse, AggregationsWithGroupingBeforeOrAfter) {
  Expr before = parsed("sum by (node, namespace) (rate(x[30s]))");
  Expr after = parsed("sum(rate(x[30s])) by (node, namespace)");
  EXPECT_EQ(format_expr(before), "sum by (node, namespace) (rate(x[30s]))");
  EXPECT_EQ(format_expr(after), format_expr(before));
  const auto& agg = std::get<Aggregate>(after.node);
  EXPECT_EQ(agg.op, AggregateOp::sum);
  EXPECT_FALSE(agg.without);
  EXPECT_EQ(agg.grouping, (std::vector<std::string>{"node", "namespace"}));

  const auto& w = std::get<Aggregate>(parsed("COUNT WITHOUT (vm,) (x)").node);
  EXPECT_EQ(w.op, AggregateOp::count);
  EXPECT_TRUE(w.without);
  EXPECT_EQ(w.grouping, (std::vector<std::string>{"vm"}));
  EXPECT_EQ(std::get<Aggregate>(parsed("avg(x)").node).op, AggregateOp::avg);
  EXPECT_EQ(std::get<Aggregate>(parsed("min(x)").node).op, AggregateOp::min);
  EXPECT_EQ(std::get<Aggregate>(parsed("max by () (x)").node).op, AggregateOp::max);
  EXPECT_EQ(format_expr(parsed("max by () (x)")), "max(x)");
  EXPECT_EQ(format_expr(parsed("((sum without () ((x))))")), "sum without () (x)");
}

TEST(PromQLParse, FormattedQueriesParseBackToThemselves) {
  for (const char* q :
       {R"(sum by (node) (increase({__name__=~"a|b", vm!="x\ny"}[1h1m])))", R"(x{a="quote\"and\\back"})",
        R"({__name__="nan"})", R"({__name__="a", __name__="b"})", R"(count(x{a="\x01"}))"}) {
    const std::string once = format_expr(parsed(q));
    EXPECT_EQ(format_expr(parsed(once)), once) << q;
  }
}

TEST(PromQLParse, ErrorsSayWhatAndWhere) {
  EXPECT_EQ(parse_error(""), "parse error at char 1: no expression found in input");
  EXPECT_EQ(parse_error("   "), "parse error at char 4: no expression found in input");
  EXPECT_EQ(parse_error("foo{"),
            "parse error at char 5: unexpected end of input in label matching, expected label name or \"}\"");
  EXPECT_EQ(parse_error(R"(foo{bar="baz")"),
            "parse error at char 14: unexpected end of input in label matching, expected \",\" or \"}\"");
  EXPECT_EQ(parse_error("foo{bar=baz}"),
            "parse error at char 9: unexpected identifier \"baz\" in label matching, expected string");
  EXPECT_EQ(parse_error(R"(foo{bar~"x"})"), "parse error at char 8: unexpected character: \"~\"");
  EXPECT_EQ(parse_error(R"(foo{bar!"x"})"),
            "parse error at char 8: unexpected character after '!': \"\\\"\"");
  EXPECT_EQ(parse_error(R"(foo{a:b="c"})"), "parse error at char 5: invalid label name \"a:b\"");
  EXPECT_EQ(parse_error("foo)"), "parse error at char 4: unexpected \")\"");
  EXPECT_EQ(parse_error("foo bar"), "parse error at char 5: unexpected identifier \"bar\"");
  EXPECT_EQ(parse_error("(foo"), "parse error at char 1: unclosed left parenthesis");
  EXPECT_EQ(parse_error("$"), "parse error at char 1: unexpected character: \"$\"");
}

TEST(PromQLParse, SelectorErrors) {
  EXPECT_EQ(parse_error("{}"),
            "parse error at char 1: vector selector must contain at least one non-empty matcher");
  EXPECT_EQ(parse_error(R"( {a=~".*", b=""})"),
            "parse error at char 2: vector selector must contain at least one non-empty matcher");
  EXPECT_EQ(parse_error(R"(foo{__name__="bar"})"),
            "parse error at char 1: metric name must not be set twice: \"foo\" or \"bar\"");
  EXPECT_EQ(parse_error("foo[5x]"), "parse error at char 5: bad duration syntax: \"5x\"");
  EXPECT_EQ(parse_error("foo[1.5m]"), "parse error at char 5: bad duration syntax: \"1.5m\"");
  EXPECT_EQ(parse_error("foo[0s]"),
            "parse error at char 5: range selector duration must be greater than zero");
  EXPECT_EQ(parse_error("foo[]"), "parse error at char 5: unexpected \"]\", expected duration");
  EXPECT_EQ(parse_error("foo[5m"), "parse error at char 7: unexpected end of input, expected \"]\"");
  EXPECT_EQ(parse_error("(foo)[5m]"), "parse error at char 6: ranges only allowed for vector selectors");
  EXPECT_EQ(parse_error("foo[5m][5m]"), "parse error at char 8: ranges only allowed for vector selectors");
}

TEST(PromQLParse, StringLiteralErrors) {
  EXPECT_EQ(parse_error(R"(foo{a="\q"})"),
            "parse error at char 8: unknown escape sequence in string: \"\\\\q\"");
  EXPECT_EQ(parse_error(R"(foo{a="abc)"), "parse error at char 7: unterminated quoted string");
  EXPECT_EQ(parse_error("foo{a=\"a\nb\"}"), "parse error at char 7: unterminated quoted string");
  EXPECT_EQ(parse_error("foo{a=`abc}"), "parse error at char 7: unterminated raw string");
  EXPECT_EQ(parse_error(R"(foo{a="\x4"})"),
            "parse error at char 8: invalid escape sequence in string: \"\\\\x4\"");
  EXPECT_EQ(parse_error(R"(foo{a="\ud800"})"),
            "parse error at char 8: invalid Unicode code point in string: \"\\\\ud800\"");
  EXPECT_EQ(parse_error(R"(foo{a="\777"})"),
            "parse error at char 8: octal escape value > 255 in string: \"\\\\777\"");
}

TEST(PromQLParse, RegexErrorsAreParseErrors) {
  const std::string unclosed = parse_error(R"(foo{a=~"("})");
  EXPECT_EQ(unclosed.rfind("parse error at char 8: invalid regular expression \"(\": ", 0), 0u) << unclosed;
  // Go's regexps have no back-references; neither does the subset.
  EXPECT_NE(parse_error("foo{a=~`(a)\\1`}").find("invalid regular expression"), std::string::npos);
  EXPECT_EQ(parse_error(R"(foo{a!~"a{1001}"})"),
            "parse error at char 8: invalid regular expression \"a{1001}\": invalid repeat count");
  // Digit runs std::regex would read into a long, overflowing it.
  EXPECT_EQ(
      parse_error(R"(foo{a=~"a{99999999999999999999,"})"),
      "parse error at char 8: invalid regular expression \"a{99999999999999999999,\": invalid repeat count");
  EXPECT_EQ(
      parse_error("foo{a=~`[\\99999999999999999999]`}"),
      "parse error at char 8: invalid regular expression \"[\\99999999999999999999]\": back-references and "
      "octal escapes are not supported");
  EXPECT_EQ(parse_error(R"(foo{a=~"((a?){100}){100}"})"),
            "parse error at char 8: invalid regular expression \"((a?){100}){100}\": expression too large");
}

TEST(PromQLParse, CallAndAggregationErrors) {
  EXPECT_EQ(
      parse_error("rate(foo)"),
      "parse error at char 6: expected type range vector in call to function \"rate\", got instant vector");
  EXPECT_EQ(parse_error("rate(foo[5m], bar[5m])"),
            "parse error at char 1: expected 1 argument(s) in call to \"rate\", got 2");
  EXPECT_EQ(parse_error("irate()"),
            "parse error at char 1: expected 1 argument(s) in call to \"irate\", got 0");
  EXPECT_EQ(parse_error("frobnicate(foo)"),
            "parse error at char 1: unknown function with name \"frobnicate\"");
  EXPECT_EQ(parse_error("Rate(foo[1m])"), "parse error at char 1: unknown function with name \"Rate\"");
  EXPECT_EQ(
      parse_error("sum(foo[5m])"),
      "parse error at char 5: expected type instant vector in aggregation expression, got range vector");
  EXPECT_EQ(parse_error("sum()"), "parse error at char 4: no arguments for aggregate expression provided");
  EXPECT_EQ(parse_error("sum(foo, bar)"),
            "parse error at char 4: wrong number of arguments for aggregate expression provided, expected 1, "
            "got 2");
  EXPECT_EQ(parse_error("sum by (a) (foo) by (b)"),
            "parse error at char 18: aggregation must only contain one grouping clause");
  EXPECT_EQ(parse_error("sum by (a b) (foo)"),
            "parse error at char 11: unexpected identifier \"b\" in grouping opts, expected \",\" or \")\"");
  EXPECT_EQ(parse_error("sum by a (foo)"),
            "parse error at char 8: unexpected identifier \"a\" in grouping opts, expected \"(\"");
  EXPECT_EQ(parse_error("sum by (\"a\") (foo)"),
            "parse error at char 9: unexpected string \"\\\"a\\\"\" in grouping opts, expected label");
}

TEST(PromQLParse, OutsideTheSubsetSaysSo) {
  const std::string served =
      " not supported (it serves selectors, range selectors, rate, increase, irate, sum, avg, min, max, "
      "count)";
  EXPECT_EQ(parse_error("foo + bar"),
            "parse error at char 5: " + subset + "binary operators (\"+\")" + served);
  EXPECT_EQ(parse_error("sum(x) / count(x)"),
            "parse error at char 8: " + subset + "binary operators (\"/\")" + served);
  EXPECT_EQ(parse_error("foo and bar"),
            "parse error at char 5: " + subset + "binary operators (\"and\")" + served);
  EXPECT_EQ(parse_error("foo >= 1"),
            "parse error at char 5: " + subset + "binary operators (\">=\")" + served);
  EXPECT_EQ(parse_error("1"), "parse error at char 1: " + subset + "number literals" + served);
  EXPECT_EQ(parse_error("  NaN"), "parse error at char 3: " + subset + "number literals" + served);
  EXPECT_EQ(parse_error("\"foo\""), "parse error at char 1: " + subset + "string literals" + served);
  EXPECT_EQ(parse_error("-foo"), "parse error at char 1: " + subset + "unary operators" + served);
  EXPECT_EQ(parse_error("foo offset 5m"),
            "parse error at char 5: " + subset + "the offset modifier" + served);
  EXPECT_EQ(parse_error("foo @ 100"), "parse error at char 5: " + subset + "the @ modifier" + served);
  EXPECT_EQ(parse_error("foo[5m:1m]"), "parse error at char 7: " + subset + "subqueries" + served);
  EXPECT_EQ(parse_error("delta(foo[5m])"),
            "parse error at char 1: " + subset + "the function \"delta\"" + served);
  EXPECT_EQ(parse_error("topk(3, foo)"),
            "parse error at char 1: " + subset + "the topk aggregation" + served);
  EXPECT_EQ(parse_error("sum(rate(x[1m])) by (a) * 8"),
            "parse error at char 25: " + subset + "binary operators (\"*\")" + served);
}

TEST(PromQLParse, NestingIsBounded) {
  EXPECT_TRUE(parse_query(std::string(150, '(') + "x" + std::string(150, ')')));
  EXPECT_EQ(parse_error(std::string(300, '(') + "x" + std::string(300, ')')),
            "parse error at char 201: expression nests too deeply");
}

TEST(PromMatcher, RegexIsFullyAnchored) {
  auto m = make_matcher("vm", MatchOp::regex, "desk-1|desk-2");
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(m->matches("desk-1"));
  EXPECT_TRUE(m->matches("desk-2"));
  EXPECT_FALSE(m->matches("desk-10"));  // not a prefix match
  EXPECT_FALSE(m->matches("xdesk-2"));  // the alternation is anchored as a whole
  auto n = make_matcher("vm", MatchOp::not_regex, "desk-.*");
  ASSERT_TRUE(n.has_value());
  EXPECT_FALSE(n->matches("desk-7"));
  EXPECT_TRUE(n->matches("web-7"));
  auto icase = make_matcher("vm", MatchOp::regex, "(?i)DESK.*");
  ASSERT_TRUE(icase.has_value());
  EXPECT_TRUE(icase->matches("desk-1"));
  EXPECT_FALSE(make_matcher("vm", MatchOp::regex, "a)|(b").has_value());  // not rescued by the anchoring
  // A matcher written by hand (no compiled regex) still matches, compiling on the way.
  Matcher by_hand{"vm", MatchOp::regex, "d.*", nullptr};
  EXPECT_TRUE(by_hand.matches("desk"));
  EXPECT_FALSE(by_hand.matches("web"));
}

TEST(PromMatcher, AnAbsentLabelIsEmpty) {
  const Labels labels{{"__name__", "x"}, {"node", "n1"}};
  auto empty = make_matcher("vm", MatchOp::equal, "");
  auto not_empty = make_matcher("vm", MatchOp::not_equal, "");
  auto node = make_matcher("node", MatchOp::regex, "n.");
  ASSERT_TRUE(empty && not_empty && node);
  EXPECT_TRUE(matches_all({*empty, *node}, labels));
  EXPECT_FALSE(matches_all({*not_empty}, labels));
  EXPECT_TRUE(matches_all({}, labels));
}

TEST(PromSeriesStore, MemoryStoreSelectsByMatchersAndInclusiveWindow) {
  MemorySeriesStore store;
  for (int i = 0; i < 5; ++i) store.add({{"__name__", "x"}, {"vm", "a"}}, 100 + 10 * i, i);
  store.add({{"__name__", "x"}, {"vm", "b"}}, 100, 7);
  store.add({{"__name__", "x"}, {"vm", "b"}}, 100, 8);  // not after the last sample: dropped
  store.add({{"__name__", "y"}, {"vm", "a"}}, 100, 1);
  EXPECT_EQ(store.series_count(), 3u);
  auto name = make_matcher("__name__", MatchOp::equal, "x");
  ASSERT_TRUE(name.has_value());
  auto got = store.select({*name}, 110, 130);
  ASSERT_EQ(got.size(), 1u);  // vm="b" has no sample in the window
  EXPECT_EQ(got[0].labels.at("vm"), "a");
  ASSERT_EQ(got[0].samples.size(), 3u);
  EXPECT_EQ(got[0].samples.front().at, 110);
  EXPECT_EQ(got[0].samples.back().at, 130);
  auto all = store.select({*name}, 0, 1000);
  ASSERT_EQ(all.size(), 2u);
  ASSERT_EQ(all[1].samples.size(), 1u);
  EXPECT_EQ(all[1].samples[0].value, 7);
}

}  // namespace
}  // namespace bootstorm::sim::prometheus
