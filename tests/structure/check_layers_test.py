#!/usr/bin/python3
"""check_layers.py on small trees it is given: what it must refuse, and what it must let through."""
import os
import subprocess
import sys
import tempfile
import unittest

CHECK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "check_layers.py")
LAYERS = "```layers\nreports\nsimulator/lab\nresults\ncommon\napart simulator: results\n```\n"


def tree(files):
    root = tempfile.mkdtemp(prefix="layers-")
    for path, text in files.items():
        os.makedirs(os.path.join(root, os.path.dirname(path)), exist_ok=True)
        with open(os.path.join(root, path), "w", encoding="utf-8") as f:
            f.write(text)
    return root


def run(files):
    base = {
        "docs/DESIGN.md": "# design\n\n" + LAYERS,
        "common/CMakeLists.txt": "add_library(c STATIC a.cpp)\n",
        "common/a.hpp": "",
        "results/CMakeLists.txt": "add_library(r STATIC r.cpp)\n",
        "results/r.hpp": '#include "common/a.hpp"\n',
        "results/detail/inner.hpp": '#include "results/r.hpp"\n',
        "reports/CMakeLists.txt": "add_library(p STATIC p.cpp)\n",
        "reports/p.cpp": '#include "results/r.hpp"\n#include "results/detail/inner.hpp"\n',
        "simulator/CMakeLists.txt": "foreach(sub lab)\n  add_subdirectory(${sub})\nendforeach()\n",
        "simulator/lab/CMakeLists.txt": "add_executable(l l.cpp)\n",
        "simulator/lab/l.cpp": '#include "common/a.hpp"\n',
    }
    base.update(files)
    done = subprocess.run([sys.executable, CHECK, tree(base)], capture_output=True, text=True)
    return done.returncode, done.stdout


class CheckLayers(unittest.TestCase):
    def test_includes_that_run_down_pass(self):
        code, out = run({})
        self.assertEqual(code, 0, out)
        self.assertIn("4 rooms, 3 room-to-room includes, all running down", out)

    def test_an_include_of_a_higher_room_is_named_at_its_line(self):
        code, out = run({"common/a.cpp": '// x\n#include "results/r.hpp"\n'})
        self.assertEqual(code, 1)
        self.assertIn("common/a.cpp:2: common includes results, which is above it", out)

    def test_a_detail_header_belongs_to_its_folder(self):
        code, out = run({"results/detail/inner.hpp": '#include "reports/p.hpp"\n', "reports/p.hpp": ""})
        self.assertEqual(code, 1)
        self.assertIn("results/detail/inner.hpp:1: results includes reports, which is above it", out)

    def test_rooms_kept_apart_never_include_each_other_whatever_their_layers(self):
        code, out = run({"simulator/lab/l.cpp": '#include "results/r.hpp"\n'})
        self.assertEqual(code, 1)
        self.assertIn("simulator/lab includes results; docs/DESIGN.md keeps simulator and results apart", out)

    def test_a_new_folder_must_be_placed(self):
        code, out = run({"results/extra/CMakeLists.txt": "add_library(x STATIC x.cpp)\n", "results/extra/x.cpp": ""})
        self.assertEqual(code, 1)
        self.assertIn("results/extra: a room (its CMakeLists.txt builds a target) that docs/DESIGN.md's layers do "
                      "not place", out)

    def test_rooms_on_one_line_are_siblings(self):
        layers = LAYERS.replace("reports\nsimulator/lab\nresults\n", "reports  results\nsimulator/lab\n")
        code, out = run({"docs/DESIGN.md": layers})
        self.assertEqual(code, 1)
        self.assertIn("reports/p.cpp:1: reports includes results, which is beside it", out)


if __name__ == "__main__":
    unittest.main()
