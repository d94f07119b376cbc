// UpdateStream and wait_for_tasks over a scripted /sdk: the version is kept and resent (so a call that failed
// is repeated from where it was, nothing lost or doubled), and tasks end in success or a fault explained.
#include "providers/vsphere/vim25/updates.hpp"

#include <gtest/gtest.h>

#include <boost/asio/io_context.hpp>
#include <deque>
#include <string>
#include <vector>

#include "providers/vsphere/vim25/messages.hpp"
#include "tests/support/run_task.hpp"

namespace {

namespace asio = boost::asio;
using namespace bootstorm;
using namespace bootstorm::vsphere::vim25;
using bootstorm::testing::run_task;

std::string envelope(const std::string& body) {
  return R"(<?xml version="1.0"?><soapenv:Envelope xmlns:soapenv="http://schemas.xmlsoap.org/soap/envelope/" )"
         R"(xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance"><soapenv:Body>)" +
         body + "</soapenv:Body></soapenv:Envelope>";
}

// Logs in, then answers every other call from `script` in order (an empty string: a transport failure).
class ScriptedSdk final : public vsphere::Transport {
 public:
  std::deque<std::string> script;
  std::vector<std::string> bodies;  // every request body after login

  asio::awaitable<Expected<http::Response>> send(http::Request req) override {
    http::Response r;
    r.status = 200;
    if (req.body.find("<RetrieveServiceContent ") != std::string::npos) {
      r.body = envelope(
          R"(<RetrieveServiceContentResponse xmlns="urn:vim25"><returnval><rootFolder type="Folder">f</rootFolder>)"
          R"(<propertyCollector type="PropertyCollector">pc</propertyCollector><about><apiVersion>7.0</apiVersion></about>)"
          R"(<sessionManager type="SessionManager">sm</sessionManager></returnval></RetrieveServiceContentResponse>)");
      co_return r;
    }
    if (req.body.find("<Login ") != std::string::npos) {
      r.headers.emplace_back("Set-Cookie", "vmware_soap_session=\"x\"; Path=/");
      r.body =
          envelope(R"(<LoginResponse xmlns="urn:vim25"><returnval><key>k</key></returnval></LoginResponse>)");
      co_return r;
    }
    bodies.push_back(req.body);
    if (script.empty()) co_return make_error(ErrorKind::io, "no more answers");
    std::string next = std::move(script.front());
    script.pop_front();
    if (next.empty()) co_return make_error(ErrorKind::io, "connection reset by peer");
    if (next.find("<soapenv:Fault>") != std::string::npos) r.status = 500;
    r.body = envelope(next);
    co_return r;
  }
  asio::awaitable<Expected<void>> prewarm(std::size_t) override { co_return Expected<void>{}; }
  void close_idle() override {}
};

std::string collector_created() {
  return R"(<CreatePropertyCollectorResponse xmlns="urn:vim25"><returnval type="PropertyCollector">session[1]c1</returnval></CreatePropertyCollectorResponse>)";
}

std::string collector_destroyed() {
  return R"(<DestroyPropertyCollectorResponse xmlns="urn:vim25"/>)";
}

std::string filter_created() {
  return R"(<CreateFilterResponse xmlns="urn:vim25"><returnval type="PropertyFilter">session[1]f1</returnval></CreateFilterResponse>)";
}

std::string update(const std::string& version, const std::string& objects) {
  return R"(<WaitForUpdatesExResponse xmlns="urn:vim25"><returnval><version>)" + version +
         "</version><filterSet><filter type=\"PropertyFilter\">session[1]f1</filter>" + objects +
         "</filterSet></returnval></WaitForUpdatesExResponse>";
}

std::string task_change(const std::string& task, const std::string& changes) {
  return "<objectSet><kind>modify</kind><obj type=\"Task\">" + task + "</obj>" + changes + "</objectSet>";
}

std::string change(const std::string& name, const std::string& value) {
  return "<changeSet><name>" + name + "</name><op>assign</op>" + value + "</changeSet>";
}

class Vim25Updates : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(run_task(io, session.login())); }
  asio::io_context io;
  ScriptedSdk sdk;
  Session session{io.get_executor(), sdk,
                  vsphere::SessionSettings{"https://vc", "u", "p", std::chrono::seconds(5)}};
};

