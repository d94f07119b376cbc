#!/usr/bin/python3
"""A copy of the repository placed where no ../shared exists configures, builds and passes the API
conformance tests: the build and the suite read nothing outside the repository.

Usage: fresh_clone_test.py SOURCE_DIR TEST_REGEX TARGET [TARGET ...]

The copy holds what `git ls-files` lists (tracked and untracked-but-not-ignored files of the working tree,
so uncommitted work is what is tested), in a new temporary folder. It is configured with the default
preset, TARGETs are built, and `ctest -R TEST_REGEX` must run at least one test and pass them all. Every
path compiled into a target (the -D NAME="..." definitions, BOOTSTORM_API_SPECS among them) must lie
inside the copy, and no build, deploy or CI file may name ../shared. The copy is removed when the test
passes and kept for inspection when it fails.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

failures = []


def fail(message):
    failures.append(message)
    print(f"FAIL: {message}", flush=True)


def run(argv, cwd):
    print(f"$ {' '.join(argv)}", flush=True)
    proc = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return proc.returncode, proc.stdout


def copy_repository(source, dest):
    if os.path.isdir(os.path.join(source, ".git")):
        listed = subprocess.run(["git", "-C", source, "ls-files", "-z", "--cached", "--others",
                                 "--exclude-standard"], check=True, stdout=subprocess.PIPE).stdout
        files = [f for f in listed.decode().split("\0") if f]
    else:
        files = []
        for root, dirs, names in os.walk(source):
            dirs[:] = [d for d in dirs if not (root == source and d in ("build", "runs", ".git"))]
            files += [os.path.relpath(os.path.join(root, n), source) for n in names]
    copied = 0
    for rel in files:
        src = os.path.join(source, rel)
        if not os.path.lexists(src):  # deleted in the working tree, not yet committed
            continue
        dst = os.path.join(dest, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(src, dst, follow_symlinks=False)
        copied += 1
    return copied


def main():
    if len(sys.argv) < 4:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    source, regex, targets = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3:]
    top = tempfile.mkdtemp(prefix="bootstorm-fresh-clone-")
    copy = os.path.join(top, "bootstorm")
    print(f"copied {copy_repository(source, copy)} files of {source} to {copy}", flush=True)
    if os.path.exists(os.path.join(top, "shared")):
        fail(f"{top}/shared exists: the copy is not where a user's clone would be")

    # No build, deploy or CI file names ../shared.
    for root, dirs, names in os.walk(copy):
        for name in names:
            path = os.path.join(root, name)
            rel = os.path.relpath(path, copy)
            if (name in ("CMakeLists.txt", "CMakePresets.json") or name.endswith(".cmake")
                    or rel.startswith(("deploy/", ".ci/"))):
                with open(path, errors="replace") as f:
                    if "../shared" in f.read():
                        fail(f"{rel} names ../shared")

    rc, out = run(["cmake", "--preset", "default"], copy)
    if rc != 0:
        fail(f"configure failed:\n{out[-3000:]}")
        return finish(top)

    # Every path compiled into a target lies inside the copy.
    with open(os.path.join(copy, "build", "default", "compile_commands.json")) as f:
        commands = json.load(f)
    define = re.compile(r'-D\s*(\w+)=\\?"(/[^"\\]*)\\?"')
    seen = {}
    for entry in commands:
        for name, path in define.findall(entry["command"]):
            seen[name] = path
            if os.path.commonpath([os.path.realpath(path), copy]) != copy:
                fail(f"{entry['file']}: -D{name}={path} lies outside the copy")
    if "BOOTSTORM_API_SPECS" not in seen:
        fail("no target is compiled with BOOTSTORM_API_SPECS: the conformance tests were not found")
    else:
        print(f"BOOTSTORM_API_SPECS={seen['BOOTSTORM_API_SPECS']}", flush=True)

    rc, out = run(["cmake", "--build", "--preset", "default", "-j", "2", "--target", *targets], copy)
    if rc != 0:
        fail(f"building {' '.join(targets)} failed:\n{out[-3000:]}")
        return finish(top)
    rc, out = run(["ctest", "--preset", "default", "-R", regex], copy)
    print(out[-4000:], flush=True)
    summary = re.search(r"(\d+)% tests passed, (\d+) tests failed out of (\d+)", out)
    if rc != 0 or summary is None:
        fail(f"ctest -R '{regex}' failed in the copy (exit {rc})")
    elif int(summary.group(3)) == 0:
        fail(f"ctest -R '{regex}' ran no test in the copy")
    return finish(top)


def finish(top):
    if failures:
        print(f"{len(failures)} problem(s); the copy is kept in {top}", flush=True)
        return 1
    shutil.rmtree(top, ignore_errors=True)
    print("the copy configured, built and passed without ../shared", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
