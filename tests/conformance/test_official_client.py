"""The official Kubernetes Python client (python3-kubernetes) against `bootstorm lab serve`, used the way
benchmark-runner and Ansible's kubernetes.core use it, and raw requests for each API-server semantic the lab
must get right, each with its rejection where a real API server rejects.
"""
import base64
import json
import threading
import time
import unittest

from labserve import LabTestCase, require_module, vm_manifest, wait_for

kubernetes = require_module("kubernetes", "python3-kubernetes")
from kubernetes import client, watch  # noqa: E402

GROUP, VERSION, VMS = "kubevirt.io", "v1", "virtualmachines"


class OfficialClient(LabTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.api = cls.lab.api_client()
        cls.core = client.CoreV1Api(cls.api)
        cls.custom = client.CustomObjectsApi(cls.api)

    def namespace(self, name):
        self.core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=name)))
        return name

    def create_vm(self, ns, name, **kwargs):
        return self.custom.create_namespaced_custom_object(GROUP, VERSION, ns, VMS, vm_manifest(name, ns), **kwargs)

    def settled_vm(self, ns, name):
        """Creates a VM and waits until its disk is cloned and it is Stopped: no status change follows."""
        self.create_vm(ns, name)
        return wait_for(lambda: (lambda vm: vm if vm.get("status", {}).get("printableStatus") == "Stopped" else None)(
            self.custom.get_namespaced_custom_object(GROUP, VERSION, ns, VMS, name)), what=f"VM {name} Stopped")

    # -------------------------------------------------------------- creates without apiVersion and kind

    def test_typed_create_without_kind_takes_it_from_the_path(self):
        # V1Namespace(metadata=...) serialises without apiVersion/kind: a real server takes them from the path.
        ns = self.core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="typed")))
        self.assertEqual(ns.metadata.name, "typed")
        self.assertEqual(ns.kind, "Namespace")
        self.assertEqual(ns.api_version, "v1")
        secret = self.core.create_namespaced_secret(
            "typed", client.V1Secret(metadata=client.V1ObjectMeta(name="creds"), string_data={"user": "u"}))
        self.assertEqual(secret.kind, "Secret")
        self.assertEqual(self.core.read_namespace("typed").status.phase, "Active")

    def test_a_built_in_type_with_the_wrong_kind_is_refused(self):
        status, body = self.lab.raw(self.api, "POST", "/api/v1/namespaces",
                                    body={"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "wrong"}})
        self.assertEqual(status, 400, body)
        status, _ = self.lab.raw(self.api, "GET", "/api/v1/namespaces/wrong")
        self.assertEqual(status, 404)

    def test_a_custom_resource_without_kind_is_refused(self):
        ns = self.namespace("nokind")
        body = vm_manifest("bare", ns, with_kind=False)
        with self.assertRaises(client.ApiException) as raised:
            self.custom.create_namespaced_custom_object(GROUP, VERSION, ns, VMS, body)
        self.assertEqual(raised.exception.status, 400)
        self.assertIn("Object 'Kind' is missing", raised.exception.body)
        created = self.create_vm(ns, "with-kind")
        self.assertEqual(created["kind"], "VirtualMachine")

    # -------------------------------------------------------------- boolean query parameters

    def test_watch_true_as_the_client_sends_it_is_a_watch(self):
        ns = self.namespace("watchtrue")
        events = []

        def consume():
            for event in watch.Watch().stream(self.custom.list_namespaced_custom_object, GROUP, VERSION, ns, VMS,
                                              timeout_seconds=5):
                if event["type"] == "ADDED":  # status updates of the new VMs follow as MODIFIED
                    events.append((event["type"], event["object"]["metadata"]["name"]))
                if len(events) == 2:
                    return

        reader = threading.Thread(target=consume)
        reader.start()
        time.sleep(0.5)
        self.create_vm(ns, "w1")
        self.create_vm(ns, "w2")
        reader.join(10)
        self.assertFalse(reader.is_alive())
        self.assertEqual(events, [("ADDED", "w1"), ("ADDED", "w2")])

    def test_query_booleans_parse_as_the_api_server_does(self):
        ns = self.namespace("parsebool")
        self.create_vm(ns, "b1")
        path = f"/apis/{GROUP}/{VERSION}/namespaces/{ns}/{VMS}"
        for value in ("true", "True", "1", "", "yes"):
            status, body = self.lab.raw(self.api, "GET", path, query={"watch": value, "timeoutSeconds": "1"})
            self.assertEqual(status, 200)
            first = json.loads(body.splitlines()[0]) if isinstance(body, str) else body
            self.assertEqual(first.get("type"), "ADDED", f"watch={value!r} is a watch: {body!r:.300}")
        for value in ("false", "False", "FALSE", "0"):
            status, body = self.lab.raw(self.api, "GET", path, query={"watch": value})
            self.assertEqual(status, 200)
            self.assertEqual(body.get("kind"), "VirtualMachineList", f"watch={value!r} is a list")

    # -------------------------------------------------------------- watch and resourceVersion

    def watch_lines(self, path, timeout=2, **query):
        status, body = self.lab.raw(self.api, "GET", path, query={"watch": "1", "timeoutSeconds": str(timeout),
                                                                   **query})
        self.assertEqual(status, 200, body)
        if isinstance(body, dict):  # one event
            return [body]
        return [json.loads(line) for line in body.splitlines() if line]

    def test_watch_resource_version_semantics(self):
        ns = self.namespace("rv")
        self.settled_vm(ns, "old")
        path = f"/apis/{GROUP}/{VERSION}/namespaces/{ns}/{VMS}"
        listed = self.custom.list_namespaced_custom_object(GROUP, VERSION, ns, VMS)
        rv = listed["metadata"]["resourceVersion"]
        # Unset and "0": the current state as synthetic ADDED events first.
        for query in ({}, {"resourceVersion": "0"}):
            events = self.watch_lines(path, timeout=1, **query)
            self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in events], [("ADDED", "old")],
                             query)
        # A specific version: only what changed after it.
        self.create_vm(ns, "new")
        events = self.watch_lines(path, timeout=1, resourceVersion=rv)
        self.assertEqual([(e["type"], e["object"]["metadata"]["name"]) for e in events if e["type"] == "ADDED"],
                         [("ADDED", "new")])
        # A version older than the history: 410 Expired as an ERROR event (the watch cache answers so). The lab
        # forgets its history on demand; a real server's watch cache keeps serving a version for as long as its
        # window holds it, whatever etcd compacted, so the rest is the lab's alone (a real server's 410 is in
        # tests/integration/realapi: RealApiWatch, LabAttachNoWatchCacheTest).
        if self.lab.real_server:
            return
        self.lab.raw(self.api, "POST", "/_lab/faults", body={"forceGoneRate": 1.0})  # compacts the history
        self.lab.raw(self.api, "POST", "/_lab/faults", body={"forceGoneRate": 0.0})
        events = self.watch_lines(path, timeout=1, resourceVersion=rv)
        self.assertEqual(events[0]["type"], "ERROR")
        self.assertEqual(events[0]["object"]["code"], 410)
        self.assertEqual(events[0]["object"]["reason"], "Expired")
        # The official client's Watch raises it as an ApiException when it cannot recover.
        with self.assertRaises(client.ApiException) as raised:
            for _ in watch.Watch().stream(self.custom.list_namespaced_custom_object, GROUP, VERSION, ns, VMS,
                                          resource_version=rv, timeout_seconds=1):
                pass
        self.assertEqual(raised.exception.status, 410)
        # A version not yet reached is refused on a list (504 Timeout: ResourceVersionTooLarge).
        status, body = self.lab.raw(self.api, "GET", path, query={"resourceVersion": str(10 ** 12),
                                                                  "resourceVersionMatch": "NotOlderThan"})
        self.assertEqual(status, 504, body)
        status, body = self.lab.raw(self.api, "GET", path, query={"watch": "1", "resourceVersion": "abc"})
        self.assertEqual(status, 400, body)

    def test_bookmarks_only_when_allowed(self):
        ns = self.namespace("bookmarks")
        self.create_vm(ns, "bm")
        path = f"/apis/{GROUP}/{VERSION}/namespaces/{ns}/{VMS}"
        # sendInitialEvents with bookmarks: the initial state, then a bookmark marking its end.
        events = self.watch_lines(path, timeout=1, sendInitialEvents="true", resourceVersionMatch="NotOlderThan",
                                  allowWatchBookmarks="true")
        self.assertEqual([e["type"] for e in events[:2]], ["ADDED", "BOOKMARK"])
        self.assertEqual(events[1]["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"], "true")
        self.assertTrue(events[1]["object"]["metadata"]["resourceVersion"])
        for value in ("false", "0"):
            events = self.watch_lines(path, timeout=1, sendInitialEvents="true",
                                      resourceVersionMatch="NotOlderThan", allowWatchBookmarks=value)
            self.assertNotIn("BOOKMARK", [e["type"] for e in events], value)

    # -------------------------------------------------------------- lists

    def test_limit_and_continue_paginate_the_list(self):
        ns = self.namespace("pages")
        for i in range(5):
            self.create_vm(ns, f"p{i}")
        names, token, pages = [], None, 0
        while True:
            kwargs = {"limit": 2}
            if token:
                kwargs["_continue"] = token
            page = self.custom.list_namespaced_custom_object(GROUP, VERSION, ns, VMS, **kwargs)
            pages += 1
            self.assertLessEqual(len(page["items"]), 2)
            names += [item["metadata"]["name"] for item in page["items"]]
            token = page["metadata"].get("continue")
            if pages == 1:
                self.assertEqual(page["metadata"]["remainingItemCount"], 3)
            if not token:
                break
        self.assertEqual(pages, 3)
        self.assertEqual(sorted(names), [f"p{i}" for i in range(5)])
        with self.assertRaises(client.ApiException) as raised:
            self.custom.list_namespaced_custom_object(GROUP, VERSION, ns, VMS, limit=2, _continue="not-a-token")
        self.assertEqual(raised.exception.status, 400)

    def test_field_selectors_on_name_and_namespace(self):
        ns = self.namespace("fields")
        self.create_vm(ns, "f1")
        self.create_vm(ns, "f2")
        page = self.custom.list_namespaced_custom_object(GROUP, VERSION, ns, VMS, field_selector="metadata.name=f2")
        self.assertEqual([i["metadata"]["name"] for i in page["items"]], ["f2"])
        page = self.custom.list_cluster_custom_object(GROUP, VERSION, VMS, field_selector=f"metadata.namespace={ns}")
        self.assertEqual(sorted(i["metadata"]["name"] for i in page["items"]), ["f1", "f2"])
        page = self.custom.list_cluster_custom_object(GROUP, VERSION, VMS,
                                                      field_selector=f"metadata.namespace!={ns}")
        self.assertNotIn(ns, {i["metadata"]["namespace"] for i in page["items"]})
        with self.assertRaises(client.ApiException) as raised:
            self.custom.list_namespaced_custom_object(GROUP, VERSION, ns, VMS, field_selector="spec.running=true")
        self.assertEqual(raised.exception.status, 400)
        self.assertIn("field label not supported", raised.exception.body)

    # -------------------------------------------------------------- writes

    def test_merge_json_and_strategic_patches(self):
        ns = self.namespace("patches")
        self.create_vm(ns, "pt")
        path = f"/apis/{GROUP}/{VERSION}/namespaces/{ns}/{VMS}/pt"
        patched = self.custom.patch_namespaced_custom_object(GROUP, VERSION, ns, VMS, "pt",
                                                             {"metadata": {"labels": {"tier": "gold"}}})
        self.assertEqual(patched["metadata"]["labels"]["tier"], "gold")
        status, body = self.lab.raw(self.api, "PATCH", path,
                                    body=[{"op": "replace", "path": "/metadata/labels/tier", "value": "silver"}],
                                    headers={"Content-Type": "application/json-patch+json"})
        self.assertEqual(status, 200, body)
        self.assertEqual(body["metadata"]["labels"]["tier"], "silver")
        status, body = self.lab.raw(self.api, "PATCH", path,
                                    body=[{"op": "test", "path": "/metadata/labels/tier", "value": "gold"}],
                                    headers={"Content-Type": "application/json-patch+json"})
        self.assertEqual(status, 422, body)  # a failed test operation
        # Strategic merge is for built-in types only: 415 on a custom resource ...
        status, body = self.lab.raw(self.api, "PATCH", path, body={"metadata": {"labels": {"tier": "x"}}},
                                    headers={"Content-Type": "application/strategic-merge-patch+json"})
        self.assertEqual(status, 415, body)
        # ... and what the typed client sends for a built-in type's patch.
        ns_patched = self.core.patch_namespace(ns, {"metadata": {"labels": {"team": "vdi"}}})
        self.assertEqual(ns_patched.metadata.labels["team"], "vdi")

    def test_dry_run_changes_nothing_and_only_all_is_accepted(self):
        ns = self.namespace("dryrun")
        created = self.create_vm(ns, "dry", dry_run="All")
        self.assertEqual(created["metadata"]["name"], "dry")
        self.assertTrue(created["metadata"]["uid"])
        with self.assertRaises(client.ApiException) as raised:
            self.custom.get_namespaced_custom_object(GROUP, VERSION, ns, VMS, "dry")
        self.assertEqual(raised.exception.status, 404)
        before = self.settled_vm(ns, "real")
        self.custom.patch_namespaced_custom_object(GROUP, VERSION, ns, VMS, "real",
                                                   {"metadata": {"labels": {"x": "y"}}}, dry_run="All")
        self.custom.delete_namespaced_custom_object(GROUP, VERSION, ns, VMS, "real", dry_run="All")
        after = self.custom.get_namespaced_custom_object(GROUP, VERSION, ns, VMS, "real")
        self.assertEqual(after["metadata"]["resourceVersion"], before["metadata"]["resourceVersion"])
        with self.assertRaises(client.ApiException) as raised:
            self.create_vm(ns, "bogus", dry_run="Everything")
        self.assertEqual(raised.exception.status, 422)
        with self.assertRaises(client.ApiException):
            self.custom.get_namespaced_custom_object(GROUP, VERSION, ns, VMS, "bogus")

    def test_a_stale_resource_version_conflicts(self):
        ns = self.namespace("stale")
        first = self.settled_vm(ns, "st")  # no controller writes its status between the GET and the PUT below
        self.custom.patch_namespaced_custom_object(GROUP, VERSION, ns, VMS, "st", {"metadata": {"labels": {"a": "1"}}})
        first["metadata"]["labels"]["b"] = "2"
        with self.assertRaises(client.ApiException) as raised:
            self.custom.replace_namespaced_custom_object(GROUP, VERSION, ns, VMS, "st", first)
        self.assertEqual(raised.exception.status, 409)
        self.assertEqual(json.loads(raised.exception.body)["reason"], "Conflict")
        current = self.custom.get_namespaced_custom_object(GROUP, VERSION, ns, VMS, "st")
        current["metadata"]["labels"]["b"] = "2"
        replaced = self.custom.replace_namespaced_custom_object(GROUP, VERSION, ns, VMS, "st", current)
        self.assertEqual(replaced["metadata"]["labels"]["b"], "2")

    def test_propagation_policy_on_delete(self):
        ns = self.namespace("propagation")
        dvs = f"/apis/cdi.kubevirt.io/v1beta1/namespaces/{ns}/datavolumes"

        def dv_names():
            status, body = self.lab.raw(self.api, "GET", dvs)
            self.assertEqual(status, 200, body)
            return {i["metadata"]["name"]: i for i in body["items"]}

        for name in ("orphan", "background", "foreground"):
            self.create_vm(ns, name)
        wait_for(lambda: len(dv_names()) == 3, what="the VMs' DataVolumes")
        # The garbage collector acts after the answer (the lab's at once, a cluster's soon after): what each
        # propagation leaves is waited for.
        def vm_gone(name):
            try:
                self.custom.get_namespaced_custom_object(GROUP, VERSION, ns, VMS, name)
                return False
            except client.ApiException as e:
                return e.status == 404

        # Orphan: the VM goes, its DataVolume stays without the owner reference.
        self.custom.delete_namespaced_custom_object(GROUP, VERSION, ns, VMS, "orphan", propagation_policy="Orphan")
        wait_for(lambda: vm_gone("orphan"), what="the orphaning VM gone")
        wait_for(lambda: "ownerReferences" not in dv_names()["orphan-root"]["metadata"],
                 what="orphan-root without its owner reference")
        self.assertIn("orphan-root", dv_names())
        # Background: the VM and what it owns go.
        self.custom.delete_namespaced_custom_object(GROUP, VERSION, ns, VMS, "background",
                                                    propagation_policy="Background")
        wait_for(lambda: "background-root" not in dv_names(), what="background-root gone")
        # Foreground: the answer is the VM marked for deletion; then it and its dependents are gone.
        answer = self.custom.delete_namespaced_custom_object(GROUP, VERSION, ns, VMS, "foreground",
                                                             propagation_policy="Foreground")
        self.assertIn("foregroundDeletion", answer["metadata"]["finalizers"])
        self.assertTrue(answer["metadata"]["deletionTimestamp"])
        wait_for(lambda: "foreground-root" not in dv_names() and vm_gone("foreground"),
                 what="foreground-root, then its VM, gone")
        # Anything else is refused and deletes nothing.
        self.create_vm(ns, "kept")
        with self.assertRaises(client.ApiException) as raised:
            self.custom.delete_namespaced_custom_object(GROUP, VERSION, ns, VMS, "kept", propagation_policy="Sideways")
        self.assertEqual(raised.exception.status, 422)
        self.assertEqual(self.custom.get_namespaced_custom_object(GROUP, VERSION, ns, VMS, "kept")["metadata"]["name"],
                         "kept")

    # -------------------------------------------------------------- server-side printing

    def test_tables_carry_kubevirt_printer_columns(self):
        ns = self.namespace("tables")
        self.create_vm(ns, "tb")
        accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"
        status, table = self.lab.raw(self.api, "GET", f"/apis/{GROUP}/{VERSION}/namespaces/{ns}/{VMS}",
                                     headers={"Accept": accept})
        self.assertEqual(status, 200, table)
        self.assertEqual(table["kind"], "Table")
        self.assertEqual([c["name"] for c in table["columnDefinitions"]], ["Name", "Age", "Status", "Ready"])
        self.assertEqual(table["rows"][0]["cells"][0], "tb")
        self.assertEqual(table["rows"][0]["object"]["kind"], "PartialObjectMetadata")
        status, body = self.lab.raw(self.api, "GET", f"/apis/{GROUP}/{VERSION}/namespaces/{ns}/{VMS}",
                                    headers={"Accept": "application/vnd.kubernetes.protobuf"})
        self.assertEqual(status, 406, body)


if __name__ == "__main__":
    unittest.main()
