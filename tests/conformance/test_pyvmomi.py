"""VMware's own vim25 client, pyVmomi (Debian's python3-pyvmomi 6.7), against the lab's /sdk: SmartConnect
agrees on a version from /sdk/vimServiceVersions.xml, logs in, reads the ServiceContent, and Disconnect logs
out, with the faults a vCenter answers for a wrong password and for a session that is gone; container views
read with RetrievePropertiesEx; and a linked-clone storm the way a pyVmomi script runs one: a snapshot, linked
clones (CloneVM_Task), PowerOnMultiVM_Task, the guests watched with WaitForUpdatesEx, Destroy_Task, each task
followed with pyVim.task.WaitForTask (WaitForUpdates and property reads); and the PerformanceManager's
real-time storage statistics of a storm read with QueryPerf. So the lab speaks vim25 as VMware's SDK expects,
not only as bootstorm's client does.
"""
import json
import ssl
import time
import unittest
import urllib.request

from labserve import LabTestCase, require_module

pyVim_connect = require_module("pyVim.connect", "python3-pyvmomi")
pyVim_task = require_module("pyVim.task", "python3-pyvmomi")
pyVmomi = require_module("pyVmomi", "python3-pyvmomi")
vim = pyVmomi.vim
vmodl = pyVmomi.vmodl
PC = vmodl.query.PropertyCollector


