"""The dynamic client (python3-openshift's DynamicClient over python3-kubernetes) against `bootstorm lab serve`:
discovery of KubeVirt's, CDI's and the core types, then create, get, list, patch, watch, the start
subresource and delete, as Ansible's kubevirt and kubernetes.core modules drive a cluster.
"""
import os
import tempfile
import threading
import time
import unittest

from labserve import LabTestCase, require_module, vm_manifest, wait_for

require_module("kubernetes", "python3-kubernetes")
dynamic = require_module("openshift.dynamic", "python3-openshift")
from kubernetes.dynamic.exceptions import DynamicApiError, ResourceNotFoundError  # noqa: E402


class DynamicClient(LabTestCase):
    @classmethod
    def setUpClass(cls):
        super().setUpClass()
        cls.cache = tempfile.mkdtemp(prefix="bootstorm-discovery-")
        cls.dyn = dynamic.DynamicClient(cls.lab.api_client(), cache_file=os.path.join(cls.cache, "discovery.json"))
        cls.vms = cls.dyn.resources.get(api_version="kubevirt.io/v1", kind="VirtualMachine")
        cls.vmis = cls.dyn.resources.get(api_version="kubevirt.io/v1", kind="VirtualMachineInstance")
        cls.namespaces = cls.dyn.resources.get(api_version="v1", kind="Namespace")

    def test_discovery_finds_every_served_type(self):
        for api_version, kind in (("v1", "Namespace"), ("v1", "Node"), ("v1", "Secret"),
                                  ("v1", "PersistentVolumeClaim"), ("kubevirt.io/v1", "VirtualMachine"),
                                  ("kubevirt.io/v1", "VirtualMachineInstance"),
                                  ("cdi.kubevirt.io/v1beta1", "DataVolume"), ("cdi.kubevirt.io/v1beta1", "DataSource"),
                                  ("forklift.konveyor.io/v1beta1", "Plan")):
            resource = self.dyn.resources.get(api_version=api_version, kind=kind)
            self.assertEqual(resource.kind, kind)
        self.assertTrue(self.vms.namespaced)
        self.assertFalse(self.namespaces.namespaced)
        self.assertIn("vm", self.vms.short_names)
        with self.assertRaises(ResourceNotFoundError):
            self.dyn.resources.get(api_version="kubevirt.io/v1", kind="NoSuchKind")

    def test_a_vm_from_create_to_delete(self):
        ns = "dynamic"
        self.dyn.create(self.namespaces, body={"metadata": {"name": ns}})
        created = self.dyn.create(self.vms, body=vm_manifest("dyn-vm", ns), namespace=ns)
        self.assertEqual(created.metadata.name, "dyn-vm")
        got = self.dyn.get(self.vms, name="dyn-vm", namespace=ns)
        self.assertEqual(got.metadata.uid, created.metadata.uid)
        listed = self.dyn.get(self.vms, namespace=ns, label_selector="bootstorm.io/run=conformance")
        self.assertEqual([item.metadata.name for item in listed.items], ["dyn-vm"])
        wait_for(lambda: (self.dyn.get(self.vms, name="dyn-vm", namespace=ns).status or {}).get("printableStatus")
                 == "Stopped", what="the VM to be Stopped")

        # The dynamic client's default patch is a strategic merge: a real server refuses it on a custom resource.
        with self.assertRaises(DynamicApiError) as raised:
            self.dyn.patch(self.vms, body={"metadata": {"labels": {"x": "1"}}}, name="dyn-vm", namespace=ns)
        self.assertEqual(raised.exception.status, 415)
        patched = self.dyn.patch(self.vms, body={"metadata": {"labels": {"x": "1"}}}, name="dyn-vm", namespace=ns,
                                 content_type="application/merge-patch+json")
        self.assertEqual(patched.metadata.labels["x"], "1")

        # Watch the VMI while the start subresource is called.
        events, stop = [], threading.Event()

        def consume():
            for event in self.dyn.watch(self.vmis, namespace=ns, timeout=10):
                status = event["raw_object"].get("status", {})
                events.append((event["type"], status.get("phase")))
                if status.get("phase") == "Running":
                    stop.set()
                    return

        reader = threading.Thread(target=consume)
        reader.start()
        time.sleep(0.5)
        self.dyn.request("PUT", f"/apis/subresources.kubevirt.io/v1/namespaces/{ns}/virtualmachines/dyn-vm/start",
                         body={})
        reader.join(15)
        self.assertTrue(stop.is_set(), f"no Running VMI seen: {events}")
        self.assertEqual(events[0][0], "ADDED")

        self.dyn.delete(self.vms, name="dyn-vm", namespace=ns)
        with self.assertRaises(DynamicApiError) as raised:
            self.dyn.get(self.vms, name="dyn-vm", namespace=ns)
        self.assertEqual(raised.exception.status, 404)

    @classmethod
    def tearDownClass(cls):
        import shutil
        shutil.rmtree(cls.cache, ignore_errors=True)
        super().tearDownClass()


if __name__ == "__main__":
    unittest.main()
