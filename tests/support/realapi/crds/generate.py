#!/usr/bin/python3
"""Writes the CustomResourceDefinitions the real apiserver of the suite serves (tests/support/realapi):
KubeVirt's, CDI's and OpenShift's Route, from the API descriptions in tests/data/api-specs/.

Each KubeVirt and CDI kind's openAPIV3Schema is its Swagger 2.0 definition made structural, as a CRD needs:
every $ref inlined; ObjectMeta `{type: object}` at the root and kept whole (unknown fields preserved) where a
template embeds it; Quantity and IntOrString as int-or-string; Time as a date-time string; RawExtension and
anything without a description kept whole. Descriptions and defaults are dropped: a CRD needs neither, and the
files stay small enough for etcd. Printer columns, short names, scopes and subresources are those of the
upstream CRDs (KubeVirt's virt-operator, CDI's operator). Forklift's CRDs are upstream's own files: the suite
applies tests/data/api-specs/forklift/ as it is. StorageProfile and Route have no description in tests/data/api-specs: their spec and status are kept
whole (simulator/README.md lists this).

  generate.py [--out DIR]   write the files (default: the folder of this script)
  generate.py --check       exit 1, naming the file, when a committed file differs from what it would write
"""
import argparse
import copy
import json
import os
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
SPECS = os.path.normpath(os.path.join(HERE, "..", "..", "..", "data", "api-specs"))
META = "k8s.io.apimachinery.pkg.apis.meta.v1."

AGE = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}


def condition(name, type_, priority=0):
    column = {"name": name, "type": "string", "jsonPath": ".status.conditions[?(@.type=='%s')].status" % type_}
    if priority:
        column["priority"] = priority
    return column


