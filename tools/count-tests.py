#!/usr/bin/env python3
"""Adds up the per-binary case counts of a meson test log.

Each test binary prints "<name>: N passed, N failed" (", N skipped" added
when some of its cases could not run on this machine); the last such line of
its output is its count. A binary that crashed or timed out before printing
counts as one failed case. One that skipped (exit code 77: a prerequisite is
missing) counts as nothing, unless its output has a count with failures
(those count), or SOFTDPU_CI_NO_SKIP is set (CI installs every prerequisite:
the skip is one failure). Skipped cases are listed by test, never silent.

Usage: count-tests.py [--expect N] testlog.json
  --expect N  the number of tests meson lists: fewer records is a failure.
"""
import argparse
import json
import os
import re
import sys

LINE = re.compile(r"^(\S+): (\d+) passed, (\d+) failed(?:, (\d+) skipped)?$", re.M)


def failure_lines(rec, limit=12):
    """The lines of a failed test that say what went wrong, at most limit."""
    text = (rec.get("stdout") or "") + (rec.get("stderr") or "")
    lines = [l for l in text.splitlines()
             if re.search(r"FAIL|ERROR|error:|Assert|Sanitizer|timed out|SOFTDPU_TEST_SEED", l)]
    if not lines:
        lines = text.splitlines()[-limit:]
    return [l[:200] for l in lines[:limit]]


def last_summary(rec):
    """(passed, failed, skipped) of the test's last count line (stdout's, else stderr's), or None."""
    found = LINE.findall(rec.get("stdout") or "") or LINE.findall(rec.get("stderr") or "")
    if not found:
        return None
    _, p, f, s = found[-1]
    return int(p), int(f), int(s or 0)


def count(rec, no_skip):
    """(passed, failed, skipped cases, what to print) of one record."""
    name, result = rec["name"], rec.get("result")
    summary = last_summary(rec)
    if result == "SKIP":
        if summary is not None and summary[1] > 0:
            p, f, s = summary
            return p, f, s, f"{name}: {p} passed, {f} failed (skipped, with failures)"
        if no_skip:
            return 0, 1, 0, f"{name}: skipped, but SOFTDPU_CI_NO_SKIP requires it (1 failed)"
        return 0, 0, 0, f"{name}: skipped"
    if summary is None:
        return 0, 1, 0, f"{name}: no summary ({result})"
    p, f, s = summary
    if result != "OK" and f == 0:
        f = 1
    return p, f, s, f"{name}: {p} passed, {f} failed" + (f", {s} skipped" if s else "") + f" ({result})"


def main(argv):
    ap = argparse.ArgumentParser()
    ap.add_argument("--expect", type=int, default=0)
    ap.add_argument("log")
    args = ap.parse_args(argv)
    no_skip = os.environ.get("SOFTDPU_CI_NO_SKIP", "") not in ("", "0")
    passed = failed = records = 0
    digest, skipped = [], []
    with open(args.log, encoding="utf-8") as f:
        for raw in f:
            rec = json.loads(raw)
            records += 1
            p, fl, s, text = count(rec, no_skip)
            passed += p
            failed += fl
            print(text)
            if s:
                skipped.append(f"{rec['name']} ({s})")
            if fl:
                digest.append((rec["name"], failure_lines(rec)))
    if records < args.expect:
        print(f"meson test ran {records} of the {args.expect} tests it lists")
        failed += 1
    # Repeated last, so that a log cut to its tail still says what failed.
    for name, lines in digest:
        print(f"-- {name} failed:")
        for line in lines:
            print(f"   {line}")
    if skipped:
        print("cases skipped on this machine: " + ", ".join(skipped))
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
