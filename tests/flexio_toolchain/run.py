#!/usr/bin/env python3
"""Tests of softdpu's FlexIO device-code toolchain (tools/flexio).

Usage: run.py --dpacc PATH --script PATH --installed-script PATH [--cc CC]
              [--dev-rt PATH] [--dev-rt-installed RELPATH] [--sanitize B_SANITIZE]

  - dev_awkward.c through dpacc, with the build's compiler and with clang:
    the generated code builds warning-free, the image is as designed, and
    roundtrip.c, linked with the archive, checks the registrations, the
    argument layout and every call;
  - a device runtime (--dev-rt and DPACC_DEV_RT) is linked whole;
  - --sanitize=address: the round trip with ASan on both sides;
  - refusals.c: what dpacc must refuse, and how it says so;
  - build_flexio_device.sh by the vendor's interface, in the build tree
    (--script) and in an installed layout (--installed-script).

--dev-rt is the device runtime the build-tree script links (empty: none);
--sanitize is the build's b_sanitize, which that runtime was built with.
Prints "flexio_toolchain: N passed, N failed" last (a round trip counts its
cases).
"""
import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile

NAME = "flexio_toolchain"
HERE = os.path.dirname(os.path.abspath(__file__))
AWKWARD = os.path.join(HERE, "dev_awkward.c")
REFUSALS = os.path.join(HERE, "refusals.c")

# Device code is built as strictly as vendor samples build theirs.
DEVICE_FLAGS = ["-DTOOLCHAIN_SCALE=3", "-Wall", "-Wextra", "-Wpedantic", "-Wshadow",
                "-Wstrict-prototypes", "-Werror"]
# The generated host file, stricter than it has to be.
HOST_STRICT = ["-std=c11", "-Wall", "-Wextra", "-Wpedantic", "-Wshadow", "-Wconversion",
               "-Wmissing-prototypes", "-Wstrict-prototypes", "-Werror"]

# refusals.c cases: (CASE_ macro, exit status, patterns its stderr must match).
REFUSAL_CASES = [
    ("STRUCT", 1, [r"function 'rpc_struct': argument 2 'p' of type 'struct mixed' is passed partly "
                   r"in floating-point registers"]),
    ("DOUBLE", 1, [r"function 'rpc_double': argument 3 'd' of type 'double' is floating-point"]),
    ("VARIADIC", 1, [r"function 'rpc_variadic': argument 2 '\.\.\.': variadic"]),
    ("UNION", 1, [r"function 'rpc_union': argument 1 'w' .* is a union aligned to 16 bytes"]),
    ("ARRAY", 1, [r"function 'rpc_array': argument 1 'v' .* is an array"]),
    ("INT128", 1, [r"function 'rpc_wide': argument 1 'w' .* 16-byte integer"]),
    ("RET_STRUCT", 1, [r"function 'rpc_ret_struct': the return type 'struct pair' is a struct"]),
    ("HANDLER_RET", 1, [r"event handler 'handler_ret' must return void"]),
    ("STATIC", 1, [r"device function 'rpc_static' is static"]),
    ("SYNTAX", 1, [r"cannot parse this declaration"]),
    ("SYNTAX_HEADER", 1, [r"cannot parse this declaration"]),
    ("MEMBER", 1, [r"__dpa_rpc__ is allowed only on a file-scope function"]),
    ("NOT_FUNCTION", 1, [r"'counter' is not a function"]),
    ("UNKNOWN_TYPE", 1, [r"mystery_t", r"dpacc: error: probing the argument types"]),
    ("UNDEFINED", 0, [r"warning: .*'rpc_elsewhere' is declared but not defined"]),
    ("NONE", 0, [r"warning: .*no __dpa_rpc__ or __dpa_global__ function"]),
]


