#!/usr/bin/env python3
"""The vSphere peer: a boot storm written the way VDI engineers write one from pyVmomi's community samples, so
that bench/run can set bootstorm's figures beside it on the same lab (or vCenter simulator) in the same run.

  - linked clones of a template (a snapshot of its own, diskMoveType createNewChildDiskBacking), CloneVM_Task
    from a thread pool, round-robin over the hosts, each thread reading its task's info every half second
    until it ends (wait_for_task below);
  - the power-on: a PowerOnVM_Task per VM from --threads threads (--power-on each; the first wave waits at a
    barrier so that it leaves together), or one Datacenter.PowerOnMultiVM_Task (--power-on multi);
  - observed by a second session: a PropertyCollector filter over a ContainerView of every VM, and
    WaitForUpdatesEx in a loop, from before the power-on until each clone is ready.

usage: vsphere_peer.py --endpoints FILE | --vcsim FILE   [--vms N] [--threads T] [--power-on each|multi]
                       [--ready running|guest_agent] [--prefix NAME] [--hosts H1,H2] [--timeout S]
  --endpoints: a `bootstorm lab serve` state directory's endpoints.json (its /_lab/truth gives the lateness);
  --vcsim: the first line tests/support/vcsim printed (no truth there: lateness is not measured).
Prints one line of key=value figures, each prefixed `peer`:
  FireSkewMs            first to last power-on request sent (this client's clock just before each call)
  ReceivedSpreadMs      first to last power-on as the lab received them (truth: startReceived)
  LatenessP50Ms, P99Ms, MaxMs
                        |seen - delivered| for running (runtime.powerState poweredOn), guest_agent
                        (guest.toolsRunningStatus guestToolsRunning) and ip_assigned (guest.ipAddress): when
                        this client saw the change against when the lab handed the update set carrying it to
                        the socket; the same figure as bench/storm_accuracy.py's observation error
  Ready                 clones seen ready; RequestsPerVm, StormRequestsPerVm (from the power-on on)
  ProvisioningS, WallS, PeakRssMB
pyVmomi is the one bench/peer/requirements.txt pins (`deploy/setup bench` puts it in build/bench-venv).
"""
import argparse
import concurrent.futures
import json
import os
import resource
import ssl
import sys
import threading
import time
import urllib.request

from pyVim.connect import Disconnect, SmartConnect
from pyVmomi import SoapAdapter, vim, vmodl

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from storm_accuracy import pct  # noqa: E402  the same percentile as bootstorm's figures

PC = vmodl.query.PropertyCollector
MILESTONES = {"runtime.powerState": ("running", "poweredOn"),
              "guest.toolsRunningStatus": ("guest_agent", "guestToolsRunning")}


class RequestCounter:
    """Counts the SOAP calls of every session (pyVmomi sends each through SoapStubAdapter.InvokeMethod)."""

    def __init__(self):
        self.count = 0
        self.lock = threading.Lock()
        invoke = SoapAdapter.SoapStubAdapter.InvokeMethod
        counter = self

        def counted(stub, mo, info, args, outerStub=None):
            with counter.lock:
                counter.count += 1
            return invoke(stub, mo, info, args, outerStub)

        SoapAdapter.SoapStubAdapter.InvokeMethod = counted


def connect(target, pool):
    context = ssl.create_default_context(cafile=target["caFile"])  # verified, as against a real vCenter
    host, port = target["sdk"].split("//")[1].split("/")[0].rsplit(":", 1)
    si = SmartConnect(host=host, port=int(port), user=target["username"], pwd=target["password"],
                      sslContext=context)
    si._stub.poolSize = pool  # one kept-alive connection per thread (the default keeps 5 and opens the rest anew)
    return si


def collect(si, kind, paths):
    """{moref: {path: value}} of every object of `kind` (the community samples' collect_properties)."""
    content = si.RetrieveContent()
    view = content.viewManager.CreateContainerView(content.rootFolder, [kind], True)
    spec = PC.FilterSpec(objectSet=[PC.ObjectSpec(obj=view, skip=True, selectSet=[
        PC.TraversalSpec(name="view", path="view", skip=False, type=vim.view.ContainerView)])],
        propSet=[PC.PropertySpec(type=kind, pathSet=paths)])
    out = {}
    result = content.propertyCollector.RetrievePropertiesEx([spec], PC.RetrieveOptions())
    while result:
        for obj in result.objects:
            out[obj.obj] = {p.name: p.val for p in obj.propSet}
        result = content.propertyCollector.ContinueRetrievePropertiesEx(result.token) if result.token else None
    view.Destroy()
    return out


