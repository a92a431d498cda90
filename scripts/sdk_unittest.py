"""Runs an SDK's unittest suite as `python -m unittest discover -s tests`
does, leaving out the test classes named on the command line.

The 2-node sdk step uses it for tests known to fail there for a reason
the step states (scripts/test.sh, sdk_suites_2nodes); the suite's files are
not edited, and the step runs the left-out classes on their own and reports
them.
"""

import os
import sys
import unittest


def without(suite, names):
    kept = unittest.TestSuite()
    for test in suite:
        if isinstance(test, unittest.TestSuite):
            kept.addTest(without(test, names))
        elif type(test).__name__ not in names:
            kept.addTest(test)
    return kept


def main():
    names = set(sys.argv[1:])
    # As `python -m unittest` does: the working directory (the SDK's root)
    # first on the path, where its tests import `tests.` helpers from;
    # a script gets its own directory there instead.
    sys.path.insert(0, os.getcwd())
    suite = unittest.defaultTestLoader.discover("tests")
    result = unittest.TextTestRunner().run(without(suite, names))
    sys.exit(0 if result.wasSuccessful() else 1)


if __name__ == "__main__":
    main()
