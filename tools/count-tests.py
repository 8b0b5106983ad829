#!/usr/bin/env python3
"""Adds up the per-binary case counts of a meson test log.

Each test binary prints "<name>: N passed, N failed"; a binary that crashed
or timed out before printing counts as one failed case, one that skipped
(exit code 77) counts as nothing.
"""
import json
import re
import sys

LINE = re.compile(r"^(\S+): (\d+) passed, (\d+) failed$", re.M)


def failure_lines(rec, limit=12):
    """The lines of a failed test that say what went wrong, at most limit."""
    text = (rec.get("stdout") or "") + (rec.get("stderr") or "")
    lines = [l for l in text.splitlines()
             if re.search(r"FAIL|ERROR|error:|Assert|Sanitizer|timed out", l)]
    if not lines:
        lines = text.splitlines()[-limit:]
    return [l[:200] for l in lines[:limit]]


def main(path):
    passed = failed = 0
    digest = []
    with open(path, encoding="utf-8") as f:
        for raw in f:
            rec = json.loads(raw)
            m = LINE.search(rec.get("stdout") or "")
            ok = rec.get("result") == "OK"
            if rec.get("result") == "SKIP":
                # exit code 77: a check whose prerequisites are absent
                print(f"{rec['name']}: skipped")
                continue
            if m:
                p, fl = int(m.group(2)), int(m.group(3))
                if not ok and fl == 0:
                    fl = 1
                passed += p
                failed += fl
                print(f"{rec['name']}: {p} passed, {fl} failed ({rec.get('result')})")
            else:
                failed += 1
                print(f"{rec['name']}: no summary ({rec.get('result')})")
            if not ok:
                digest.append((rec["name"], failure_lines(rec)))
    # Repeated last, so that a log cut to its tail still says what failed.
    for name, lines in digest:
        print(f"-- {name} failed:")
        for line in lines:
            print(f"   {line}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
