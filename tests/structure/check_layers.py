#!/usr/bin/python3
"""Every #include of the product's code runs down the layers that docs/DESIGN.md draws.

A room is a folder of the product with its own CMakeLists.txt (one folder, one target); a file belongs to the
nearest room above it (detail/ headers are their folder's). docs/DESIGN.md's ```layers block lists the rooms
from the top down, one layer a line: a file may include its own room and the rooms on lower lines, never a
room on its own line or above. Every room must be listed, so a new folder is placed before it builds. A line
`apart A: B C` keeps folders apart whatever their layers: nothing under A includes anything under B or C, nor
the other way round.

Usage: check_layers.py SOURCE_DIR [--graph]   (--graph prints room -> rooms it includes, and exits 0)
Exit 0: every include runs down; 1: the includes that do not, each as file:line, and why; 2: a usage error.
"""
import os
import re
import sys

PRODUCT = ("common", "protocol", "providers", "results", "reports", "simulator", "orchestrator")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def rooms_of(root):
    rooms = set()
    for top in PRODUCT:
        for dirpath, _dirs, files in os.walk(os.path.join(root, top)):
            if "CMakeLists.txt" in files:
                with open(os.path.join(dirpath, "CMakeLists.txt"), encoding="utf-8") as f:
                    if re.search(r"^\s*add_(library|executable)\(", f.read(), re.M):
                        rooms.add(os.path.relpath(dirpath, root))
    return rooms


def room_of(path, rooms):
    folder = os.path.dirname(path)
    while folder:
        if folder in rooms:
            return folder
        folder = os.path.dirname(folder)
    return None


def read_layers(design):
    text = open(design, encoding="utf-8").read()
    block = re.search(r"^```layers\n(.*?)^```", text, re.S | re.M)
    if not block:
        sys.exit(f"{design}: no ```layers block (the layers, top down, one a line)")
    layers, apart = [], []
    for line in block.group(1).splitlines():
        line = line.split("#", 1)[0].strip()
        if line.startswith("apart "):
            one, _, others = line[len("apart "):].partition(":")
            apart += [(one.strip(), other) for other in others.split()]
        elif line:
            layers.append(line.split())
    return {room: depth for depth, names in enumerate(reversed(layers)) for room in names}, apart


def under(room, folder):
    return room == folder or room.startswith(folder + "/")


def sources(root):
    for top in PRODUCT:
        for dirpath, _dirs, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith((".cpp", ".hpp", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def main(argv):
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = argv[1]
    rooms = rooms_of(root)
    edges = {}
    findings = []
    for path in sources(root):
        here = room_of(path, rooms)
        if here is None:
            findings.append(f"{path}: in no folder with a CMakeLists.txt, so in no layer")
            continue
        with open(os.path.join(root, path), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                m = INCLUDE.match(line)
                if not m or not m.group(1).startswith(tuple(t + "/" for t in PRODUCT)):
                    continue
                there = room_of(m.group(1), rooms)
                if there is None:
                    findings.append(f"{path}:{number}: includes {m.group(1)}, which is in no room")
                elif there != here:
                    edges.setdefault(here, {}).setdefault(there, f"{path}:{number}")
    if "--graph" in argv:
        for here in sorted(edges):
            print(f"{here} -> {' '.join(sorted(edges[here]))}")
        return 0
    depth, apart = read_layers(os.path.join(root, "docs", "DESIGN.md"))
    for room in sorted(rooms - depth.keys()):
        findings.append(f"{room}: a room (its CMakeLists.txt builds a target) that docs/DESIGN.md's layers do not place")
    for room in sorted(depth.keys() - rooms):
        findings.append(f"docs/DESIGN.md places {room}, which is not a folder that builds a target")
    for here, targets in sorted(edges.items()):
        for there, where in sorted(targets.items()):
            for one, other in apart:
                if (under(here, one) and under(there, other)) or (under(here, other) and under(there, one)):
                    findings.append(f"{where}: {here} includes {there}; docs/DESIGN.md keeps {one} and {other} apart")
            if here not in depth or there not in depth:
                continue
            if depth[there] >= depth[here]:
                side = "beside" if depth[there] == depth[here] else "above"
                findings.append(f"{where}: {here} includes {there}, which is {side} it in docs/DESIGN.md's layers")
    for finding in findings:
        print(finding)
    if findings:
        print(f"{len(findings)} include(s) or room(s) break the layers: move the code down, or the include up",
              file=sys.stderr)
        return 1
    print(f"{len(rooms)} rooms, {sum(len(t) for t in edges.values())} room-to-room includes, all running down")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
