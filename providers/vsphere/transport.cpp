#include "providers/vsphere/transport.hpp"

namespace bootstorm::vsphere {

boost::asio::awaitable<Expected<void>> open_storm_connections(Transport& transport, std::size_t count,
                                                              const std::string& endpoint) {
  auto opened = co_await transport.prewarm(count);
  if (!opened) {
    Error e = opened.error();
    e.message = "opening " + std::to_string(count) + " connections to vCenter at " + endpoint +
                " failed: " + e.message;
    co_return e;
  }
  co_return Expected<void>{};
}

}  // namespace bootstorm::vsphere
