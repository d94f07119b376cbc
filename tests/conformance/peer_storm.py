#!/usr/bin/python3
"""A boot storm driven the way users of the official Kubernetes Python client write one: create Halted
VirtualMachines, PUT `start` for each from a thread pool, and follow the VMIs with `watch.Watch`. No
bootstorm code, no workaround for the lab. The conformance suite runs it at 200 VMs (test_peer_storm.py);
bench/run runs it at 1,000 VMs beside `bootstorm run` on the same lab and compares both against the lab's
ground truth (/_lab/truth).

usage: peer_storm.py --state-dir LAB_STATE_DIR [--kubeconfig FILE] [--vms N] [--threads T] [--namespace NS]
                     [--golden NS/NAME] [--save FILE]
       peer_storm.py --figures SAVED [--tap TAP_JSONL]
--kubeconfig: storm that cluster (a real kube-apiserver with the lab attached: `bootstorm lab attach`) instead
of the lab's own front; the truth still comes from the lab. --save: write the storm and the truth to FILE
instead of printing figures, for --figures once the tap is written (realapi -watch-tap: when the server
flushed each watch event to each client).
Prints one line of key=value figures:
  peerFireSkewMs              first to last start request sent (the client's clock just before each call)
  peerObservationLatenessP50Ms, ...P99Ms, ...MaxMs
                              observed - delivered for `running` (VMI phase Running) and `guest_agent`
                              (condition AgentConnected True): when this client saw the change, against when
                              the lab handed the watch frame carrying it to the socket; through a real
                              server with the tap: distance from when that server wrote and flushed the
                              frame this client saw it in (0 inside that interval)
  peerAfterAcceptedP50Ms, ...P99Ms  (attached lab) observed - when the server accepted the lab's write
  peerRunning, peerAgentConnected  how many VMIs were seen so
"""
import argparse
import concurrent.futures
import json
import math
import os
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from labserve import require_module, vm_manifest  # noqa: E402

kubernetes = require_module("kubernetes", "python3-kubernetes")
from kubernetes import client, config, watch  # noqa: E402

GROUP, VERSION = "kubevirt.io", "v1"


def api_client(kubeconfig, threads):
    configuration = client.Configuration()
    config.load_kube_config(config_file=kubeconfig, client_configuration=configuration)
    configuration.connection_pool_maxsize = max(threads, 4)  # one connection per worker thread
    return client.ApiClient(configuration)


class VmiObserver(threading.Thread):
    """Follows the namespace's VMIs from `resource_version`; stamps the first sight of each milestone."""

    def __init__(self, api, namespace, resource_version, expected):
        super().__init__(daemon=True)
        self.custom = client.CustomObjectsApi(api)
        self.namespace, self.resource_version, self.expected = namespace, resource_version, expected
        self.seen = {}  # name -> {"running": t, "guest_agent": t}
        self.versions = {}  # name -> {"running": resourceVersion of the event it was seen in, ...}
        self.done = threading.Event()
        self.watcher = watch.Watch()
        self.error = None

    def run(self):
        try:
            for event in self.watcher.stream(self.custom.list_namespaced_custom_object, GROUP, VERSION,
                                             self.namespace, "virtualmachineinstances",
                                             resource_version=self.resource_version, timeout_seconds=600):
                now = time.time()
                vmi = event["object"]
                name = vmi["metadata"]["name"]
                status = vmi.get("status", {})
                stamps = self.seen.setdefault(name, {})
                versions = self.versions.setdefault(name, {})
                reached = []
                if status.get("phase") == "Running":
                    reached.append("running")
                if any(c.get("type") == "AgentConnected" and c.get("status") == "True"
                       for c in status.get("conditions", [])):
                    reached.append("guest_agent")
                for milestone in reached:
                    if milestone not in stamps:
                        stamps[milestone] = now
                        versions[milestone] = vmi["metadata"].get("resourceVersion", "")
                if sum(1 for s in self.seen.values() if "guest_agent" in s and "running" in s) >= self.expected:
                    self.done.set()
                    self.watcher.stop()
                    return
        except Exception as e:  # reported by storm()
            self.error = e
        finally:
            self.done.set()


