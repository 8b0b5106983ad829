#!/usr/bin/env python3
"""Proves that the layers only see downwards.

Usage: check-layers.py <build-dir>

For each layer library (base, hw, fabric, the API families doca, verbs
and flexio side by side above fabric, rdmacm, which uses verbs through
its public API and sees base and hw, and DOCA DPA, which uses doca and
flexio through their public APIs and sees base) it takes the exact compiler command
the build uses for one of the layer's own sources (from
compile_commands.json) and compiles small probe files with it instead:

- a probe including a header of the layer itself or of a layer below must
  compile (so a failure below is not a broken probe);
- a probe including a header of a layer above or beside it (doca, verbs and
  flexio do not see each other), or a public header in hw and fabric, must fail,
  and fail because the header is not found.

It also refuses quoted includes with a directory part in the layer sources
("../doca/core/dc_log.h" would reach around the include paths).

Prints "check_layers: N passed, N failed", as the test binaries do.
"""
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

LAYERS = ["base", "hw", "fabric", "doca", "verbs", "flexio", "rdmacm", "dpa"]
# What each layer may include, itself among them.
SEES = {
    "base": {"base"},
    "hw": {"base", "hw"},
    "fabric": {"base", "hw", "fabric"},
    "doca": {"base", "hw", "fabric", "doca"},
    "verbs": {"base", "hw", "fabric", "verbs"},
    "flexio": {"base", "hw", "fabric", "flexio"},
    "rdmacm": {"base", "hw", "rdmacm"},
    # DOCA DPA: above doca and flexio, through their public APIs only.
    "dpa": {"base", "dpa"},
}
# One header of each layer; "public" is the vendor API (include/).
HEADER = {
    "base": "base_log.h",
    "hw": "hw_mem.h",
    "fabric": "fab_desc.h",
    "doca": "dc_log.h",
    "verbs": "vb_int.h",
    "flexio": "fx_int.h",
    "rdmacm": "cm_int.h",
    "dpa": "dpa_int.h",
    "public": "doca_types.h",
}
SEES_PUBLIC = {"doca", "verbs", "flexio", "rdmacm", "dpa"}
# Built only where its build dependency is (librdmacm-dev's headers).
OPTIONAL = {"rdmacm"}
SOURCE_DIRS = {"base": "src/base", "hw": "src/hw", "fabric": "src/fabric", "doca": "src/doca", "verbs": "src/verbs", "flexio": "src/flexio", "rdmacm": "src/rdmacm", "dpa": "src/dpa/host"}
DROP_WITH_ARG = {"-o", "-MQ", "-MF", "-MT", "-c"}
DROP_ALONE = {"-MD", "-MMD"}


def layer_command(entries, layer):
    """The compiler arguments of one source of the layer's library, without its file and outputs."""
    tag = "libsoftdpu_%s.a.p/" % layer
    for e in entries:
        if tag not in e["output"]:
            continue
        args = e["arguments"] if "arguments" in e else shlex.split(e["command"])
        out, skip = [], False
        for a in args:
            if skip:
                skip = False
            elif a in DROP_WITH_ARG:
                skip = True
            elif a not in DROP_ALONE and a != e["file"]:
                out.append(a)
        return e["directory"], out
    return None, None


def compiles(directory, args, header, tmp):
    probe = os.path.join(tmp, "probe_%s.c" % re.sub(r"\W", "_", header))
    with open(probe, "w", encoding="utf-8") as f:
        f.write('#include "%s"\nint layer_probe(void);\nint layer_probe(void) { return 0; }\n' % header)
    r = subprocess.run(args + ["-fdiagnostics-color=never", "-fsyntax-only", probe], cwd=directory, capture_output=True, text=True)
    return r.returncode == 0, r.stderr


def expectations(layer):
    """(header, must_compile) pairs for a layer."""
    pairs = [(HEADER[l], l in SEES[layer]) for l in LAYERS]
    pairs.append((HEADER["public"], layer in SEES_PUBLIC))
    return pairs


def check_probes(entries, tmp, report):
    for layer in LAYERS:
        directory, args = layer_command(entries, layer)
        if args is None:
            if layer in OPTIONAL:
                print("skip %s: the layer library is not built here" % layer)
            else:
                report(False, "%s: no compile command of the layer library" % layer)
            continue
        for header, must in expectations(layer):
            ok, err = compiles(directory, args, header, tmp)
            if must:
                report(ok, "%s may include %s" % (layer, header), err)
            else:
                why = "%s: No such file" % header in err
                report(not ok and why, "%s cannot include %s" % (layer, header), err)


def check_include_paths(root, report):
    pattern = re.compile(r'^\s*#\s*include\s+"([^"]*/[^"]*)"', re.M)
    for layer in LAYERS:
        bad = []
        for d, _, files in os.walk(os.path.join(root, SOURCE_DIRS[layer])):
            for name in files:
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(d, name)
                with open(path, encoding="utf-8") as f:
                    bad += ["%s: %s" % (os.path.relpath(path, root), m) for m in pattern.findall(f.read())]
        report(not bad, "%s sources include by file name only" % layer, "\n".join(bad))


def main(build_dir):
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(build_dir, "compile_commands.json"), encoding="utf-8") as f:
        entries = json.load(f)
    counts = [0, 0]

    def report(ok, name, detail=""):
        counts[0 if ok else 1] += 1
        print("%s %s" % ("ok  " if ok else "FAIL", name))
        if not ok and detail:
            print("    " + detail.strip().replace("\n", "\n    "))

    with tempfile.TemporaryDirectory() as tmp:
        check_probes(entries, tmp, report)
    check_include_paths(root, report)
    print("check_layers: %d passed, %d failed" % (counts[0], counts[1]))
    return 0 if counts[1] == 0 else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "build"))