class PyVmomi(LabTestCase):
    def connect(self, password=None):
        host, port = self.lab.endpoints["vcenter"].split("//")[1].rsplit(":", 1)
        context = ssl.create_default_context(cafile=self.lab.ca_file)  # verified, as against a real vCenter
        return pyVim_connect.SmartConnect(host=host, port=int(port), user=self.lab.endpoints["username"],
                                          pwd=password or self.lab.endpoints["password"], sslContext=context)

    def sdk_stats(self):
        context = ssl.create_default_context(cafile=self.lab.ca_file)
        with urllib.request.urlopen(self.lab.endpoints["vcenter"] + "/_lab/stats", context=context) as r:
            return json.load(r)["byRoute"]

    def test_smart_connect_reads_the_service_content_and_disconnects(self):
        si = self.connect()
        content = si.RetrieveContent()
        self.assertEqual(content.about.apiType, "VirtualCenter")
        self.assertTrue(content.about.apiVersion.startswith("7.0"))
        self.assertIn("(bootstorm lab ", content.about.fullName)
        self.assertEqual(content.sessionManager._moId, "SessionManager")
        self.assertEqual(content.rootFolder._moId, "group-d1")
        # The version agreed on is the newest both sides know, from the lab's vimServiceVersions.xml.
        self.assertTrue(si._stub.versionId.startswith('"urn:vim25/6.7'), si._stub.versionId)
        pyVim_connect.Disconnect(si)
        with self.assertRaises(vim.fault.NotAuthenticated):
            si.RetrieveContent().sessionManager.Logout()
        routes = self.sdk_stats()
        self.assertGreaterEqual(routes.get("GET /sdk/vimServiceVersions.xml", 0), 1)
        self.assertGreaterEqual(routes.get("POST /sdk Login", 0), 1)
        self.assertGreaterEqual(routes.get("POST /sdk Logout", 0), 1)

    def test_property_accessors_read_whole_data_objects(self):
        # pyVmomi reads `vm.runtime` whole (RetrievePropertiesEx of the path `runtime` in 6.7, Fetch since 8.0.1),
        # then takes `.powerState` from the object: the lab composes the object from the paths it serves.
        si = self.connect()
        content = si.RetrieveContent()
        view = content.viewManager.CreateContainerView(content.rootFolder, [vim.VirtualMachine], True)
        golden = [vm for vm in view.view if vm.name == "tiny-golden"][0]
        self.assertIsInstance(golden.runtime, vim.vm.RuntimeInfo)
        self.assertEqual(golden.runtime.powerState, "poweredOff")
        self.assertIsInstance(golden.runtime.host, vim.HostSystem)
        self.assertEqual(golden.guest.toolsRunningStatus, "guestToolsNotRunning")
        self.assertEqual(list(golden.guest.net), [])  # off: no NIC reported
        self.assertGreater(golden.config.hardware.numCPU, 0)
        self.assertEqual(golden.config.name, "tiny-golden")
        self.assertGreater(golden.summary.storage.committed, 0)
        host = golden.runtime.host
        self.assertEqual(host.runtime.connectionState, "connected")
        self.assertGreater(host.summary.hardware.numCpuCores, 0)
        view.Destroy()
        pyVim_connect.Disconnect(si)

    def test_a_wrong_password_is_invalid_login(self):
        with self.assertRaises(vim.fault.InvalidLogin) as raised:
            self.connect(password="not-the-password")
        self.assertIn("incorrect user name or password", raised.exception.msg)

    def view_spec(self, view, kind, paths=None):
        traversal = PC.TraversalSpec(name="entities", path="view", skip=False, type=vim.view.ContainerView)
        props = PC.PropertySpec(type=kind, pathSet=paths) if paths else PC.PropertySpec(type=kind, all=True)
        return PC.FilterSpec(objectSet=[PC.ObjectSpec(obj=view, skip=True, selectSet=[traversal])], propSet=[props])

    def retrieve_all(self, pc, spec, max_objects):
        result = pc.RetrievePropertiesEx([spec], PC.RetrieveOptions(maxObjects=max_objects))
        objects, pages = [], 0
        while result:
            pages += 1
            objects += result.objects
            result = pc.ContinueRetrievePropertiesEx(result.token) if result.token else None
        return objects, pages

    def test_a_container_view_read_with_retrieve_properties_ex_page_by_page(self):
        si = self.connect()
        content = si.RetrieveContent()
        hosts_view = content.viewManager.CreateContainerView(content.rootFolder, [vim.HostSystem], True)
        hosts, pages = self.retrieve_all(content.propertyCollector, self.view_spec(hosts_view, vim.HostSystem), 2)
        names = sorted({p.name: p.val for p in o.propSet}["name"] for o in hosts)
        self.assertEqual(names, ["host-01", "host-02", "host-03", "host-04"])  # the small lab's vCenter hosts
        self.assertEqual(pages, 2)
        for host in hosts:
            props = {p.name: p.val for p in host.propSet}
            self.assertEqual(props["runtime.connectionState"], "connected")
            self.assertFalse(props["runtime.inMaintenanceMode"])
            self.assertIsInstance(props["parent"], vim.ClusterComputeResource)
        vms_view = content.viewManager.CreateContainerView(content.rootFolder, [vim.VirtualMachine], True)
        vms, _ = self.retrieve_all(content.propertyCollector,
                                   self.view_spec(vms_view, vim.VirtualMachine,
                                                  ["name", "runtime.powerState", "runtime.host"]), 100)
        golden = [{p.name: p.val for p in o.propSet} for o in vms]
        self.assertIn("tiny-golden", [g["name"] for g in golden])
        for g in golden:
            self.assertEqual(g["runtime.powerState"], "poweredOff")
            self.assertIsInstance(g["runtime.host"], vim.HostSystem)
        # An unknown property is vCenter's InvalidProperty fault.
        with self.assertRaises(vmodl.query.InvalidProperty):
            content.propertyCollector.RetrievePropertiesEx(
                [self.view_spec(vms_view, vim.VirtualMachine, ["runtime.noSuchThing"])], PC.RetrieveOptions())
        hosts_view.Destroy()
        vms_view.Destroy()
        with self.assertRaises(vmodl.fault.ManagedObjectNotFound):
            hosts_view.Destroy()
        pyVim_connect.Disconnect(si)

    def test_a_linked_clone_storm_watched_with_wait_for_updates_ex(self):
        si = self.connect()
        content = si.RetrieveContent()
        vms_view = content.viewManager.CreateContainerView(content.rootFolder, [vim.VirtualMachine], True)
        golden = [vm for vm in vms_view.view if vm.name == "tiny-golden"][0]
        datacenter = content.rootFolder.childEntity[0]
        self.assertIsInstance(datacenter, vim.Datacenter)

        snapshot_task = golden.CreateSnapshot_Task(name="pyvmomi-base", description="", memory=False, quiesce=False)
        self.assertEqual(pyVim_task.WaitForTask(snapshot_task, si=si), "success")
        snapshot = snapshot_task.info.result
        self.assertIsInstance(snapshot, vim.vm.Snapshot)
        self.assertEqual(golden.snapshot.currentSnapshot, snapshot)

        spec = vim.vm.CloneSpec(location=vim.vm.RelocateSpec(pool=golden.resourcePool,
                                                             diskMoveType="createNewChildDiskBacking"),
                                snapshot=snapshot, powerOn=False, template=False)
        names = ["pyvmomi-%d" % i for i in range(6)]
        clone_tasks = [golden.CloneVM_Task(folder=golden.parent, name=name, spec=spec) for name in names]
        pyVim_task.WaitForTasks(clone_tasks, si=si)
        clones = [t.info.result for t in clone_tasks]
        self.assertEqual(sorted(vm.name for vm in clones), names)
        # The lab's truth counts linked clones as the delta they write.
        truth = self.lab_json("/_lab/truth")
        kinds = {c["name"]: c["kind"] for c in truth["clones"]}
        self.assertEqual({kinds[name] for name in names}, {"linked"})

        # One collector of the script's own, one filter over a list view of the clones.
        pc = content.propertyCollector.CreatePropertyCollector()
        clones_view = content.viewManager.CreateListView(clones)
        traversal = PC.TraversalSpec(name="clones", path="view", skip=False, type=vim.view.ListView)
        pc.CreateFilter(PC.FilterSpec(objectSet=[PC.ObjectSpec(obj=clones_view, skip=True, selectSet=[traversal])],
                                      propSet=[PC.PropertySpec(type=vim.VirtualMachine,
                                                               pathSet=["runtime.powerState",
                                                                        "guest.toolsRunningStatus"])]),
                        True)
        multi = datacenter.PowerOnMultiVM_Task(vm=clones)
        self.assertEqual(pyVim_task.WaitForTask(multi, si=si), "success")
        result = multi.info.result
        self.assertIsInstance(result, vim.cluster.PowerOnVmResult)
        self.assertEqual(sorted(a.vm.name for a in result.attempted), names)
        self.assertEqual(list(result.notAttempted), [])
        pyVim_task.WaitForTasks([a.task for a in result.attempted], si=si)

        version, running, deadline = "", set(), time.time() + 60
        while len(running) < len(clones) and time.time() < deadline:
            update = pc.WaitForUpdatesEx(version, PC.WaitOptions(maxWaitSeconds=10))
            if update is None:
                continue
            version = update.version
            for filter_update in update.filterSet:
                for change in filter_update.objectSet:
                    for prop in change.changeSet:
                        if prop.name == "guest.toolsRunningStatus" and prop.val == "guestToolsRunning":
                            running.add(change.obj._moId)
        self.assertEqual(running, {vm._moId for vm in clones})
        pc.Destroy()

        # Off and destroyed; the snapshot removed: the lab is as it was.
        pyVim_task.WaitForTasks([vm.PowerOffVM_Task() for vm in clones], si=si)
        pyVim_task.WaitForTasks([vm.Destroy_Task() for vm in clones], si=si)
        self.assertEqual(pyVim_task.WaitForTask(snapshot.RemoveSnapshot_Task(removeChildren=False), si=si),
                         "success")
        self.assertEqual([vm.name for vm in vms_view.view], ["tiny-golden"])
        self.assertIsNone(golden.snapshot)
        # A powered-off VM cannot be powered off again: the task fails with vCenter's fault.
        with self.assertRaises(vim.fault.InvalidPowerState):
            pyVim_task.WaitForTask(golden.PowerOffVM_Task(), si=si)
        pyVim_connect.Disconnect(si)

    def lab_json(self, path):
        context = ssl.create_default_context(cafile=self.lab.ca_file)
        with urllib.request.urlopen(self.lab.endpoints["vcenter"] + path, context=context) as r:
            return json.load(r)

    def test_performance_manager_real_time_storage_statistics_of_a_storm(self):
        si = self.connect()
        content = si.RetrieveContent()
        pm = content.perfManager
        counters = {c.key: "%s.%s.%s" % (c.groupInfo.key, c.nameInfo.key, c.rollupType) for c in pm.perfCounter}
        by_name = {name: key for key, name in counters.items()}
        for name in ("virtualDisk.read.average", "virtualDisk.totalReadLatency.average",
                     "datastore.read.average", "storageAdapter.read.average"):
            self.assertIn(name, by_name)
        self.assertEqual([i.samplingPeriod for i in pm.historicalInterval], [300, 1800, 7200, 86400])

        # A small storm: two full clones of the golden VM, powered on together.
        vms_view = content.viewManager.CreateContainerView(content.rootFolder, [vim.VirtualMachine], True)
        golden = [vm for vm in vms_view.view if vm.name == "tiny-golden"][0]
        datacenter = content.rootFolder.childEntity[0]
        spec = vim.vm.CloneSpec(location=vim.vm.RelocateSpec(pool=golden.resourcePool), powerOn=False,
                                template=False)
        clone_tasks = [golden.CloneVM_Task(folder=golden.parent, name="pyvmomi-perf-%d" % i, spec=spec)
                       for i in range(2)]
        pyVim_task.WaitForTasks(clone_tasks, si=si)
        clones = [t.info.result for t in clone_tasks]
        multi = datacenter.PowerOnMultiVM_Task(vm=clones)
        self.assertEqual(pyVim_task.WaitForTask(multi, si=si), "success")
        pyVim_task.WaitForTasks([a.task for a in multi.info.result.attempted], si=si)
        powered_on = time.time()
        vm = clones[0]

        def prop(obj, kind, path):  # a nested path: pyVmomi's accessors ask for whole top-level properties
            spec = PC.FilterSpec(objectSet=[PC.ObjectSpec(obj=obj)],
                                 propSet=[PC.PropertySpec(type=kind, pathSet=[path])])
            return content.propertyCollector.RetrieveContents([spec])[0].propSet[0].val

        self.assertEqual(prop(vm, vim.VirtualMachine, "runtime.powerState"), "poweredOn")

        # The real-time interval: vCenter's 20 s, shortened by the small lab (telemetry.vcenterIntervalS).
        summary = pm.QueryPerfProviderSummary(entity=vm)
        self.assertTrue(summary.currentSupported)
        interval = summary.refreshRate
        self.assertTrue(1 <= interval <= 20, interval)
        disk_counters = [key for key, name in counters.items() if name.startswith("virtualDisk.")]
        query = vim.PerformanceManager.QuerySpec(
            entity=vm, intervalId=interval,
            metricId=[vim.PerformanceManager.MetricId(counterId=key, instance="*") for key in disk_counters])
        # Wait for a real-time sample after the boot.
        deadline, result = time.time() + 60, []
        while time.time() < deadline:
            result = pm.QueryPerf(querySpec=[query])
            if result and result[0].sampleInfo[-1].timestamp.timestamp() >= powered_on + 1:
                break
            time.sleep(1)
        self.assertEqual(len(result), 1)
        metric = result[0]
        self.assertIsInstance(metric, vim.PerformanceManager.EntityMetric)
        self.assertEqual(metric.entity, vm)
        for info in metric.sampleInfo:
            self.assertEqual(info.interval, interval)
            self.assertEqual((int(info.timestamp.timestamp()) % interval, info.timestamp.microsecond), (0, 0))
        instances = set()
        for series in metric.value:
            self.assertIsInstance(series, vim.PerformanceManager.IntSeries)
            self.assertIn(series.id.counterId, counters)
            self.assertEqual(len(series.value), len(metric.sampleInfo))
            self.assertTrue(all(v >= 0 for v in series.value), series)
            instances.add(series.id.instance)
        self.assertEqual(instances, {"", "scsi0:0"})
        reads = [s for s in metric.value
                 if s.id.counterId == by_name["virtualDisk.read.average"] and s.id.instance == "scsi0:0"][0]
        self.assertGreater(sum(reads.value), 0)  # the boot read its disk
        query.maxSample = 1
        self.assertEqual(len(pm.QueryPerf(querySpec=[query])[0].sampleInfo), 1)

        # The host: its datastores by VMFS uuid (as their url names them) and its one FC HBA.
        host = prop(vm, vim.VirtualMachine, "runtime.host")
        uuids = {ds.summary.url.split("/")[-2]: ds.name for ds in host.datastore}
        self.assertTrue(all(ds.summary.url.startswith("ds:///vmfs/volumes/") for ds in host.datastore))
        available = pm.QueryAvailablePerfMetric(entity=host, intervalId=interval)
        datastore_instances = {m.instance for m in available if m.counterId == by_name["datastore.read.average"]}
        self.assertEqual(datastore_instances, set(uuids) | {""})
        adapters = prop(host, vim.HostSystem, "config.storageDevice.hostBusAdapter")
        self.assertEqual(len(adapters), 1)
        self.assertIsInstance(adapters[0], vim.host.FibreChannelHba)
        self.assertEqual(adapters[0].device, "vmhba1")
        self.assertGreater(adapters[0].speed, 0)
        host_query = vim.PerformanceManager.QuerySpec(entity=host, intervalId=interval, maxSample=3, metricId=[
            vim.PerformanceManager.MetricId(counterId=by_name["storageAdapter.read.average"], instance="vmhba1")])
        host_metric = pm.QueryPerf(querySpec=[host_query])[0]
        self.assertEqual(host_metric.value[0].id.instance, "vmhba1")
        self.assertTrue(all(v >= 0 for v in host_metric.value[0].value))

        pyVim_task.WaitForTasks([vm.PowerOffVM_Task() for vm in clones], si=si)
        pyVim_task.WaitForTasks([vm.Destroy_Task() for vm in clones], si=si)
        # vCenter drops a destroyed VM's statistics.
        with self.assertRaises(vmodl.fault.ManagedObjectNotFound):
            pm.QueryPerf(querySpec=[query])
        pyVim_connect.Disconnect(si)

    def test_the_service_description_names_the_endpoint(self):
        context = ssl.create_default_context(cafile=self.lab.ca_file)
        with urllib.request.urlopen(self.lab.endpoints["vcenter"] + "/sdk/vimService.wsdl", context=context) as r:
            wsdl = r.read().decode()
        self.assertIn('<service name="VimService">', wsdl)
        self.assertIn("/sdk", wsdl)


if __name__ == "__main__":
    unittest.main()
