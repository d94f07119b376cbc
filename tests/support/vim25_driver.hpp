#pragma once
// A test's handle on a vim25 endpoint (the lab's /sdk or vcsim) through bootstorm's vim25 client: a call, a
// task started and followed to its end, and every VM's properties read back with RetrievePropertiesEx over a
// container view. Failures are recorded as test failures (EXPECT) and an empty answer returned.
#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <chrono>
#include <map>
#include <string>
#include <vector>

#include "protocol/vim25/decode.hpp"
#include "protocol/vim25/messages.hpp"
#include "providers/vsphere/vim25/session.hpp"
#include "providers/vsphere/vim25/updates.hpp"
#include "tests/support/run_task.hpp"

namespace bootstorm::test_support {

class Vim25Driver {
 public:
  Vim25Driver(boost::asio::io_context& io, vsphere::vim25::Session& session) : io_(io), session_(session) {}

  Expected<vsphere::vim25::SoapReply> call(std::string method, std::string element) {
    return testing::run_task(io_, session_.call(std::move(method), std::move(element)));
  }

  // Starts a *_Task method and returns its Task (empty, and a test failure, when the call failed).
  vsphere::vim25::MoRef task_of(const std::string& method, const std::string& element) {
    auto reply = call(method, element);
    EXPECT_TRUE(reply) << method << ": " << (reply ? "" : reply.error().what());
    return reply ? vsphere::vim25::decode_moref(reply->returnval()) : vsphere::vim25::MoRef{};
  }

  std::vector<vsphere::vim25::TaskOutcome> wait(std::vector<vsphere::vim25::MoRef> tasks,
                                                const std::string& what) {
    auto outcomes = testing::run_task(
        io_, vsphere::vim25::wait_for_tasks(session_, std::move(tasks), std::chrono::seconds(60), what));
    EXPECT_TRUE(outcomes) << (outcomes ? "" : outcomes.error().what());
    return outcomes ? *outcomes : std::vector<vsphere::vim25::TaskOutcome>{};
  }

  // `paths` (and name) of every VM, by name, read with RetrievePropertiesEx over a container view.
  std::map<std::string, vsphere::vim25::ObjectContent> vms(std::vector<std::string> paths) {
    namespace vim25 = vsphere::vim25;
    const vim25::ServiceContent& sc = session_.service_content();
    auto view = call("CreateContainerView",
                     vim25::create_container_view(sc.view_manager, sc.root_folder, {"VirtualMachine"}, true));
    EXPECT_TRUE(view);
    if (!view) return {};
    const vim25::MoRef v = vim25::decode_moref(view->returnval());
    std::map<std::string, vim25::ObjectContent> out;
    auto spec = vim25::view_filter_spec(v, "VirtualMachine", std::move(paths));
    spec.prop_set[0].paths.push_back("name");
    auto reply = call("RetrievePropertiesEx", vim25::retrieve_properties_ex(sc.property_collector, {spec}));
    EXPECT_TRUE(reply) << (reply ? "" : reply.error().what());
    if (!reply) return {};
    auto result = vim25::decode_retrieve_result(reply->response());
    EXPECT_TRUE(result);
    while (result) {
      for (auto& o : result->objects) out[o.prop("name") ? o.prop("name")->text : o.obj.value] = o;
      if (result->token.empty()) break;
      auto more = call("ContinueRetrievePropertiesEx",
                       vim25::continue_retrieve_properties_ex(sc.property_collector, result->token));
      EXPECT_TRUE(more);
      if (!more) break;
      result = vim25::decode_retrieve_result(more->response());
    }
    (void)call("DestroyView", vim25::destroy_view(v));
    return out;
  }

  // The objects of `type` under the root folder (a container view, read and destroyed).
  std::vector<vsphere::vim25::ObjectContent> objects(const std::string& type,
                                                     std::vector<std::string> paths) {
    namespace vim25 = vsphere::vim25;
    const vim25::ServiceContent& sc = session_.service_content();
    auto view = call("CreateContainerView",
                     vim25::create_container_view(sc.view_manager, sc.root_folder, {type}, true));
    EXPECT_TRUE(view);
    if (!view) return {};
    const vim25::MoRef v = vim25::decode_moref(view->returnval());
    auto reply = call("RetrievePropertiesEx",
                      vim25::retrieve_properties_ex(sc.property_collector,
                                                    {vim25::view_filter_spec(v, type, std::move(paths))}));
    EXPECT_TRUE(reply) << (reply ? "" : reply.error().what());
    (void)call("DestroyView", vim25::destroy_view(v));
    if (!reply) return {};
    auto result = vim25::decode_retrieve_result(reply->response());
    EXPECT_TRUE(result);
    return result ? result->objects : std::vector<vim25::ObjectContent>{};
  }

  // `paths` of the given objects (of one type) themselves.
  std::vector<vsphere::vim25::ObjectContent> properties(const std::vector<vsphere::vim25::MoRef>& objects,
                                                        const std::string& type,
                                                        std::vector<std::string> paths) {
    namespace vim25 = vsphere::vim25;
    auto reply =
        call("RetrievePropertiesEx",
             vim25::retrieve_properties_ex(session_.service_content().property_collector,
                                           {vim25::objects_filter_spec(objects, type, std::move(paths))}));
    EXPECT_TRUE(reply) << (reply ? "" : reply.error().what());
    if (!reply) return {};
    auto result = vim25::decode_retrieve_result(reply->response());
    EXPECT_TRUE(result);
    return result ? result->objects : std::vector<vim25::ObjectContent>{};
  }

 private:
  boost::asio::io_context& io_;
  vsphere::vim25::Session& session_;
};

}  // namespace bootstorm::test_support
