"""A `bootstorm lab serve` child for the conformance suite, and what its tests share.

The suite runs under Debian's /usr/bin/python3, where python3-kubernetes and python3-openshift live. The
lab listens on ephemeral loopback ports and writes endpoints.json (URLs, kubeconfig, CA file, token) into
its state directory once it listens; Lab waits for that file. BOOTSTORM_BINARY names the bootstorm
executable (CMake passes it).
"""
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import unittest


def tools_required():
    """CI=true or BOOTSTORM_REQUIRE_TOOLS=1: a missing tool fails instead of skipping (tests/README.md)."""
    return os.environ.get("CI") == "true" or os.environ.get("BOOTSTORM_REQUIRE_TOOLS") == "1"


def missing(what, package):
    """Skips the calling test (or module) when `what` is missing, or fails under CI."""
    message = f"{what} is not available: install the Debian package {package} (deploy/setup test installs it)"
    if tools_required():
        raise AssertionError(message)
    raise unittest.SkipTest(message)


def require_module(name, package):
    try:
        return importlib.import_module(name)
    except ImportError:
        missing(f"the Python module {name} (under {sys.executable})", package)


def kubectl_binary():
    """kubectl: $BOOTSTORM_KUBECTL when set (Debian's 1.20 unpacked into the build tree), else the first on PATH."""
    pinned = os.environ.get("BOOTSTORM_KUBECTL")
    if pinned:
        if not os.access(pinned, os.X_OK):
            missing(f"kubectl at BOOTSTORM_KUBECTL={pinned} (deploy/setup test unpacks Debian's kubectl there)",
                    "kubernetes-client")
        return pinned
    found = shutil.which("kubectl")
    if not found:
        missing("kubectl", "kubernetes-client")
    return found


class Lab:
    """`bootstorm lab serve --lab LAB` on loopback port 0, with its state and logs in a temporary folder."""

    def __init__(self, lab="small", timeout=60):
        binary = os.environ.get("BOOTSTORM_BINARY")
        if not binary or not os.access(binary, os.X_OK):
            raise RuntimeError(f"BOOTSTORM_BINARY={binary!r} is not an executable bootstorm")
        self.dir = tempfile.mkdtemp(prefix="bootstorm-conformance-")
        self.state = os.path.join(self.dir, "lab")
        self._out = open(os.path.join(self.dir, "lab.out"), "wb")
        self._err = open(os.path.join(self.dir, "lab.err"), "wb")
        self.proc = subprocess.Popen(
            [binary, "lab", "serve", "--lab", lab, "--state-dir", self.state, "--vcenter-port", "0",
             "--kube-port", "0"], stdin=subprocess.DEVNULL, stdout=self._out, stderr=self._err)
        self.endpoints = self._wait_ready(timeout)
        self.kubeconfig = self.endpoints["kubeconfig"]
        self.kube_url = self.endpoints["kube"]
        self.ca_file = self.endpoints["caFile"]
        self.token = self.endpoints["kubeToken"]

    def _wait_ready(self, timeout):
        path = os.path.join(self.state, "endpoints.json")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"`bootstorm lab serve` exited with {self.proc.returncode}: {self.stderr()}")
            try:
                with open(path) as f:
                    endpoints = json.load(f)
                if all(isinstance(endpoints.get(k), str) for k in ("kube", "kubeconfig", "caFile", "kubeToken")):
                    return endpoints
            except (OSError, ValueError):
                pass  # not written yet, or still being written
            time.sleep(0.02)
        raise RuntimeError(f"`bootstorm lab serve` wrote no {path} within {timeout} s: {self.stderr()}")

    def stderr(self):
        self._err.flush()
        with open(os.path.join(self.dir, "lab.err"), errors="replace") as f:
            return f.read()[-4000:]

    def api_client(self, **configuration):
        """An official-client ApiClient from the lab's kubeconfig (CA file and bearer token)."""
        kubernetes = require_module("kubernetes", "python3-kubernetes")
        config = kubernetes.client.Configuration()
        kubernetes.config.load_kube_config(config_file=self.kubeconfig, client_configuration=config)
        for key, value in configuration.items():
            setattr(config, key, value)
        return kubernetes.client.ApiClient(config)

    def raw(self, api, method, path, body=None, headers=None, query=None):
        """An HTTP request through `api` (an ApiClient): (status, parsed JSON body or text), errors included."""
        kubernetes = require_module("kubernetes", "python3-kubernetes")
        header_params = {"Accept": "application/json"}
        header_params.update(headers or {})
        if body is not None and "Content-Type" not in header_params:
            header_params["Content-Type"] = "application/json"
        try:
            response = api.call_api(path, method, query_params=list((query or {}).items()),
                                    header_params=header_params, body=body, auth_settings=["BearerToken"],
                                    _preload_content=False, _return_http_data_only=True)
            status, data = response.status, response.data
        except kubernetes.client.ApiException as e:
            status, data = e.status, e.body
        text = data.decode() if isinstance(data, bytes) else (data or "")
        try:
            return status, json.loads(text)
        except ValueError:
            return status, text

    def truth(self, api):
        status, body = self.raw(api, "GET", "/_lab/truth")
        if status != 200:
            raise RuntimeError(f"/_lab/truth answered {status}: {body}")
        return body

    def close(self, keep=False):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._out.close()
        self._err.close()
        if keep:
            print(f"kept the lab's folder {self.dir} for inspection", file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


class LabTestCase(unittest.TestCase):
    """One lab per test class; kept on disk when a test of the class failed."""

    lab_profile = "small"

    @classmethod
    def setUpClass(cls):
        cls.lab = Lab(cls.lab_profile)
        cls._failed = False

    @classmethod
    def tearDownClass(cls):
        cls.lab.close(keep=cls._failed)

    def run(self, result=None):
        result = super().run(result)
        if result is not None and (result.failures or result.errors):
            type(self)._failed = True
        return result


def vm_manifest(name, namespace, run_id="conformance", golden=("golden", "tiny-golden"), run_strategy="Halted",
                with_kind=True):
    """A KubeVirt VirtualMachine cloned from the lab's golden DataSource, as a peer tool writes it."""
    body = {
        "metadata": {"name": name, "namespace": namespace, "labels": {"bootstorm.io/run": run_id}},
        "spec": {
            "runStrategy": run_strategy,
            "dataVolumeTemplates": [{
                "metadata": {"name": f"{name}-root"},
                "spec": {"sourceRef": {"kind": "DataSource", "name": golden[1], "namespace": golden[0]},
                         "storage": {"resources": {"requests": {"storage": "1Gi"}}}},
            }],
            "template": {
                "metadata": {"labels": {"kubevirt.io/domain": name}},
                "spec": {
                    "domain": {"cpu": {"cores": 1}, "memory": {"guest": "256Mi"},
                               "devices": {"disks": [{"name": "root", "disk": {"bus": "virtio"}}],
                                           "interfaces": [{"name": "default", "masquerade": {}}]}},
                    "networks": [{"name": "default", "pod": {}}],
                    "volumes": [{"name": "root", "dataVolume": {"name": f"{name}-root"}}],
                },
            },
        },
    }
    if with_kind:
        body = {"apiVersion": "kubevirt.io/v1", "kind": "VirtualMachine", **body}
    return body


def wait_for(predicate, timeout=30, interval=0.05, what="condition"):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout} s waiting for {what}")
