#!/usr/bin/env python3
"""Adds up the per-binary case counts of a meson test log.

Each test binary prints "<name>: N passed, N failed"; a binary that crashed
or timed out before printing counts as one failed case.
"""
import json
import re
import sys

LINE = re.compile(r"^(\S+): (\d+) passed, (\d+) failed$", re.M)


def main(path):
    passed = failed = 0
    with open(path, encoding="utf-8") as f:
        for raw in f:
            rec = json.loads(raw)
            m = LINE.search(rec.get("stdout") or "")
            # A test skipped for a missing optional tool (exit 77) has failed nothing.
            ok = rec.get("result") in ("OK", "SKIP")
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
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
