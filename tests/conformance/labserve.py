"""A `bootstorm lab serve` child for the conformance suite, and what its tests share.

The suite runs under Debian's /usr/bin/python3, where python3-kubernetes and python3-openshift live. The
lab listens on ephemeral loopback ports and writes endpoints.json (URLs, kubeconfig, CA file, token) into
its state directory once it listens; Lab waits for that file. BOOTSTORM_BINARY names the bootstorm
executable (CMake passes it).

With BOOTSTORM_CONFORMANCE_SERVER=realapi (and BOOTSTORM_REALAPI naming tests/support/realapi's binary) the
same tests run against a real kube-apiserver with the suite's CRDs and RBAC, the lab attached to it as its
KubeVirt and CDI controllers (`bootstorm lab attach`): AttachedLab has Lab's surface, the server's for the API
and the lab's for /_lab/ (its truth and faults). `self.lab.real_server` tells a test which one it has.
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


def client_configuration(kubeconfig):
    """The official client's Configuration from a kubeconfig (server, CA file, bearer token)."""
    kubernetes = require_module("kubernetes", "python3-kubernetes")
    config = kubernetes.client.Configuration()
    kubernetes.config.load_kube_config(config_file=kubeconfig, client_configuration=config)
    return config


def api_client_for(kubeconfig, **configuration):
    """An official-client ApiClient from a kubeconfig, with `configuration`'s attributes set on top."""
    kubernetes = require_module("kubernetes", "python3-kubernetes")
    config = client_configuration(kubeconfig)
    for key, value in configuration.items():
        setattr(config, key, value)
    return kubernetes.client.ApiClient(config)


def wait_for_json(path, proc, timeout, stderr, complete=lambda _: True):
    """The JSON file `path` once `proc` wrote it whole (`complete` of it holds); a RuntimeError with `stderr()`
    when `proc` exits first or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"{' '.join(proc.args[:3])} exited with {proc.returncode}: {stderr()}")
        try:
            with open(path) as f:
                written = json.load(f)
            if complete(written):
                return written
        except (OSError, ValueError):
            pass  # not written yet, or still being written
        time.sleep(0.02)
    raise RuntimeError(f"no {path} within {timeout} s: {stderr()}")


class Lab:
    """`bootstorm lab serve --lab LAB` on loopback port 0, with its state and logs in a temporary folder."""

    real_server = False

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
        self.endpoints = wait_for_json(
            os.path.join(self.state, "endpoints.json"), self.proc, timeout, self.stderr,
            complete=lambda e: all(isinstance(e.get(k), str) for k in ("kube", "kubeconfig", "caFile", "kubeToken")))
        self.kubeconfig = self.endpoints["kubeconfig"]
        self.kube_url = self.endpoints["kube"]
        self.ca_file = self.endpoints["caFile"]
        self.token = self.endpoints["kubeToken"]

    def stderr(self):
        self._err.flush()
        with open(os.path.join(self.dir, "lab.err"), errors="replace") as f:
            return f.read()[-4000:]

    def api_client(self, **configuration):
        """An official-client ApiClient from the lab's kubeconfig (CA file and bearer token)."""
        return api_client_for(self.kubeconfig, **configuration)

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
        # A protobuf answer (kube-apiserver's Status for a client that accepts only protobuf) stays as text.
        text = data.decode(errors="replace") if isinstance(data, bytes) else (data or "")
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