TEST_F(Vim25Updates, TheVersionIsKeptAndAFailedCallIsRepeatedFromIt) {
  sdk.script = {collector_created(), filter_created(),
                update("1", ""),     "",
                update("2", ""),     R"(<WaitForUpdatesExResponse xmlns="urn:vim25"/>)"};
  UpdateStream stream(session);
  ASSERT_TRUE(run_task(io, stream.create(objects_filter_spec({{"VirtualMachine", "vm-1"}}, "VirtualMachine",
                                                             {"runtime.powerState"}))));
  EXPECT_EQ(stream.filter().value, "session[1]f1");
  ASSERT_TRUE(run_task(io, stream.next(WaitOptions{10, std::nullopt})));
  EXPECT_EQ(stream.version(), "1");
  auto dropped = run_task(io, stream.next(WaitOptions{10, std::nullopt}));
  ASSERT_FALSE(dropped);
  EXPECT_EQ(stream.version(), "1");  // nothing was lost: the repeat asks from 1 again
  ASSERT_TRUE(run_task(io, stream.next(WaitOptions{10, std::nullopt})));
  EXPECT_EQ(stream.version(), "2");
  auto idle = run_task(io, stream.next(WaitOptions{0, std::nullopt}));  // nothing new: same version
  ASSERT_TRUE(idle);
  EXPECT_TRUE(idle->filters.empty());
  EXPECT_EQ(stream.version(), "2");
  ASSERT_EQ(sdk.bodies.size(), 6u);
  // The filter and the waits address the stream's own collector, not the session's.
  EXPECT_NE(sdk.bodies[0].find("<CreatePropertyCollector "), std::string::npos) << sdk.bodies[0];
  EXPECT_NE(sdk.bodies[1].find(">session[1]c1</_this>"), std::string::npos) << sdk.bodies[1];
  EXPECT_NE(sdk.bodies[2].find(">session[1]c1</_this><version></version>"), std::string::npos)
      << sdk.bodies[2];
  EXPECT_NE(sdk.bodies[3].find("<version>1</version>"), std::string::npos) << sdk.bodies[3];
  EXPECT_NE(sdk.bodies[4].find("<version>1</version>"), std::string::npos) << sdk.bodies[4];
  EXPECT_NE(sdk.bodies[5].find("<version>2</version><options><maxWaitSeconds>0</maxWaitSeconds></options>"),
            std::string::npos)
      << sdk.bodies[5];
}

TEST_F(Vim25Updates, TasksEndInSuccessOrAnExplainedFault) {
  sdk.script = {
      collector_created(),
      filter_created(),
      update("1",
             task_change("task-1", change("info.state", "<val xsi:type=\"TaskInfoState\">running</val>")) +
                 task_change("task-2", change("info.state", "<val xsi:type=\"TaskInfoState\">queued</val>"))),
      update("2",
             task_change("task-1", change("info.state", "<val xsi:type=\"TaskInfoState\">success</val>") +
                                       change("info.result",
                                              "<val type=\"VirtualMachine\" "
                                              "xsi:type=\"ManagedObjectReference\">vm-7</val>"))),
      update("3",
             task_change(
                 "task-2",
                 change("info.state", "<val xsi:type=\"TaskInfoState\">error</val>") +
                     change("info.error",
                            "<val xsi:type=\"LocalizedMethodFault\"><fault xsi:type=\"DuplicateName\">"
                            "<name>bs-1-a</name><object type=\"Folder\">group-v3</object></fault>"
                            "<localizedMessage>The name 'bs-1-a' already exists.</localizedMessage></val>"))),
      collector_destroyed()};
  auto outcomes = run_task(io, wait_for_tasks(session, {{"Task", "task-1"}, {"Task", "task-2"}},
                                              std::chrono::seconds(30), "clone bs-1-a"));
  ASSERT_TRUE(outcomes) << outcomes.error().what();
  ASSERT_EQ(outcomes->size(), 2u);
  EXPECT_EQ((*outcomes)[0].state, "success");
  ASSERT_TRUE((*outcomes)[0].result);
  EXPECT_EQ((*outcomes)[0].result->moref(), (MoRef{"VirtualMachine", "vm-7"}));
  EXPECT_EQ((*outcomes)[1].state, "error");
  ASSERT_TRUE((*outcomes)[1].error);
  EXPECT_EQ((*outcomes)[1].error->kind, ErrorKind::conflict);
  EXPECT_NE((*outcomes)[1].error->message.find("clone bs-1-a failed: the name 'bs-1-a' is already taken"),
            std::string::npos)
      << (*outcomes)[1].error->message;
  EXPECT_NE(sdk.bodies.back().find("<DestroyPropertyCollector "),
            std::string::npos);  // the collector and its filter are not left behind
}

TEST_F(Vim25Updates, TasksStillRunningAtTheDeadlineAreATimeoutNamingHowMany) {
  sdk.script = {collector_created(), filter_created(),
                update("1", task_change("task-1", change("info.state",
                                                         "<val xsi:type=\"TaskInfoState\">running</val>"))),
                collector_destroyed()};
  auto outcomes =
      run_task(io, wait_for_tasks(session, {{"Task", "task-1"}}, std::chrono::milliseconds(0), "power on"));
  ASSERT_FALSE(outcomes);
  EXPECT_EQ(outcomes.error().kind, ErrorKind::timeout);
  EXPECT_NE(outcomes.error().message.find("power on: 1 of 1 vCenter tasks still running"), std::string::npos)
      << outcomes.error().message;
}

}  // namespace
