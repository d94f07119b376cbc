#include "providers/vsphere/descriptor.hpp"
#include "providers/vsphere/transport.hpp"
#include "providers/vsphere/vsphere_provider.hpp"

namespace bootstorm::vsphere {

void register_provider() {
  api::register_platform(
      descriptor(), [](boost::asio::any_io_executor executor, const api::ProviderConfig& config) {
        std::unique_ptr<api::Provider> provider =
            std::make_unique<VsphereProvider>(executor, config, make_http_transport(executor, config));
        return provider;
      });
}

}  // namespace bootstorm::vsphere
