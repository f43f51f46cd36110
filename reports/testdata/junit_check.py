#!/usr/bin/python3
"""Load airlock JUnit reports with junitparser, as JUnit consumers do, and check them.

usage: junit_check.py FILE TESTS FAILURES SKIPPED [--errors ERRORS] [--name NAME]...

For FILE it checks that junitparser reads it; that the testcases, failures,
skipped testcases and errors (a broken contract's testcase, default 0) number
TESTS, FAILURES, SKIPPED and ERRORS, and agree with the counts on every
<testsuite> and on <testsuites>; that no (classname, name)
pair repeats; that no name, classname, message or text holds "<!--", "]]>"
or a control character (texts may hold newlines and tabs); and that each
--name is the name of some testcase. Exit 0 and one line on success, 1 with
the problems otherwise. Run by cli/junit_consumers_test.go.
"""

import argparse
import re
import sys

from junitparser import Error, Failure, JUnitXml, Skipped

CONTROL_LINE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
CONTROL_TEXT = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("tests", type=int)
    ap.add_argument("failures", type=int)
    ap.add_argument("skipped", type=int)
    ap.add_argument("--errors", type=int, default=0)
    ap.add_argument("--name", action="append", default=[])
    args = ap.parse_args()

    problems = []

    def safe(what, value, control):
        if value is None:
            return
        for bad in ("<!--", "]]>"):
            if bad in value:
                problems.append(f"{what} holds {bad!r}: {value!r}")
        if control.search(value):
            problems.append(f"{what} holds a control character: {value!r}")

    xml = JUnitXml.fromfile(args.file)
    if not isinstance(xml, JUnitXml):
        print(f"{args.file}: the root is not <testsuites>", file=sys.stderr)
        return 1
    suites = list(xml)
    tests = failures = skipped = errors = 0
    pairs = {}
    names = set()
    for suite in suites:
        safe("testsuite name", suite.name, CONTROL_LINE)
        n = f = s = e = 0
        for case in suite:
            n += 1
            key = (case.classname, case.name)
            if key in pairs:
                problems.append(f"(classname, name) {key!r} repeats (suites {pairs[key]!r} and {suite.name!r})")
            pairs[key] = suite.name
            names.add(case.name)
            safe("classname", case.classname, CONTROL_LINE)
            safe("name", case.name, CONTROL_LINE)
            for r in case.result:
                if isinstance(r, Failure):
                    f += 1
                elif isinstance(r, Skipped):
                    s += 1
                elif isinstance(r, Error):
                    e += 1
                    if r.type != "configuration":
                        problems.append(f"{key!r}: error of type {r.type!r}, want 'configuration'")
                else:
                    problems.append(f"{key!r}: unexpected result {r!r}")
                safe("message", r.message, CONTROL_LINE)
                safe("type", r.type, CONTROL_LINE)
                safe("text", r.text, CONTROL_TEXT)
        if (suite.tests, suite.failures, suite.skipped, suite.errors) != (n, f, s, e):
            problems.append(
                f"testsuite {suite.name!r} says tests={suite.tests} failures={suite.failures} "
                f"skipped={suite.skipped} errors={suite.errors}, holds {n}, {f}, {s}, {e}")
        tests, failures, skipped, errors = tests + n, failures + f, skipped + s, errors + e
    if (xml.tests, xml.failures, xml.errors) != (tests, failures, errors):
        problems.append(f"testsuites says tests={xml.tests} failures={xml.failures} errors={xml.errors}, holds {tests}, {failures}, {errors}")
    if (tests, failures, skipped, errors) != (args.tests, args.failures, args.skipped, args.errors):
        problems.append(
            f"holds {tests} testcases, {failures} failures, {skipped} skipped, {errors} errors; "
            f"want {args.tests}, {args.failures}, {args.skipped}, {args.errors}")
    for name in args.name:
        if name not in names:
            problems.append(f"no testcase named {name!r}")

    if problems:
        for p in problems:
            print(f"{args.file}: {p}", file=sys.stderr)
        return 1
    print(f"{args.file}: junitparser read {len(suites)} suites, {tests} testcases, "
          f"{failures} failures, {skipped} skipped, {errors} errors; (classname, name) unique")
    return 0


if __name__ == "__main__":
    sys.exit(main())
