"""kubectl against `bootstorm lab serve`: the first kubectl on PATH, or the one BOOTSTORM_KUBECTL names (ctest
runs this file twice: once more against Debian 12's kubectl 1.20 unpacked into the build tree). Server-side
printing (KubeVirt's and CDI's printer columns, wide columns, a watched table), patches, server dry-run and
cascading deletes, as an operator types them.
"""
import json
import os
import re
import subprocess
import tempfile
import time
import unittest

from labserve import LabTestCase, kubectl_binary, vm_manifest, wait_for


def header(output):
    return output.splitlines()[0].split()


class Kubectl(LabTestCase):
    @classmethod
    def setUpClass(cls):
        cls.binary = kubectl_binary()
        super().setUpClass()
        cls.home = tempfile.mkdtemp(prefix="bootstorm-kubectl-")
        cls.api = cls.lab.api_client()
        version = subprocess.run([cls.binary, "version", "--client", "-o", "json"], capture_output=True, text=True)
        cls.client_version = json.loads(version.stdout)["clientVersion"]["gitVersion"] if version.returncode == 0 \
            else "unknown"

    def kubectl(self, *args, check=True, timeout=60):
        argv = [self.binary, f"--kubeconfig={self.lab.kubeconfig}", f"--cache-dir={self.home}/cache",
                "--request-timeout=20s", *args]
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              env={"HOME": self.home, "PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        if check:
            self.assertEqual(proc.returncode, 0, f"{' '.join(args)} ({self.client_version}):\n{proc.stdout}{proc.stderr}")
        return proc

    def apply_vm(self, ns, name):
        path = os.path.join(self.home, f"{name}.json")
        with open(path, "w") as f:
            json.dump(vm_manifest(name, ns), f)
        self.kubectl("apply", "-f", path)

    def start(self, ns, name):
        status, body = self.lab.raw(self.api, "PUT",
                                    f"/apis/subresources.kubevirt.io/v1/namespaces/{ns}/virtualmachines/{name}/start",
                                    body={})
        self.assertEqual(status, 202, body)

    def test_get_prints_kubevirt_and_cdi_columns(self):
        self.kubectl("create", "namespace", "cols")
        self.apply_vm("cols", "c1")
        wait_for(lambda: "Stopped" in self.kubectl("get", "vm", "-n", "cols").stdout, what="a Stopped VM")
        out = self.kubectl("get", "vm", "-n", "cols").stdout
        self.assertEqual(header(out), ["NAME", "AGE", "STATUS", "READY"], out)
        self.assertRegex(out, r"\nc1\s+\d+[smhd]\S*\s+Stopped\s+False")
        self.start("cols", "c1")
        wait_for(lambda: "Running" in self.kubectl("get", "vmi", "-n", "cols").stdout, what="a Running VMI")
        out = self.kubectl("get", "vmi", "-n", "cols").stdout
        self.assertEqual(header(out), ["NAME", "AGE", "PHASE", "IP", "NODENAME", "READY"], out)
        self.assertRegex(out, r"\nc1\s+\S+\s+Running\s+\d+\.\d+\.\d+\.\d+\s+worker-\d\s+True")
        wide = self.kubectl("get", "vmi", "-n", "cols", "-o", "wide").stdout
        self.assertEqual(header(wide)[-2:], ["LIVE-MIGRATABLE", "PAUSED"], wide)
        out = self.kubectl("get", "dv", "-n", "cols").stdout
        self.assertEqual(header(out), ["NAME", "PHASE", "PROGRESS", "RESTARTS", "AGE"], out)
        self.assertRegex(out, r"\nc1-root\s+Succeeded\s+100\.0%")
        # Several kinds at once, as the user typed it.
        both = self.kubectl("get", "vm,vmi,dv", "-n", "cols").stdout
        for expected in ("virtualmachine.kubevirt.io/c1", "virtualmachineinstance.kubevirt.io/c1",
                         "datavolume.cdi.kubevirt.io/c1-root"):
            self.assertIn(expected, both)
        nodes = self.kubectl("get", "nodes").stdout
        self.assertEqual(header(nodes), ["NAME", "STATUS", "ROLES", "AGE", "VERSION"], nodes)
        self.assertRegex(nodes, r"\nworker-0\s+Ready\s+worker\s+")
        names = self.kubectl("get", "vm", "-n", "cols", "-o", "name").stdout.split()
        self.assertEqual(names, ["virtualmachine.kubevirt.io/c1"])

    def test_watch_prints_table_rows(self):
        self.kubectl("create", "namespace", "watching")
        self.apply_vm("watching", "w1")
        out_path = os.path.join(self.home, "watch.txt")
        with open(out_path, "w") as out:
            watcher = subprocess.Popen(
                [self.binary, f"--kubeconfig={self.lab.kubeconfig}", f"--cache-dir={self.home}/cache", "get",
                 "vmi", "-n", "watching", "-w"], stdout=out, stderr=subprocess.STDOUT,
                env={"HOME": self.home, "PATH": os.environ.get("PATH", "/usr/bin:/bin")})
        try:
            time.sleep(1.5)  # let kubectl list and open its watch
            self.start("watching", "w1")

            def running_row():
                with open(out_path) as f:
                    return re.search(r"\nw1\s+\S+\s+Running\s", f.read())
            wait_for(running_row, timeout=20, what="a Running row in `kubectl get vmi -w`")
        finally:
            watcher.terminate()
            watcher.wait(10)
        with open(out_path) as f:
            text = f.read()
        self.assertEqual(header(text), ["NAME", "AGE", "PHASE", "IP", "NODENAME", "READY"], text)
        headers = [line for line in text.splitlines() if line.startswith("NAME ")]
        self.assertEqual(len(headers), 1, f"the header is printed once:\n{text}")

    def test_patches_dry_run_and_cascading_delete(self):
        self.kubectl("create", "namespace", "writes")
        self.apply_vm("writes", "p1")
        self.kubectl("patch", "vm", "p1", "-n", "writes", "--type", "merge", "-p",
                     '{"metadata": {"labels": {"tier": "gold"}}}')
        self.kubectl("patch", "vm", "p1", "-n", "writes", "--type", "json", "-p",
                     '[{"op": "replace", "path": "/metadata/labels/tier", "value": "silver"}]')
        got = json.loads(self.kubectl("get", "vm", "p1", "-n", "writes", "-o", "json").stdout)
        self.assertEqual(got["metadata"]["labels"]["tier"], "silver")
        refused = self.kubectl("patch", "vm", "p1", "-n", "writes", "--type", "strategic", "-p",
                               '{"metadata": {"labels": {"tier": "x"}}}', check=False)
        self.assertNotEqual(refused.returncode, 0)
        # The server's 415, as kubectl 1.20 ("Error from server (UnsupportedMediaType)") and newer ones ("...
        # is not supported by kubevirt.io/v1, Kind=VirtualMachine") word it; the VM is unchanged.
        self.assertRegex(refused.stderr + refused.stdout,
                         r"UnsupportedMediaType|application/strategic-merge-patch\+json is not supported")
        got = json.loads(self.kubectl("get", "vm", "p1", "-n", "writes", "-o", "json").stdout)
        self.assertEqual(got["metadata"]["labels"]["tier"], "silver")
        # Server-side dry run: answered, nothing created.
        dry = self.kubectl("create", "namespace", "ghost", "--dry-run=server")
        self.assertIn("namespace/ghost created (server dry run)", dry.stdout)
        gone = self.kubectl("get", "namespace", "ghost", check=False)
        self.assertNotEqual(gone.returncode, 0)
        self.assertIn("NotFound", gone.stderr)
        # --cascade=orphan keeps the DataVolume; the default cascade removes it.
        wait_for(lambda: "p1-root" in self.kubectl("get", "dv", "-n", "writes").stdout, what="p1's DataVolume")
        self.kubectl("delete", "vm", "p1", "-n", "writes", "--cascade=orphan")
        self.assertIn("p1-root", self.kubectl("get", "dv", "-n", "writes").stdout)
        self.apply_vm("writes", "p2")
        wait_for(lambda: "p2-root" in self.kubectl("get", "dv", "-n", "writes").stdout, what="p2's DataVolume")
        self.kubectl("delete", "vm", "p2", "-n", "writes")
        # The garbage collector removes it after the VM (a cluster's soon after, the lab's at once).
        wait_for(lambda: "p2-root" not in self.kubectl("get", "dv", "-n", "writes").stdout, what="p2's DataVolume gone")


if __name__ == "__main__":
    unittest.main()