class AttachedLab:
    """tests/support/realapi (kube-apiserver and etcd; the suite's CRDs, deploy/kubernetes's namespace and RBAC)
    with `bootstorm lab attach --lab LAB` as its KubeVirt and CDI controllers, in a temporary folder: Lab's
    surface, with the server's administrator as the API's user; requests under /_lab/ go to the lab."""

    real_server = True

    def __init__(self, lab="small", timeout=120):
        binary, realapi = os.environ.get("BOOTSTORM_BINARY"), os.environ.get("BOOTSTORM_REALAPI")
        if not binary or not os.access(binary, os.X_OK):
            raise RuntimeError(f"BOOTSTORM_BINARY={binary!r} is not an executable bootstorm")
        if not realapi or not os.access(realapi, os.X_OK):
            raise RuntimeError(f"BOOTSTORM_REALAPI={realapi!r} is not tests/support/realapi's binary")
        source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
        manifests = []
        for folder in ("tests/support/realapi/crds", "tests/data/api-specs/forklift"):
            manifests += sorted(os.path.join(source, folder, f) for f in os.listdir(os.path.join(source, folder))
                                if f.endswith(".yaml"))
        manifests += [os.path.join(source, "deploy/kubernetes", f) for f in ("namespace.yaml", "rbac.yaml")]
        self.dir = tempfile.mkdtemp(prefix="bootstorm-conformance-realapi-")
        self.state = os.path.join(self.dir, "lab")
        self._logs = [open(os.path.join(self.dir, name), "wb") for name in ("realapi.out", "realapi.err", "lab.log")]
        argv = [realapi, "-dir", os.path.join(self.dir, "state"), "-stdin"]
        for manifest in manifests:
            argv += ["-apply", manifest]
        self.server = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=self._logs[0], stderr=self._logs[1])
        self.proc = None
        started = wait_for_json(os.path.join(self.dir, "state", "endpoints.json"), self.server, timeout, self.stderr)
        self.kubeconfig = started["kubeconfig"]
        self.kube_url = started["kube"]
        self.ca_file = started["caFile"]
        self.proc = subprocess.Popen(
            [binary, "lab", "attach", "--lab", lab, "--kubeconfig", self.kubeconfig, "--state-dir", self.state],
            stdin=subprocess.DEVNULL, stdout=self._logs[2], stderr=subprocess.STDOUT)
        self.endpoints = wait_for_json(os.path.join(self.state, "endpoints.json"), self.proc, timeout, self.stderr)
        self.token = client_configuration(self.kubeconfig).api_key.get("authorization", "").removeprefix("Bearer ")
        self._lab_api = None

    def stderr(self):
        text = ""
        for log in self._logs:
            log.flush()
            with open(log.name, errors="replace") as f:
                text += f"--- {os.path.basename(log.name)}\n" + f.read()[-3000:]
        return text

    api_client = Lab.api_client

    def lab_api(self):
        """An ApiClient of the lab's own front (its kubeconfig), for /_lab/."""
        if self._lab_api is None:
            self._lab_api = api_client_for(self.endpoints["kubeconfig"])
        return self._lab_api

    def raw(self, api, method, path, body=None, headers=None, query=None):
        if path.startswith("/_lab/"):
            api = self.lab_api()
        return Lab.raw(self, api, method, path, body, headers, query)

    truth = Lab.truth

    def close(self, keep=False):
        for proc in (self.proc, self.server):
            if proc is None or proc.poll() is not None:
                continue
            proc.terminate()
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
        for log in self._logs:
            log.close()
        if keep:
            print(f"kept the server's and the lab's folder {self.dir} for inspection", file=sys.stderr)
        else:
            shutil.rmtree(self.dir, ignore_errors=True)


def make_lab(profile):
    """The lab's own front, or (BOOTSTORM_CONFORMANCE_SERVER=realapi) a real kube-apiserver with it attached."""
    server = os.environ.get("BOOTSTORM_CONFORMANCE_SERVER", "lab")
    if server == "realapi":
        return AttachedLab(profile)
    if server != "lab":
        raise RuntimeError(f"BOOTSTORM_CONFORMANCE_SERVER={server!r}: lab or realapi")
    return Lab(profile)


class LabTestCase(unittest.TestCase):
    """One lab per test class; kept on disk when a test of the class failed."""

    lab_profile = "small"

    @classmethod
    def setUpClass(cls):
        cls.lab = make_lab(cls.lab_profile)
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
