// Status errors, watch lines and list responses decoded (protocol/kube/status_error.hpp, watch_decode.hpp).
#include "protocol/kube/watch_decode.hpp"

#include <gtest/gtest.h>

#include "protocol/kube/status_error.hpp"

namespace bootstorm::kube {
namespace {
using nlohmann::json;

TEST(StatusErrors, KindStatusAndMessageComeFromTheStatusObject) {
  Error e = status_error(
      409,
      R"({"kind":"Status","apiVersion":"v1","status":"Failure","message":"Operation cannot be fulfilled on virtualmachine.kubevirt.io \"vm1\": VM is already running","reason":"Conflict","code":409})",
      "starting vm1");
  EXPECT_EQ(e.kind, ErrorKind::conflict);
  EXPECT_EQ(e.status, 409);
  EXPECT_NE(e.message.find("VM is already running"), std::string::npos);
  EXPECT_EQ(status_error(401, "{}", "x").kind, ErrorKind::auth);
  Error forbidden = status_error(
      403,
      R"({"kind":"Status","reason":"Forbidden","message":"plans.forklift.konveyor.io is forbidden: User \"x\" cannot create resource \"plans\"","code":403})",
      "creating Plan ns/p");
  EXPECT_EQ(forbidden.kind, ErrorKind::auth);
  EXPECT_NE(forbidden.message.find("cannot create resource"), std::string::npos) << forbidden.message;
  EXPECT_NE(forbidden.hint.find("kubectl auth can-i --list"), std::string::npos) << forbidden.hint;
  EXPECT_EQ(status_error(404, "not json", "x").kind, ErrorKind::not_found);
}

// kube-apiserver's own answers (v1.34) when admission, not RBAC, refuses a create.
TEST(StatusErrors, AdmissionRefusalsAreNotCalledRbac) {
  Error terminating = status_error(
      403,
      R"({"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"virtualmachines.kubevirt.io \"vm1\" is forbidden: unable to create new content in namespace ns1 because it is being terminated","reason":"Forbidden","details":{"name":"vm1","group":"kubevirt.io","kind":"virtualmachines","causes":[{"reason":"NamespaceTerminating","message":"namespace ns1 is being terminated","field":"metadata.namespace"}]},"code":403})",
      "creating VirtualMachine ns1/vm1");
  EXPECT_EQ(terminating.kind, ErrorKind::api);
  EXPECT_NE(terminating.hint.find("namespace is being deleted"), std::string::npos) << terminating.hint;
  EXPECT_EQ(terminating.hint.find("RBAC"), std::string::npos) << terminating.hint;
  Error quota = status_error(
      403,
      R"({"kind":"Status","status":"Failure","message":"virtualmachines.kubevirt.io \"vm3\" is forbidden: exceeded quota: desktops, requested: count/virtualmachines.kubevirt.io=1, used: count/virtualmachines.kubevirt.io=2, limited: count/virtualmachines.kubevirt.io=2","reason":"Forbidden","code":403})",
      "creating VirtualMachine ns1/vm3");
  EXPECT_EQ(quota.kind, ErrorKind::api);
  EXPECT_NE(quota.hint.find("ResourceQuota"), std::string::npos) << quota.hint;
  Error uncounted = status_error(
      403,
      R"({"kind":"Status","status":"Failure","message":"virtualmachines.kubevirt.io \"vm1\" is forbidden: status unknown for quota: desktops, resources: count/virtualmachines.kubevirt.io","reason":"Forbidden","code":403})",
      "creating VirtualMachine ns1/vm1");
  EXPECT_NE(uncounted.hint.find("quota controller"), std::string::npos) << uncounted.hint;
}

TEST(WatchLines, DecodesEveryEventType) {
  auto added = decode_watch_line(
      R"({"type":"ADDED","object":{"kind":"VirtualMachineInstance","metadata":{"name":"a","resourceVersion":"17"}}})");
  ASSERT_TRUE(added);
  EXPECT_EQ(added->type, WatchEvent::Type::added);
  EXPECT_EQ(added->resource_version(), "17");
  auto bookmark = decode_watch_line(R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"99"}}})");
  ASSERT_TRUE(bookmark);
  EXPECT_EQ(bookmark->type, WatchEvent::Type::bookmark);
  EXPECT_EQ(bookmark->resource_version(), "99");
  auto gone = decode_watch_line(
      R"J({"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 5 (120)","reason":"Expired","code":410}})J");
  ASSERT_TRUE(gone);
  EXPECT_EQ(gone->type, WatchEvent::Type::error);
  EXPECT_EQ(gone->error_code, 410);
  EXPECT_NE(gone->error_message.find("too old"), std::string::npos);
  auto expired_no_code =
      decode_watch_line(R"({"type":"ERROR","object":{"kind":"Status","reason":"Expired"}})");
  ASSERT_TRUE(expired_no_code);
  EXPECT_EQ(expired_no_code->error_code, 410);
  EXPECT_FALSE(decode_watch_line("{\"type\":\"ADDED\"}"));
  EXPECT_FALSE(decode_watch_line("{\"type\":\"WHAT\",\"object\":{}}"));
  EXPECT_FALSE(decode_watch_line("garbage"));
}