class Observer(threading.Thread):
    """WaitForUpdatesEx over a ContainerView of every VM, in its own session; stamps each change's first sight."""

    def __init__(self, si, ready):
        super().__init__(daemon=True)
        self.si = si
        # Ready at `running`: that alone; at `guest_agent`: the address too, which the guest reports after its
        # Tools, so that the lateness covers the same milestones as bootstorm's journal.
        self.until = ["running"] if ready == "running" else ["running", "guest_agent", "ip_assigned"]
        self.watched = set()  # moref ids of the clones
        self.seen = {}  # moref id -> {milestone: unix time}
        self.armed = threading.Event()  # the first answer (the full state) is in
        self.done = threading.Event()
        self.stop = False
        self.error = None

    def run(self):
        try:
            content = self.si.RetrieveContent()
            view = content.viewManager.CreateContainerView(content.rootFolder, [vim.VirtualMachine], True)
            collector = content.propertyCollector.CreatePropertyCollector()
            collector.CreateFilter(PC.FilterSpec(
                objectSet=[PC.ObjectSpec(obj=view, skip=True, selectSet=[
                    PC.TraversalSpec(name="view", path="view", skip=False, type=vim.view.ContainerView)])],
                propSet=[PC.PropertySpec(type=vim.VirtualMachine,
                                         pathSet=["runtime.powerState", "guest.toolsRunningStatus",
                                                  "guest.ipAddress"])]), True)
            version = ""
            while not self.stop:
                update = collector.WaitForUpdatesEx(version, PC.WaitOptions(maxWaitSeconds=10))
                now = time.time()
                self.armed.set()
                if update is None:
                    continue
                version = update.version
                for filter_update in update.filterSet:
                    for change in filter_update.objectSet:
                        stamps = self.seen.setdefault(change.obj._moId, {})
                        for prop in change.changeSet:
                            if prop.name in MILESTONES and prop.val == MILESTONES[prop.name][1]:
                                stamps.setdefault(MILESTONES[prop.name][0], now)
                            elif prop.name == "guest.ipAddress" and prop.val:
                                stamps.setdefault("ip_assigned", now)
                if self.watched and all(all(m in self.seen.get(vm, {}) for m in self.until) for vm in self.watched):
                    break
            collector.Destroy()
            view.Destroy()
        except Exception as e:  # reported by main()
            self.error = e
        finally:
            self.armed.set()
            self.done.set()


