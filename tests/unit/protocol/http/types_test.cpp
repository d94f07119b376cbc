#include "protocol/http/types.hpp"

#include <gtest/gtest.h>

#include "protocol/http/server.hpp"

namespace bootstorm::http {
namespace {

TEST(FindHeader, IsCaseInsensitiveAndReturnsFirstMatch) {
  Headers headers{{"Content-Type", "application/json"}, {"X-Trace", "1"}, {"x-trace", "2"}};
  ASSERT_TRUE(find_header(headers, "content-type"));
  EXPECT_EQ(*find_header(headers, "CONTENT-TYPE"), "application/json");
  EXPECT_EQ(*find_header(headers, "x-TRACE"), "1");
  EXPECT_FALSE(find_header(headers, "Content-Length"));
  EXPECT_FALSE(find_header(headers, "Content-Typ"));
}

TEST(UrlEncode, KeepsUnreservedAndEscapesTheRest) {
  EXPECT_EQ(url_encode("abcXYZ019-._~"), "abcXYZ019-._~");
  EXPECT_EQ(url_encode("a b&c=d/é"), "a%20b%26c%3Dd%2F%C3%A9");
  EXPECT_EQ(url_encode(""), "");
}

TEST(UrlDecode, DecodesEscapesAndPlusAndKeepsMalformedEscapes) {
  EXPECT_EQ(url_decode("a%20b%26c%3Dd%2F%C3%A9"), "a b&c=d/é");
  EXPECT_EQ(url_decode("a+b"), "a b");
  EXPECT_EQ(url_decode("100%"), "100%");
  EXPECT_EQ(url_decode("%zz%4"), "%zz%4");
  EXPECT_EQ(url_decode("%41%62"), "Ab");
  for (std::string text : {"x y", "k8s/ns=default&v=1", "ümlaut%+"})
    EXPECT_EQ(url_decode(url_encode(text)), text);
}

TEST(ParseUrl, SplitsSchemeHostPortAndTarget) {
  auto url = parse_url("https://vcenter.example.com:8443/api/vcenter/vm?names=a");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->scheme, "https");
  EXPECT_EQ(url->host, "vcenter.example.com");
  EXPECT_EQ(url->port, 8443);
  EXPECT_EQ(url->target, "/api/vcenter/vm?names=a");
  EXPECT_EQ(url->origin(), "https://vcenter.example.com:8443");
}

TEST(ParseUrl, DefaultsPortAndTarget) {
  auto https = parse_url("HTTPS://example.com");
  ASSERT_TRUE(https);
  EXPECT_EQ(https->scheme, "https");
  EXPECT_EQ(https->port, 443);
  EXPECT_EQ(https->target, "/");
  auto http = parse_url("http://10.0.0.1?x=1#frag");
  ASSERT_TRUE(http);
  EXPECT_EQ(http->port, 80);
  EXPECT_EQ(http->host, "10.0.0.1");
  EXPECT_EQ(http->target, "/?x=1");
}

TEST(ParseUrl, HandlesIpv6AndUserInfo) {
  auto url = parse_url("https://[::1]:6443/apis");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->host, "::1");
  EXPECT_EQ(url->port, 6443);
  EXPECT_EQ(url->origin(), "https://[::1]:6443");
  auto with_user = parse_url("http://user:pw@host:81/");
  ASSERT_TRUE(with_user);
  EXPECT_EQ(with_user->host, "host");
  EXPECT_EQ(with_user->port, 81);
}

TEST(ParseUrl, RejectsNonHttpAndMalformed) {
  EXPECT_FALSE(parse_url("ftp://example.com"));
  EXPECT_FALSE(parse_url("example.com:80"));
  EXPECT_FALSE(parse_url("http://"));
  EXPECT_FALSE(parse_url("http://host:0/"));
  EXPECT_FALSE(parse_url("http://host:70000/"));
  EXPECT_FALSE(parse_url("http://host:12ab/"));
  EXPECT_FALSE(parse_url("http://[::1/"));
}

TEST(ServerRequestQuery, FirstOccurrenceDecoded) {
  ServerRequest request;
  request.query = "names=a%20b&names=c&power_states=POWERED_ON&flag&empty=";
  EXPECT_EQ(request.query_param("names"), "a b");
  EXPECT_EQ(request.query_param("power_states"), "POWERED_ON");
  EXPECT_EQ(request.query_param("flag"), "");
  EXPECT_EQ(request.query_param("empty"), "");
  EXPECT_FALSE(request.query_param("missing"));
  EXPECT_FALSE(request.query_param("name"));
}

TEST(ServerRequestQuery, RepeatedAndCommaSeparatedValues) {
  ServerRequest request;
  request.query = "names=a&other=x&names=b%2Cc&names=";
  EXPECT_EQ(request.query_params("names"), (std::vector<std::string>{"a", "b,c", ""}));
  EXPECT_EQ(request.query_params("names", true), (std::vector<std::string>{"a", "b", "c"}));
  EXPECT_TRUE(request.query_params("missing").empty());
  request.query = "labelSelector=app%3Dweb";
  EXPECT_EQ(request.query_param("labelSelector"), "app=web");
}

}  // namespace
}  // namespace bootstorm::http