def storm(api, namespace, vms, threads=64, golden=("golden", "tiny-golden"), timeout=600):
    """Creates `vms` Halted VMs, waits for their disks, starts them all from `threads` threads and watches the
    VMIs. Returns {"names", "sent": [start send times], "seen": {name: {milestone: time}}, "versions": {name:
    {milestone: resourceVersion of the event it was first seen in}}}."""
    core, custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name=namespace)))
    names = [f"peer-{i:05d}" for i in range(vms)]
    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        list(pool.map(lambda n: custom.create_namespaced_custom_object(
            GROUP, VERSION, namespace, "virtualmachines", vm_manifest(n, namespace, run_id="peer", golden=golden)),
            names))
    # Every VM Stopped (its DataVolume cloned) before the storm, as a tester waits for the pool to be ready.
    deadline = time.monotonic() + timeout
    while True:
        listed = custom.list_namespaced_custom_object(GROUP, VERSION, namespace, "virtualmachines")
        stopped = sum(1 for vm in listed["items"] if vm.get("status", {}).get("printableStatus") == "Stopped")
        if stopped == vms:
            break
        if time.monotonic() > deadline:
            raise RuntimeError(f"only {stopped} of {vms} VMs became Stopped within {timeout} s")
        time.sleep(0.2)
    vmis = custom.list_namespaced_custom_object(GROUP, VERSION, namespace, "virtualmachineinstances")
    observer = VmiObserver(api, namespace, vmis["metadata"]["resourceVersion"], vms)
    observer.start()
    sent = [0.0] * vms
    barrier = threading.Barrier(min(threads, vms))

    def start(index):
        if index < barrier.parties:
            barrier.wait()  # the first wave leaves together
        sent[index] = time.time()
        api.call_api(f"/apis/subresources.kubevirt.io/v1/namespaces/{namespace}/virtualmachines/{names[index]}/start",
                     "PUT", header_params={"Content-Type": "application/json", "Accept": "application/json"},
                     body={}, auth_settings=["BearerToken"], _preload_content=False)

    with concurrent.futures.ThreadPoolExecutor(threads) as pool:
        list(pool.map(start, range(vms)))
    observer.done.wait(timeout)
    observer.watcher.stop()
    if observer.error:
        raise observer.error
    return {"names": names, "sent": sent, "seen": observer.seen, "versions": observer.versions}


def pct(values, p):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, max(0, math.ceil(p * len(v)) - 1))]


def load_tap(path):
    """{(name, resourceVersion): (t0, t)} of the first flush of each event to a client other than bootstorm's
    (the peer's watch; the attached lab's is bootstorm-lab-attach)."""
    flushes = {}
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            if r["agent"].startswith("bootstorm"):
                continue
            key = (r["name"], r["rv"])
            if key not in flushes or r["t"] < flushes[key][1]:
                flushes[key] = (r["t0"], r["t"])
    return flushes


def figures(result, truth, tap=None):
    """Fire skew and observation lateness of a storm() result against /_lab/truth: against when the lab's front
    delivered each frame, or, attached to a real server whose tap is given, against that server's flush."""
    by_name = {v["name"]: v for v in truth["vms"]}
    lateness, after_accepted, undelivered = [], [], 0
    for name in result["names"]:
        entry = by_name.get(name, {})
        delivered, visible = entry.get("delivered", {}), entry.get("visible", {})
        for milestone, at in result["seen"].get(name, {}).items():
            if tap is not None:
                flush = tap.get((name, result["versions"][name][milestone]))
                if flush is None:
                    undelivered += 1
                    continue
                lateness.append(at - flush[0] if at < flush[0] else max(0.0, at - flush[1]))
                if milestone in visible:
                    after_accepted.append(at - visible[milestone])
                continue
            if milestone not in delivered:
                undelivered += 1
                continue
            lateness.append(at - delivered[milestone])
    ms = lambda x: f"{x * 1000:.1f}"
    seen = result["seen"].values()
    accepted = (f" peerAfterAcceptedP50Ms={ms(pct(after_accepted, .5))} "
                f"peerAfterAcceptedP99Ms={ms(pct(after_accepted, .99))}" if tap is not None else "")
    return (f"peerFireSkewMs={ms(max(result['sent']) - min(result['sent']))} "
            f"peerObservationLatenessP50Ms={ms(pct(lateness, .5))} peerObservationLatenessP99Ms={ms(pct(lateness, .99))} "
            f"peerObservationLatenessMaxMs={ms(max(lateness) if lateness else float('nan'))} "
            f"peerRunning={sum(1 for s in seen if 'running' in s)} "
            f"peerAgentConnected={sum(1 for s in seen if 'guest_agent' in s)} peerUndelivered={undelivered}"
            + accepted)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--figures", help="the figures of a storm saved with --save (no storm)")
    parser.add_argument("--tap", help="with --figures: realapi's -watch-tap file")
    parser.add_argument("--state-dir", help="the state directory of a running `bootstorm lab serve` or `lab attach`")
    parser.add_argument("--kubeconfig", help="the cluster to storm (default: the lab's own front)")
    parser.add_argument("--save", help="write the storm and the truth to this file instead of printing figures")
    parser.add_argument("--vms", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=64)
    parser.add_argument("--namespace", default="peer")
    parser.add_argument("--golden", default="golden/fedora-golden", help="NAMESPACE/NAME of the golden DataSource")
    args = parser.parse_args()
    if args.figures:
        with open(args.figures) as f:
            saved = json.load(f)
        print(figures(saved["result"], saved["truth"], load_tap(args.tap) if args.tap else None))
        return
    if not args.state_dir:
        parser.error("--state-dir is required (or --figures)")
    with open(os.path.join(args.state_dir, "endpoints.json")) as f:
        endpoints = json.load(f)
    api = api_client(args.kubeconfig or endpoints["kubeconfig"], args.threads)
    result = storm(api, args.namespace, args.vms, args.threads, tuple(args.golden.split("/", 1)))
    lab = api if not args.kubeconfig else api_client(endpoints["kubeconfig"], 1)
    response = lab.call_api("/_lab/truth", "GET", auth_settings=["BearerToken"], _preload_content=False,
                            _return_http_data_only=True)
    truth = json.loads(response.data)
    if args.save:
        with open(args.save, "w") as f:
            json.dump({"result": result, "truth": truth}, f)
        return
    print(figures(result, truth))


if __name__ == "__main__":
    main()