def wait_for_task(task, what):
    """The task's result once it ends, reading its info every half second (the samples' wait_for_task).
    pyVim.task.WaitForTask is not used: from many threads it shares the session's one PropertyCollector, and
    pyVmomi 9.1.1.0's fails on a task it sees running whose info.name is a method pyVmomi does not know
    (vcsim's PowerOnMultiVM_Task: AttributeError in GetTaskStatus)."""
    while True:
        info = task.info
        if info.state == vim.TaskInfo.State.success:
            return info.result
        if info.state == vim.TaskInfo.State.error:
            raise RuntimeError(f"{what}: {info.error.msg}")
        time.sleep(0.5)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--endpoints", help="endpoints.json of a running `bootstorm lab serve`")
    where.add_argument("--vcsim", help="the JSON line tests/support/vcsim printed")
    parser.add_argument("--vms", type=int, default=1000)
    parser.add_argument("--threads", type=int, default=64)
    parser.add_argument("--power-on", choices=["each", "multi"], default="each")
    parser.add_argument("--ready", choices=["running", "guest_agent"], default="guest_agent")
    parser.add_argument("--prefix", default="peer")
    parser.add_argument("--hosts", help="comma-separated host names to clone onto (default: every host)")
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()
    began = time.time()
    if args.endpoints:
        e = json.load(open(args.endpoints))
        target = {"sdk": e["vcenter"] + "/sdk", "username": e["username"], "password": e["password"],
                  "caFile": e["caFile"], "template": "tiny-golden", "truth": e["vcenter"] + "/_lab/truth"}
    else:
        v = json.loads(open(args.vcsim).readline())
        target = {"sdk": v["url"], "username": v["username"], "password": v["password"], "caFile": v["caFile"],
                  "template": v["templateVm"]["name"], "truth": None}
    counter = RequestCounter()
    si = connect(target, args.threads)
    content = si.RetrieveContent()
    vms = collect(si, vim.VirtualMachine, ["name"])
    template = next(vm for vm, p in vms.items() if p.get("name") == target["template"])
    hosts = sorted(collect(si, vim.HostSystem, ["name", "parent"]).items(), key=lambda h: h[1]["name"])
    if args.hosts:
        hosts = [h for h in hosts if h[1]["name"] in args.hosts.split(",")]
        if not hosts:
            sys.exit(f"vsphere_peer.py: none of the hosts {args.hosts} is in {target['sdk']}")
    pools = {}
    for host, props in hosts:
        if props["parent"] not in pools:  # one read of a cluster's pool, however many hosts it has
            pools[props["parent"]] = props["parent"].resourcePool
    datacenter = next(e for e in content.rootFolder.childEntity if isinstance(e, vim.Datacenter))

    snapshot_task = template.CreateSnapshot_Task(name=f"{args.prefix}-base", description="the peer's linked clones",
                                                 memory=False, quiesce=False)
    snapshot = wait_for_task(snapshot_task, f"taking the snapshot {args.prefix}-base")
    folder = datacenter.vmFolder
    names = [f"{args.prefix}-{i:05d}" for i in range(args.vms)]

    def clone(index):
        host = hosts[index % len(hosts)]
        spec = vim.vm.CloneSpec(location=vim.vm.RelocateSpec(host=host[0], pool=pools[host[1]["parent"]],
                                                             diskMoveType="createNewChildDiskBacking"),
                                snapshot=snapshot, powerOn=False, template=False)
        return wait_for_task(template.CloneVM_Task(folder=folder, name=names[index], spec=spec),
                             f"cloning {names[index]}")

    with concurrent.futures.ThreadPoolExecutor(args.threads) as pool:
        clones = list(pool.map(clone, range(args.vms)))
    provisioned = time.time()

    observer_si = connect(target, 1)
    observer = Observer(observer_si, args.ready)
    observer.watched = {vm._moId for vm in clones}
    observer.start()
    observer.armed.wait(args.timeout)
    storm_requests = counter.count
    sent = [0.0] * args.vms
    if args.power_on == "multi":
        sent = [time.time()] * args.vms
        wait_for_task(datacenter.PowerOnMultiVM_Task(vm=clones), "PowerOnMultiVM_Task")
    else:
        barrier = threading.Barrier(min(args.threads, args.vms))

        def power_on(index):
            if index < barrier.parties:
                barrier.wait()  # the first wave leaves together
            sent[index] = time.time()
            return clones[index].PowerOnVM_Task()

        with concurrent.futures.ThreadPoolExecutor(args.threads) as pool:
            list(pool.map(power_on, range(args.vms)))  # a power-on that fails is a clone never seen ready
    observer.done.wait(max(1.0, args.timeout - (time.time() - began)))
    observer.stop = True
    if observer.error:
        raise observer.error
    storm_requests = counter.count - storm_requests
    ended = time.time()

    ms = lambda x: f"{x * 1000:.1f}"
    ready = sum(1 for vm in clones if args.ready in observer.seen.get(vm._moId, {}))
    figures = [f"peerPowerOn={args.power_on}", f"peerReady={ready}/{args.vms}",
               f"peerFireSkewMs={ms(max(sent) - min(sent))}"]
    if target["truth"]:
        context = ssl.create_default_context(cafile=target["caFile"])
        with urllib.request.urlopen(target["truth"], context=context) as r:
            truth = {v["name"]: v for v in json.load(r)["vms"]}
        lateness, received, undelivered = [], [], 0
        for vm, name in zip(clones, names):
            t = truth.get(name, {})
            if "startReceived" in t:
                received.append(t["startReceived"])
            for milestone, at in observer.seen.get(vm._moId, {}).items():
                delivered = t.get("delivered", {}).get(milestone)
                if delivered is None:
                    undelivered += 1
                    continue
                lateness.append(abs(at - delivered))  # as storm_accuracy.py's observation error
        figures += [f"peerReceivedSpreadMs={ms(max(received) - min(received)) if received else 'nan'}",
                    f"peerLatenessP50Ms={ms(pct(lateness, .5))}", f"peerLatenessP99Ms={ms(pct(lateness, .99))}",
                    f"peerLatenessMaxMs={ms(max(lateness) if lateness else float('nan'))}",
                    f"peerMilestones={len(lateness)}", f"peerUndelivered={undelivered}"]
    figures += [f"peerRequestsPerVm={counter.count / args.vms:.2f}",
                f"peerStormRequestsPerVm={storm_requests / args.vms:.3f}",
                f"peerProvisioningS={provisioned - began:.1f}", f"peerWallS={ended - began:.1f}",
                f"peerPeakRssMB={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}"]
    print(" ".join(figures))
    Disconnect(observer_si)
    Disconnect(si)


if __name__ == "__main__":
    main()