# (file, group, version, kind, plural, singular, short names, scope, spec file and definition, status
# subresource, printer columns)
KINDS = [
    ("kubevirt.io_virtualmachines.yaml", "kubevirt.io", "v1", "VirtualMachine", "virtualmachines",
     "virtualmachine", ["vm", "vms"], "Namespaced", ("kubevirt", "v1.VirtualMachine"), True,
     [AGE, {"name": "Status", "type": "string", "jsonPath": ".status.printableStatus"},
      condition("Ready", "Ready")]),
    ("kubevirt.io_virtualmachineinstances.yaml", "kubevirt.io", "v1", "VirtualMachineInstance",
     "virtualmachineinstances", "virtualmachineinstance", ["vmi", "vmis"], "Namespaced",
     ("kubevirt", "v1.VirtualMachineInstance"), False,
     [AGE, {"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
      {"name": "IP", "type": "string", "jsonPath": ".status.interfaces[0].ipAddress"},
      {"name": "NodeName", "type": "string", "jsonPath": ".status.nodeName"},
      condition("Ready", "Ready"), condition("Live-Migratable", "LiveMigratable", 1),
      condition("Paused", "Paused", 1)]),
    ("kubevirt.io_kubevirts.yaml", "kubevirt.io", "v1", "KubeVirt", "kubevirts", "kubevirt", ["kv", "kvs"],
     "Namespaced", ("kubevirt", "v1.KubeVirt"), True,
     [AGE, {"name": "Phase", "type": "string", "jsonPath": ".status.phase"}]),
    ("cdi.kubevirt.io_datavolumes.yaml", "cdi.kubevirt.io", "v1beta1", "DataVolume", "datavolumes",
     "datavolume", ["dv", "dvs"], "Namespaced", ("cdi", "v1beta1.DataVolume"), True,
     [{"name": "Phase", "type": "string", "jsonPath": ".status.phase"},
      {"name": "Progress", "type": "string", "jsonPath": ".status.progress"},
      {"name": "Restarts", "type": "integer", "jsonPath": ".status.restartCount"}, AGE]),
    ("cdi.kubevirt.io_datasources.yaml", "cdi.kubevirt.io", "v1beta1", "DataSource", "datasources",
     "datasource", ["das"], "Namespaced", ("cdi", "v1beta1.DataSource"), True, [AGE]),
    ("cdi.kubevirt.io_cdis.yaml", "cdi.kubevirt.io", "v1beta1", "CDI", "cdis", "cdi", ["cdi", "cdis"],
     "Cluster", ("cdi", "v1beta1.CDI"), True,
     [AGE, {"name": "Phase", "type": "string", "jsonPath": ".status.phase"}]),
    ("cdi.kubevirt.io_storageprofiles.yaml", "cdi.kubevirt.io", "v1beta1", "StorageProfile",
     "storageprofiles", "storageprofile", [], "Cluster", None, True, []),
    ("route.openshift.io_routes.yaml", "route.openshift.io", "v1", "Route", "routes", "route", [],
     "Namespaced", None, True,
     [{"name": "Host", "type": "string", "jsonPath": ".status.ingress[0].host"},
      {"name": "Path", "type": "string", "jsonPath": ".spec.path"},
      {"name": "Services", "type": "string", "jsonPath": ".spec.to.name"}]),
]

SPEC_FILES = {"kubevirt": "kubevirt/kubevirt-swagger.json", "cdi": "kubevirt/cdi-swagger.json"}

INT_OR_STRING = {"anyOf": [{"type": "integer"}, {"type": "string"}], "x-kubernetes-int-or-string": True}
WHOLE = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
SPECIAL = {
    META + "ObjectMeta": WHOLE,
    META + "Time": {"type": "string", "format": "date-time"},
    META + "MicroTime": {"type": "string", "format": "date-time"},
    META + "Duration": {"type": "string"},
    "k8s.io.apimachinery.pkg.api.resource.Quantity": INT_OR_STRING,
    "k8s.io.apimachinery.pkg.util.intstr.IntOrString": INT_OR_STRING,
    "k8s.io.apimachinery.pkg.runtime.RawExtension": WHOLE,
}
KEPT = ("type", "format", "enum", "items", "properties", "required", "additionalProperties", "pattern",
        "minimum", "maximum", "minItems", "maxItems", "minLength", "maxLength", "x-kubernetes-list-type",
        "x-kubernetes-list-map-keys", "x-kubernetes-map-type")


def structural(node, definitions, stack):
    """The structural form of one Swagger schema node."""
    if "$ref" in node:
        name = node["$ref"].split("/")[-1]
        if name in SPECIAL:
            return copy.deepcopy(SPECIAL[name])
        if name in stack:  # a recursive type: kept whole below its first level
            return copy.deepcopy(WHOLE)
        return structural(definitions[name], definitions, stack + (name,))
    if "allOf" in node and len(node["allOf"]) == 1:
        return structural(node["allOf"][0], definitions, stack)
    out = {}
    for key in KEPT:
        if key not in node:
            continue
        value = node[key]
        if key == "items":
            value = structural(value, definitions, stack)
        elif key == "properties":
            value = {name: structural(child, definitions, stack) for name, child in value.items()}
        elif key == "additionalProperties" and isinstance(value, dict):
            value = structural(value, definitions, stack)
        out[key] = copy.deepcopy(value)
    if isinstance(out.get("type"), list):  # ["string", "null"]: KubeVirt's way of saying nullable
        types = [t for t in out["type"] if t != "null"]
        out["type"] = types[0]
        if len(types) < len(node["type"]):
            out["nullable"] = True
    if "type" not in out:
        if "properties" in out or "additionalProperties" in out:
            out["type"] = "object"
        else:  # nothing said about it: the apiserver keeps whatever it holds
            return copy.deepcopy(WHOLE)
    if out.get("type") == "object" and "properties" not in out and "additionalProperties" not in out:
        out["x-kubernetes-preserve-unknown-fields"] = True
    # A list-map's keys must be required in its items (or defaulted); where the description does not say so,
    # the list is left atomic rather than given a requirement upstream does not have.
    if out.get("x-kubernetes-list-type") == "map":
        required = set(out.get("items", {}).get("required", []))
        if not set(out.get("x-kubernetes-list-map-keys", [])) <= required:
            out["x-kubernetes-list-type"] = "atomic"
            out.pop("x-kubernetes-list-map-keys", None)
    return out


def root_schema(definition_ref):
    if definition_ref is None:
        return {"type": "object", "properties": {
            "apiVersion": {"type": "string"}, "kind": {"type": "string"}, "metadata": {"type": "object"},
            "spec": copy.deepcopy(WHOLE), "status": copy.deepcopy(WHOLE)}}
    spec_file, name = definition_ref
    with open(os.path.join(SPECS, SPEC_FILES[spec_file])) as f:
        definitions = json.load(f)["definitions"]
    schema = structural(definitions[name], definitions, (name,))
    schema["properties"]["metadata"] = {"type": "object"}
    return schema


def crd(kind):
    (_, group, version, name, plural, singular, short, scope, ref, status, columns) = kind
    names = {"kind": name, "listKind": name + "List", "plural": plural, "singular": singular}
    if short:
        names["shortNames"] = short
    served = {"name": version, "served": True, "storage": True, "schema": {"openAPIV3Schema": root_schema(ref)}}
    if status:
        served["subresources"] = {"status": {}}
    if columns:
        served["additionalPrinterColumns"] = columns
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "%s.%s" % (plural, group),
                         "annotations": {"bootstorm.io/generated-by": "tests/support/realapi/crds/generate.py"}},
            "spec": {"group": group, "names": names, "scope": scope, "versions": [served]}}


def files():
    """{file name: text} of everything this script writes."""
    header = "# Generated by tests/support/realapi/crds/generate.py from tests/data/api-specs/; do not edit.\n"
    out = {}
    for kind in KINDS:
        out[kind[0]] = header + yaml.safe_dump(crd(kind), sort_keys=True, width=120)
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", default=HERE)
    parser.add_argument("--check", action="store_true")
    args = parser.parse_args()
    wanted = files()
    if args.check:
        stale = []
        for name, text in wanted.items():
            path = os.path.join(args.out, name)
            if not os.path.exists(path) or open(path).read() != text:
                stale.append(name)
        present = {n for n in os.listdir(args.out) if n.endswith(".yaml")}
        stale += sorted(present - set(wanted))
        for name in stale:
            print("%s: differs from what generate.py writes; run tests/support/realapi/crds/generate.py" % name)
        return 1 if stale else 0
    for name, text in wanted.items():
        with open(os.path.join(args.out, name), "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
