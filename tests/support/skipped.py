#!/usr/bin/python3
"""Lists the tests a ctest run skipped, each with the reason its test gave, and checks them against the
skips by design.

Usage: tests/support/skipped.py CTEST_JUNIT_XML [--by-design tests/README.md]

CTEST_JUNIT_XML is written by `ctest --output-junit FILE` (deploy/setup test does). The reason is
GoogleTest's skip message (the lines after "<file>:<line>: Skipped" in the test's output) or ctest's own.
With --by-design, the table under "Skips by design" in that file gives the allowed skips (a backticked
fnmatch pattern on the test name in its first column); the exit status is 1 when a test skipped that is not
listed there, 0 otherwise.
"""
import fnmatch
import re
import sys
import xml.etree.ElementTree as ET


def reason(case):
    lines = (case.findtext("system-out") or "").splitlines()
    for i, line in enumerate(lines):
        if line.rstrip().endswith(": Skipped"):
            message = []
            for follow in lines[i + 1:]:
                if follow.startswith("["):
                    break
                if follow.strip():
                    message.append(follow.strip())
            if message:
                return " ".join(message)
    if case.get("status") == "disabled":
        return "disabled (a DISABLED_ test): enable it or delete it"
    skipped = case.find("skipped")
    if skipped is not None and skipped.get("message"):
        return skipped.get("message")
    return "no reason given"


def by_design_patterns(readme):
    patterns, in_section = [], False
    with open(readme) as f:
        for line in f:
            if line.startswith("**Skips by design**"):
                in_section = True
            elif in_section and line.startswith("|"):
                match = re.match(r"\|\s*`([^`]+)`", line)
                if match:
                    patterns.append(match.group(1))
            elif in_section and patterns and not line.strip():
                break
    return patterns


def main(argv):
    if len(argv) not in (2, 4) or (len(argv) == 4 and argv[2] != "--by-design"):
        print(__doc__.strip(), file=sys.stderr)
        return 2
    root = ET.parse(argv[1]).getroot()
    patterns = by_design_patterns(argv[3]) if len(argv) == 4 else None
    cases = list(root.iter("testcase"))
    # A parameterized test's name carries "  # GetParam() = ..." in ctest's report: match on the name alone.
    skipped = sorted((c.get("name", "?").split("  #")[0].strip(), reason(c)) for c in cases
                     if c.get("status", "") in ("notrun", "skipped", "disabled") or c.find("skipped") is not None)
    if not skipped:
        print(f"[tests] {len(cases)} tests, none skipped")
        return 0
    print(f"[tests] {len(skipped)} of {len(cases)} tests skipped:")
    unexpected = 0
    for name, why in skipped:
        tag = ""
        if patterns is not None:
            if any(fnmatch.fnmatchcase(name, p) for p in patterns):
                tag = " [by design]"
            else:
                tag = " [NOT BY DESIGN]"
                unexpected += 1
        print(f"  - {name}{tag}: {why}")
    if unexpected:
        print(f"[tests] {unexpected} skip(s) not listed under 'Skips by design' in {argv[3]}: "
              "install what they name, or list a real by-design skip there")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
