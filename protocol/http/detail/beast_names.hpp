#pragma once
// Internal to protocol/http: the Beast and Asio names the client and the server are both written in, and
// the non-throwing completion token every socket operation there uses (errors are values, not exceptions).
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <chrono>

// Declared here so that the aliases below compile whatever the including file brought in first.
namespace boost::beast::http {}
namespace boost::asio::ssl {}

namespace bootstorm::http::detail {

namespace beast = boost::beast;
namespace bhttp = boost::beast::http;
namespace net = boost::asio;
namespace ssl = boost::asio::ssl;
using tcp = net::ip::tcp;
using Clock = std::chrono::steady_clock;
using net::awaitable;
constexpr auto use_nothrow = net::as_tuple(net::use_awaitable);

}  // namespace bootstorm::http::detail