TEST(WatchLines, CompactedLinesDecodeToTheSameEvent) {
  const std::string line =
      R"({"type":"MODIFIED","object":{"kind":"VirtualMachineInstance","apiVersion":"kubevirt.io/v1",)"
      R"("metadata":{"name":"a","namespace":"ns","resourceVersion":"18","labels":{"x":"} ] \"q\""}},)"
      R"("spec":{"domain":{"devices":{"disks":[{"name":"d"}]}}},"status":{"phase":"Running","nodeName":"w-1",)"
      R"("guestOSInfo":{"id":"fedora"},"conditions":[{"type":"AgentConnected","status":"True"}],)"
      R"("interfaces":[{"ipAddress":"10.0.0.7"}],)"
      R"("phaseTransitionTimestamps":[{"phase":"Running","phaseTransitionTimestamp":"2026-11-30T10:00:05Z"}]}}})";
  auto compact = compact_watch_line(line);
  ASSERT_TRUE(compact);
  EXPECT_LT(compact->size(), line.size());
  EXPECT_EQ(compact->find("spec"), std::string::npos);
  EXPECT_EQ(compact->find("guestOSInfo"), std::string::npos);
  auto from_compact = decode_watch_line(*compact, WatchDecode::milestone_fields);
  auto from_line = decode_watch_line(line, WatchDecode::milestone_fields);
  ASSERT_TRUE(from_compact);
  ASSERT_TRUE(from_line);
  EXPECT_EQ(from_compact->type, from_line->type);
  EXPECT_EQ(from_compact->object, from_line->object);
  // What the scanner does not follow, and ERROR events, are left as they are.
  EXPECT_FALSE(compact_watch_line(R"({"type":"ERROR","object":{"kind":"Status","code":410}})"));
  EXPECT_FALSE(compact_watch_line(R"({"type":"ADDED","object":{"metad\u0061ta":{"name":"b"}}})"));
  EXPECT_FALSE(compact_watch_line(R"({"type":"ADDED","object":{"metadata":{"name":"a"}}} trailing)"));
  EXPECT_FALSE(compact_watch_line("garbage"));
  // A scalar with a quote in it: bracket counting would pair that quote with the next one, so the line has no
  // structure both walks agree on; it is no event either way.
  const std::string quote_in_scalar =
      std::string(R"({"type":"ADDED","object":{"metadata":{"name":"a","x":9)") + std::string("\0\0", 2) +
      R"(T0Z"},"status":{"phase":"Running"}}})";
  EXPECT_FALSE(compact_watch_line(quote_in_scalar));
  EXPECT_FALSE(decode_watch_line(quote_in_scalar, WatchDecode::milestone_fields));
  EXPECT_FALSE(compact_watch_line(R"({"type":"ADDED","object":{"metadata":{"name":"a","x":tru}}})"));
  auto bookmark = compact_watch_line(R"({"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"99"}}})");
  ASSERT_TRUE(bookmark);
  auto decoded = decode_watch_line(*bookmark, WatchDecode::milestone_fields);
  ASSERT_TRUE(decoded);
  EXPECT_EQ(decoded->type, WatchEvent::Type::bookmark);
  EXPECT_EQ(decoded->resource_version(), "99");
}

// CDI records on a DataVolume how it clones (cdi.kubevirt.io/cloneType): the milestone fields keep the
// annotations, not the labels or the spec.
TEST(WatchLines, MilestoneFieldsKeepTheAnnotations) {
  const std::string line =
      R"({"type":"MODIFIED","object":{"kind":"DataVolume","apiVersion":"cdi.kubevirt.io/v1beta1",)"
      R"("metadata":{"name":"dv","namespace":"ns","resourceVersion":"7","labels":{"bootstorm.io/run":"r"},)"
      R"("annotations":{"cdi.kubevirt.io/cloneType":"csi-clone"}},"spec":{"source":{"pvc":{"name":"g"}}},)"
      R"("status":{"phase":"Succeeded","progress":"100.0%"}}})";
  for (const std::string& text : {line, compact_watch_line(line).value_or("")}) {
    auto decoded = decode_watch_line(text, WatchDecode::milestone_fields);
    ASSERT_TRUE(decoded) << text;
    const json& meta = decoded->object["metadata"];
    EXPECT_EQ(meta["annotations"]["cdi.kubevirt.io/cloneType"], "csi-clone") << text;
    EXPECT_FALSE(meta.contains("labels")) << text;
    EXPECT_FALSE(decoded->object.contains("spec")) << text;
  }
}

}  // namespace
}  // namespace bootstorm::kube