class Tally:
    def __init__(self):
        self.passed = self.failed = 0

    def skip(self, name, why):
        """A case whose tool is missing: a failure where CI installs every tool (SOFTDPU_CI_NO_SKIP)."""
        if os.environ.get("SOFTDPU_CI_NO_SKIP", "") not in ("", "0"):
            return self.check(False, name, f"skipped ({why}), but SOFTDPU_CI_NO_SKIP requires it")
        print(f"skip {name}: {why}")
        return False

    def check(self, cond, name, detail=""):
        if cond:
            self.passed += 1
            print(f"ok {name}")
        else:
            self.failed += 1
            detail = detail.strip()
            if len(detail) > 3000:
                detail = "..." + detail[-3000:]
            print(f"FAIL {name}" + (f":\n{detail}" if detail else ""))
        return bool(cond)


def run(cmd, env=None, cwd=None):
    try:
        return subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                              cwd=cwd, encoding="utf-8", errors="replace", timeout=300)
    except (OSError, subprocess.TimeoutExpired) as e:
        return subprocess.CompletedProcess(cmd, 127, "", f"{cmd[0]}: {e}")


class Suite:
    def __init__(self, args, work):
        self.args, self.work = args, work
        self.t = Tally()
        self.cc = shlex.split(args.cc)

    def dpacc(self, argv, env=None):
        return run([sys.executable, self.args.dpacc] + argv, env=env)

    def cc_arg(self, cc):
        return " ".join(shlex.quote(c) for c in cc)

    # ---- pieces used by several cases ----

    def roundtrip(self, name, cc, archive, extra=(), env=None):
        """Links roundtrip.c with archive, runs it and adds its own checks."""
        exe = os.path.join(self.work, re.sub(r"\W+", "_", name))
        r = run(cc + ["-std=gnu11", "-Wall", "-Wextra", "-Werror", "-rdynamic", "-I", HERE] +
                list(extra) + [os.path.join(HERE, "roundtrip.c"), archive, "-ldl", "-o", exe])
        if not self.t.check(r.returncode == 0, f"{name}: the program links", r.stderr):
            return
        r = run([exe], env=env)
        for line in r.stdout.splitlines():
            if line.startswith("FAIL"):
                print(f"{name}: {line}")
        m = re.search(r"^roundtrip: (\d+) passed, (\d+) failed$", r.stdout, re.M)
        if m and r.returncode == 0:
            self.t.passed += int(m.group(1))
            print(f"ok {name}: {m.group(1)} cases")
        else:
            # a crash counts once; a completed run counts its failed cases
            self.t.failed += max(1, int(m.group(2)) if m else 1)
            print(f"FAIL {name}:\n{r.stdout[-2000:]}{r.stderr[-2000:]}")

    def symbols(self, path, *opts):
        r = run(["nm"] + list(opts) + [path])
        return r.stdout if r.returncode == 0 else ""

    def check_image(self, tag, image):
        r = run(["readelf", "-d", image])
        self.t.check(r.returncode == 0 and "(SONAME)" not in r.stdout and "SYMBOLIC" in r.stdout,
                     f"{tag}: the image has no DT_SONAME and is linked -Bsymbolic",
                     r.stdout + r.stderr)
        dyn = self.symbols(image, "-D", "--defined-only")
        missing = [sym for sym in ("__dpa_unpack_rpc_widths", "__dpa_unpack_on_event", "rpc_widths",
                                   "on_event") if not re.search(rf"^\S+ T {sym}$", dyn, re.M)]
        self.t.check(not missing, f"{tag}: the image exports its functions and unpackers",
                     "missing: " + " ".join(missing))

    def check_rt_linked(self, tag, image, archive):
        """Every global of the runtime archive is in the image (linked whole)."""
        want = set(re.findall(r"^\S+ [A-Z] (\S+)$", self.symbols(archive, "-g", "--defined-only"),
                              re.M))
        have = set(re.findall(r"^\S+ \S (\S+)$", self.symbols(image, "--defined-only"), re.M))
        self.t.check(want and want <= have, f"{tag}: the device runtime is linked whole",
                     "missing: " + " ".join(sorted(want - have)))

    # ---- the cases ----

    def case_cli(self):
        t = self.t
        r = self.dpacc(["--help"])
        t.check(r.returncode == 0 and "usage: dpacc.py" in r.stdout, "dpacc --help")
        for argv, what in (([], "no arguments"),
                           (["--app", "1abc", "--out", self.work, AWKWARD], "an app name that is no C identifier"),
                           (["--app", "a", "--out", self.work, "--bogus", AWKWARD], "an unknown option"),
                           (["--app", "a", "--out", self.work, "--sanitize=thread", AWKWARD], "--sanitize=thread"),
                           (["--app", "a", "--out", self.work, "/nonexistent.c"], "a missing source")):
            r = self.dpacc(argv)
            t.check(r.returncode == 1 and r.stderr.startswith("dpacc: "), f"dpacc refuses {what}",
                    r.stderr)
        r = run(["sh", self.args.script, "only_two", AWKWARD])
        t.check(r.returncode == 1 and "usage:" in r.stderr, "build_flexio_device.sh: usage",
                r.stderr)

    def case_awkward(self, tag, cc):
        t = self.t
        out = os.path.join(self.work, tag)
        r = self.dpacc(["--cc", self.cc_arg(cc), "--app", "awk", "--out", out, "--keep-temps"] +
                       DEVICE_FLAGS + [AWKWARD])
        if not t.check(r.returncode == 0 and "warning" not in r.stderr,
                       f"{tag}: dpacc builds dev_awkward.c warning-free", r.stderr):
            return
        temps = os.path.join(out, "awk.dpacc")
        r = run(cc + HOST_STRICT + ["-c", os.path.join(temps, "awk_host.c"), "-o", os.devnull])
        t.check(r.returncode == 0, f"{tag}: the generated host code is warning-free", r.stderr)
        self.check_image(tag, os.path.join(temps, "awk.so"))
        host = self.symbols(os.path.join(out, "awk.a"))
        missing = [pat for pat in (r"[BD] awk", r"T rpc_widths", r"T on_alias_b",
                                   r"t __dpa_pack_rpc_widths", r"[Rr] __dpa_image_awk")
                   if not re.search(rf"^\S+ {pat}$", host, re.M)]
        t.check(not missing, f"{tag}: awk.a defines the app, stubs, packers and image",
                "missing: " + " ".join(missing))
        self.roundtrip(f"{tag}: roundtrip", cc, os.path.join(out, "awk.a"))

    def case_dev_rt(self):
        t = self.t
        rt = os.path.join(self.work, "rt")
        os.makedirs(rt)
        objs = []
        for part, flags in (("value", []), ("unref", ["-DRT_PART_UNREFERENCED"])):
            o = os.path.join(rt, f"rt_{part}.o")
            r = run(self.cc + ["-fPIC", "-O2", "-c"] + flags + [os.path.join(HERE, "rt_fake.c"),
                                                               "-o", o])
            if not t.check(r.returncode == 0, f"dev-rt: compile rt_fake.c ({part})", r.stderr):
                return
            objs.append(o)
        lib = os.path.join(rt, "librt_fake.a")
        r = run(["ar", "rcs", lib] + objs)
        if not t.check(r.returncode == 0, "dev-rt: archive", r.stderr):
            return
        out = os.path.join(rt, "opt")
        r = self.dpacc(["--cc", self.cc_arg(self.cc), "--app", "awk", "--out", out, "--dev-rt", lib,
                        "-DDPACC_TEST_RT"] + DEVICE_FLAGS + [AWKWARD])
        if t.check(r.returncode == 0, "dev-rt: dpacc --dev-rt", r.stderr):
            self.roundtrip("dev-rt: roundtrip", self.cc, os.path.join(out, "awk.a"),
                           ["-DDPACC_TEST_RT"])
        out = os.path.join(rt, "env")
        env = dict(os.environ, DPACC_DEV_RT=lib)
        r = self.dpacc(["--cc", self.cc_arg(self.cc), "--app", "awk", "--out", out, "--keep-temps",
                        "-DDPACC_TEST_RT"] + DEVICE_FLAGS + [AWKWARD], env=env)
        if t.check(r.returncode == 0, "dev-rt: dpacc with DPACC_DEV_RT", r.stderr):
            self.check_rt_linked("dev-rt (DPACC_DEV_RT)", os.path.join(out, "awk.dpacc", "awk.so"),
                                 lib)

    def asan_works(self):
        src = os.path.join(self.work, "asan_probe.c")
        exe = os.path.join(self.work, "asan_probe")
        with open(src, "w") as f:
            f.write("int main(void) { return 0; }\n")
        r = run(self.cc + ["-fsanitize=address", src, "-o", exe])
        return r.returncode == 0 and run([exe]).returncode == 0

    def case_asan(self):
        if not self.asan_works():
            self.t.skip("--sanitize=address", "this compiler cannot build and run an ASan program")
            return
        t = self.t
        out = os.path.join(self.work, "asan")
        r = self.dpacc(["--cc", self.cc_arg(self.cc), "--app", "awk", "--out", out, "--keep-temps",
                        "--sanitize=address"] + DEVICE_FLAGS + [AWKWARD])
        if not t.check(r.returncode == 0, "asan: dpacc --sanitize=address", r.stderr):
            return
        undef = self.symbols(os.path.join(out, "awk.dpacc", "awk.so"), "-u")
        t.check("__asan_" in undef, "asan: the image is instrumented")
        opts = os.environ.get("ASAN_OPTIONS", "")
        env = dict(os.environ, ASAN_OPTIONS=(opts + ":" if opts else "") + "detect_leaks=0")
        self.roundtrip("asan: roundtrip", self.cc, os.path.join(out, "awk.a"),
                       ["-fsanitize=address"], env=env)

    def where_lines(self):
        """{case: (file, line)} of the lines marked @where in refusals.c and its header."""
        where, case = {}, None
        with open(REFUSALS) as f:
            for n, line in enumerate(f, 1):
                m = re.match(r"#(?:el)?if defined\(CASE_(\w+)\)", line)
                if m:
                    case = m.group(1)
                elif "@where" in line and case:
                    where[case] = ("refusals.c", n)
        with open(os.path.join(HERE, "refusals_header.h")) as f:
            for n, line in enumerate(f, 1):
                if "@where" in line:
                    where["SYNTAX_HEADER"] = ("refusals_header.h", n)
        return where

    def case_refusals(self):
        t = self.t
        where = self.where_lines()
        for case, status, patterns in REFUSAL_CASES:
            out = os.path.join(self.work, "refusal_" + case.lower())
            r = self.dpacc(["--cc", self.cc_arg(self.cc), "--app", "refused", "--out", out,
                            f"-DCASE_{case}", REFUSALS])
            name = f"refusal {case}"
            ok = r.returncode == status and all(re.search(p, r.stderr) for p in patterns)
            if status != 0:
                lines = r.stderr.strip().splitlines()
                ok = ok and lines and lines[-1].startswith("dpacc: ")
                ok = ok and not os.path.exists(os.path.join(out, "refused.a"))
            else:
                ok = ok and os.path.isfile(os.path.join(out, "refused.a"))
            if case in where:
                file, line = where[case]
                ok = ok and re.search(rf"{re.escape(file)}:{line}: ", r.stderr)
                name += f" at {file}:{line}"
            t.check(ok, name, f"exit {r.returncode}\n{r.stderr}")

    def case_script_build_tree(self):
        """The vendor's interface: build_flexio_device.sh <app> <source> <out_dir> [flags]."""
        t = self.t
        out = os.path.join(self.work, "script")
        env = dict(os.environ, CC=self.cc_arg(self.cc), DPACC_FLAGS="--keep-temps")
        r = run(["sh", self.args.script, "awk_script", AWKWARD, out] + DEVICE_FLAGS, env=env)
        archive = os.path.join(out, "awk_script.a")
        if not t.check(r.returncode == 0 and os.path.isfile(archive),
                       "build_flexio_device.sh awk_script dev_awkward.c out (build tree)", r.stderr):
            return
        extra = ["-DAPP=awk_script"]
        dev_rt = self.args.dev_rt
        if dev_rt:
            self.check_rt_linked("build tree script", os.path.join(out, "awk_script.dpacc",
                                                                   "awk_script.so"), dev_rt)
            # the runtime is built with the build's sanitizers: the program needs their runtimes
            if self.args.sanitize not in ("", "none"):
                extra.append("-fsanitize=" + self.args.sanitize)
        self.roundtrip("build tree script: roundtrip", self.cc, archive, extra)

    def case_script_installed(self):
        """The script as installed in <prefix>/tools: dpacc.py beside it, <prefix>/include."""
        t = self.t
        prefix = os.path.join(self.work, "prefix")
        tools = os.path.join(prefix, "tools")
        inc = os.path.join(prefix, "include")
        os.makedirs(tools)
        os.makedirs(inc)
        script = os.path.join(tools, "build_flexio_device.sh")
        shutil.copyfile(self.args.installed_script, script)
        os.chmod(script, 0o755)
        shutil.copyfile(self.args.dpacc, os.path.join(tools, "dpacc.py"))
        with open(os.path.join(inc, "toolchain_layout.h"), "w") as f:
            f.write("#define TOOLCHAIN_LAYOUT_VALUE 0x1a40u\n")
        with open(script) as f:
            text = f.read()
        src_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(self.args.dpacc))))
        t.check(src_root not in text, "installed script: no path of the source tree")
        if self.args.dev_rt and self.args.dev_rt_installed:
            dst = os.path.join(prefix, self.args.dev_rt_installed)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            shutil.copyfile(self.args.dev_rt, dst)
        env = dict(os.environ, CC=self.cc_arg(self.cc), DPACC_FLAGS="--keep-temps")
        # run by a relative path from elsewhere: the script finds itself from $0
        r = run(["sh", os.path.join("prefix", "tools", "build_flexio_device.sh"), "layout_app",
                 os.path.join(HERE, "dev_layout.c"), "out_layout", "-Wall", "-Werror"],
                env=env, cwd=self.work)
        archive = os.path.join(self.work, "out_layout", "layout_app.a")
        if not t.check(r.returncode == 0 and os.path.isfile(archive),
                       "installed build_flexio_device.sh (finds dpacc.py and <prefix>/include)",
                       r.stderr):
            return
        syms = self.symbols(archive)
        t.check(re.search(r"^\S+ T rpc_layout$", syms, re.M) and
                re.search(r"^\S+ [BD] layout_app$", syms, re.M), "installed script: layout_app.a")
        if self.args.dev_rt and self.args.dev_rt_installed:
            self.check_rt_linked("installed script", os.path.join(
                self.work, "out_layout", "layout_app.dpacc", "layout_app.so"), self.args.dev_rt)

    def run_all(self):
        self.case_cli()
        self.case_awkward("cc", self.cc)
        clang = shutil.which("clang")
        if not clang:
            self.t.skip("clang", "not installed")
        elif os.path.basename(self.cc[-1]) != "clang":
            self.case_awkward("clang", [clang])
        else:
            print("clang: the build's compiler, run above as cc")
        self.case_dev_rt()
        self.case_asan()
        self.case_refusals()
        self.case_script_build_tree()
        self.case_script_installed()


def main():
    ap = argparse.ArgumentParser(description="Tests of tools/flexio (dpacc, build_flexio_device.sh)")
    ap.add_argument("--dpacc", required=True)
    ap.add_argument("--script", required=True, help="build_flexio_device.sh of the build tree")
    ap.add_argument("--installed-script", required=True, help="its configuration for installing")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    ap.add_argument("--dev-rt", default="")
    ap.add_argument("--dev-rt-installed", default="")
    ap.add_argument("--sanitize", default="none")
    args = ap.parse_args()
    work = tempfile.mkdtemp(prefix="flexio_toolchain-")
    suite = Suite(args, work)
    try:
        suite.run_all()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    t = suite.t
    print(f"{NAME}: {t.passed} passed, {t.failed} failed")
    return 0 if t.failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
