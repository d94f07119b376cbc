#!/usr/bin/python3
"""Runs one conformance test module for ctest: exit 0 when every test passed, 1 on a failure or error, and
77 (ctest's SKIP_RETURN_CODE) when a test was skipped, printing the reason as GoogleTest does so that
`deploy/setup test` lists it (tests/support/skipped.py). Under CI a missing tool fails instead of skipping
(labserve.missing), so 77 never hides missing evidence there.

usage: run.py MODULE
"""
import sys
import unittest


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    suite = unittest.defaultTestLoader.loadTestsFromName(sys.argv[1])
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    if result.failures or result.errors or result.unexpectedSuccesses:
        return 1
    if result.skipped:
        for test, reason in result.skipped:
            print(f"{test}: Skipped\n{reason}")
        return 77
    if result.testsRun == 0:
        print(f"{sys.argv[1]}: no test ran")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
