// The object-level calls over a FakeKubeApi: replace_object's conditional PUT (the body sent whole, the
// server's object back, a 409 Conflict as ErrorKind::conflict naming what was being done).
#include "protocol/kube/object_calls.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/run_task.hpp"
#include "tests/unit/protocol/kube/fake_kube_api.hpp"

namespace {

using bootstorm::ErrorKind;
using bootstorm::kube::replace_object;
using bootstorm::kube::testing::FakeKubeApi;
using bootstorm::testing::run_task;
using nlohmann::json;

const std::string kStatusPath = "/apis/cdi.kubevirt.io/v1beta1/namespaces/bootstorm/datavolumes/dv-1/status";

json data_volume(const std::string& resource_version, const std::string& phase) {
  return {{"apiVersion", "cdi.kubevirt.io/v1beta1"},
          {"kind", "DataVolume"},
          {"metadata", {{"name", "dv-1"}, {"namespace", "bootstorm"}, {"resourceVersion", resource_version}}},
          {"status", {{"phase", phase}}}};
}

TEST(ReplaceObject, SendsTheObjectWholeAndAnswersWithTheServersVersion) {
  boost::asio::io_context io;
  FakeKubeApi api(io.get_executor());
  api.on("PUT", kStatusPath, 200, data_volume("43", "Succeeded").dump());
  auto replaced =
      run_task(io, replace_object(api, kStatusPath, data_volume("42", "Succeeded"), "writing dv-1"));
  ASSERT_TRUE(replaced) << replaced.error().what();
  EXPECT_EQ((*replaced)["metadata"]["resourceVersion"], "43");  // the server's, not the one sent
  ASSERT_EQ(api.calls_to("PUT", kStatusPath).size(), 1u);
  const json sent = json::parse(api.calls_to("PUT", kStatusPath).front().body);
  EXPECT_EQ(sent["metadata"]["resourceVersion"], "42");  // the precondition goes with it
  EXPECT_EQ(sent["status"]["phase"], "Succeeded");
}

TEST(ReplaceObject, AnObjectChangedSinceIsAConflictNamingTheWrite) {
  boost::asio::io_context io;
  FakeKubeApi api(io.get_executor());
  api.on(
      "PUT", kStatusPath, 409,
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","reason":"Conflict","code":409,)"
      R"("message":"Operation cannot be fulfilled on datavolumes.cdi.kubevirt.io \"dv-1\": the object has been )"
      R"(modified; please apply your changes to the latest version and try again"})");
  auto replaced =
      run_task(io, replace_object(api, kStatusPath, data_volume("42", "Succeeded"), "writing dv-1"));
  ASSERT_FALSE(replaced);
  EXPECT_EQ(replaced.error().kind, ErrorKind::conflict);
  EXPECT_NE(replaced.error().message.find("writing dv-1"), std::string::npos) << replaced.error().what();
  EXPECT_NE(replaced.error().message.find("the object has been modified"), std::string::npos)
      << replaced.error().what();
}

TEST(ReplaceObject, AnAnswerThatIsNotJsonIsAProtocolError) {
  boost::asio::io_context io;
  FakeKubeApi api(io.get_executor());
  api.on("PUT", kStatusPath, 200, "<html>a proxy's page</html>");
  auto replaced =
      run_task(io, replace_object(api, kStatusPath, data_volume("42", "Pending"), "writing dv-1"));
  ASSERT_FALSE(replaced);
  EXPECT_EQ(replaced.error().kind, ErrorKind::protocol);
}

}  // namespace
