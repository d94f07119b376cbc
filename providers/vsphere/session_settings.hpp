#pragma once
// What a vCenter session needs besides its Transport, for both APIs (REST: vsphere::Session, SOAP:
// vim25::Session): where, as whom, and the default deadline of one call.
#include <chrono>
#include <string>

namespace bootstorm::vsphere {

struct SessionSettings {
  std::string endpoint;  // https://vcenter.example.com (no path)
  std::string username;
  std::string password;  // the session registers it as a log secret
  std::chrono::milliseconds default_timeout{std::chrono::seconds(30)};
};

}  // namespace bootstorm::vsphere
