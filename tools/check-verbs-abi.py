#!/usr/bin/env python3
"""Proves that softdpu's include/infiniband headers equal rdma-core v44's.

The reference is the copy Debian installs in /usr/include/infiniband
(libibverbs-dev 44.0). Both sets are read by clang; from Debian's this
takes every struct/union with its members, every enum constant, every
function and every macro its headers define, and then checks ours:

  - each record's members, in order, with the same canonical types
    (typedef names resolved) and bit-field widths;
  - sizeof/alignof of each record and enum, offsetof and sizeof of each
    member, and for bit-fields the bytes an all-ones store sets, printed by
    one probe program built against each set;
  - each enum constant's value;
  - each object-like macro's expansion (or, when spelled differently, its
    evaluated value) and each function-like macro's parameters and tokens;
  - each function's canonical type, and a translation unit that includes
    our headers and declares every function again with Debian's prototype;
  - what the inline functions do: tools/verbs_abi_behaviour.c, built against
    each set, calls them on chosen inputs and on a fake device whose
    operations record their calls, and the two outputs must be equal.

Everything Debian has that ours lacks is a mismatch; what is left out on
purpose is listed in EXCLUDED with the reason. All of it runs twice, plain
and with -mssse3 (mlx5dv's x86 helpers). Prints each mismatch by name and
"verbs_abi: N passed, N failed" (one case per kind of check and run); exits
0 when equal, 1 on any mismatch, 77 (skip) without clang or Debian's headers.

Usage: tools/check-verbs-abi.py [--root DIR] [-v]
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

SKIP = 77
DEBIAN_DIR = '/usr/include/infiniband'
HEADERS = ('verbs.h', 'verbs_api.h', 'ib_user_ioctl_verbs.h', 'mlx5dv.h', 'mlx5_api.h',
           'mlx5_user_ioctl_verbs.h', 'tm_types.h')
TU = ''.join('#include <infiniband/%s>\n' % h for h in ('verbs.h', 'mlx5dv.h', 'mlx5_api.h'))
# mlx5dv's x86 helpers exist only with __SSE3__ (and need SSSE3 to build): check both.
CONFIGS = (('default', []), ('ssse3', ['-mssse3']))

# Left out on purpose: name -> reason. Keys are "macro:NAME", "record:NAME",
# "function:NAME" or "enum:NAME".
EXCLUDED = {
    'macro:_RDMA_STATIC_PREFIX_': 'static linking of rdma-core providers (RDMA_STATIC_PROVIDERS); '
                                  'softdpu has none, its verbs.h stops such a build with #error',
    'macro:_RDMA_STATIC_PREFIX': 'same as _RDMA_STATIC_PREFIX_',
}


# The kinds of check, and the prefix of each mismatch's name that belongs to it.
KINDS = ('include', 'record', 'enum', 'function', 'macro', 'layout', 'behaviour')
KIND = {'include': 'include', 'record': 'record', 'enum': 'enum', 'function': 'function',
        'macro': 'macro', 'behaviour': 'behaviour'}


class Side:
    """One header set as clang sees it."""

    def __init__(self, name, flags, inc_dir):
        self.name = name
        self.flags = flags
        self.inc_dir = inc_dir
        self.records = {}    # name -> (tag, [(path, type, bitwidth)])
        self.enums = {}      # constant -> value
        self.enum_types = set()
        self.functions = {}  # name -> (canonical type, sugared type)
        self.typedefs = {}   # name -> underlying type
        self.foreign = []    # declarations taken from the other set

    def cflags(self):
        # Debian's set is found on the compiler's own search path.
        extra = [] if self.inc_dir == '/usr/include' else ['-I', self.inc_dir]
        return extra + self.flags


def run(cmd, stdin=None):
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True)


def decl_file(node, state):
    loc = node.get('loc', {})
    for part in (loc, loc.get('spellingLoc', {}), loc.get('expansionLoc', {})):
        if part.get('file'):
            state[0] = part['file']
    return state[0]


def const_value(node):
    for child in node.get('inner', []) or []:
        if 'value' in child:
            return int(child['value'])
        v = const_value(child)
        if v is not None:
            return v
    return None


def type_of(node):
    t = node.get('type', {})
    return t.get('qualType', '')


def walk_record(node, prefix, fields):
    """Member paths of a record, anonymous members flattened as C names them."""
    pending = None
    for child in node.get('inner', []) or []:
        if child['kind'] == 'RecordDecl':
            if child.get('completeDefinition'):
                pending = child
            continue
        if child['kind'] != 'FieldDecl':
            continue
        name = child.get('name', '')
        t = type_of(child)
        nested = pending is not None and ('unnamed' in t or 'anonymous' in t)
        if nested and (child.get('isImplicit') or not name):
            walk_record(pending, prefix, fields)
            pending = None
            continue
        path = prefix + name
        width = const_value(child) if child.get('isBitfield') else None
        fields.append((path, t, width))
        if nested and not t.endswith(']'):
            walk_record(pending, path + '.', fields)
        pending = None


def load(side, work):
    src = os.path.join(work, 'tu_%s.c' % side.name)
    with open(src, 'w') as f:
        f.write(TU)
    r = run(['clang', '-fsyntax-only', '-Xclang', '-ast-dump=json'] + side.cflags() + [src])
    if r.returncode:
        sys.exit('check-verbs-abi: %s headers do not compile:\n%s' % (side.name, r.stderr))
    ast = json.loads(r.stdout)
    state = [None]
    for node in ast['inner']:
        f = decl_file(node, state)
        kind = node['kind']
        if kind == 'TypedefDecl' and node.get('name'):
            side.typedefs[node['name']] = type_of(node)
        if not f or os.path.basename(f) not in HEADERS or os.path.basename(os.path.dirname(f)) != 'infiniband':
            continue
        if os.path.realpath(os.path.dirname(f)) != os.path.realpath(os.path.join(side.inc_dir, 'infiniband')):
            side.foreign.append('%s (%s)' % (node.get('name', kind), f))
            continue
        if kind == 'RecordDecl' and node.get('completeDefinition') and node.get('name'):
            fields = []
            walk_record(node, '', fields)
            side.records[node['name']] = (node['tagUsed'], fields)
        elif kind == 'EnumDecl':
            if node.get('name'):
                side.enum_types.add(node['name'])
            nxt = 0
            for c in node.get('inner', []) or []:
                if c['kind'] == 'EnumConstantDecl':
                    v = const_value(c) if c.get('inner') else nxt
                    side.enums[c['name']] = v
                    nxt = v + 1
        elif kind == 'FunctionDecl':
            side.functions[node['name']] = type_of(node)


def canonical(t, typedefs, depth=0):
    """A type string with typedef names replaced by what they name."""
    t = re.sub(r'\((unnamed|anonymous) (struct|union) at [^)]*\)', r'<anon \2>', t)
    if depth > 8:
        return t

    def sub(m):
        w = m.group(0)
        if w in typedefs:
            return canonical(typedefs[w], typedefs, depth + 1)
        return w
    out = re.sub(r'\b[A-Za-z_]\w*\b', sub, t)
    return re.sub(r'\s+', ' ', out).strip()


def macro_defs(files):
    """Names #defined in Debian's header files (their -dM values come from clang)."""
    names = set()
    for path in files:
        with open(path) as f:
            for line in f:
                m = re.match(r'\s*#\s*define\s+(\w+)', line)
                if m:
                    names.add(m.group(1))
    return names


def dump_macros(side, work):
    src = os.path.join(work, 'tu_%s.c' % side.name)
    r = run(['clang', '-E', '-dM'] + side.cflags() + [src])
    macros = {}
    for line in r.stdout.splitlines():
        m = re.match(r'#define (\w+)(\([^)]*\))? ?(.*)$', line)
        if m:
            macros[m.group(1)] = (m.group(2), m.group(3))
    return macros


def tokens(text):
    return re.sub(r'\s+', '', text or '')


def build_probe(ref, macros_to_eval):
    """A program printing the layout facts of every Debian record and enum."""
    lines = ['#include <stdio.h>', '#include <string.h>', '#include <stddef.h>', TU,
             'static void bytes(const char *k, const void *p, size_t n)',
             '{', '\tconst unsigned char *b = p;', '\tprintf("%s ", k);',
             '\tfor (size_t i = 0; i < n; i++) printf("%02x", b[i]);', '\tprintf("\\n");', '}',
             'int main(void)', '{']
    for name, (tag, fields) in sorted(ref.records.items()):
        ty = '%s %s' % (tag, name)
        lines.append('\tprintf("sizeof %s %%zu\\n", sizeof(%s));' % (name, ty))
        lines.append('\tprintf("alignof %s %%zu\\n", _Alignof(%s));' % (name, ty))
        for path, t, width in fields:
            key = '%s.%s' % (name, path)
            if width is None:
                lines.append('\tprintf("offsetof %s %%zu\\n", offsetof(%s, %s));' % (key, ty, path))
                if not t.endswith('[]'):  # a flexible array has no size
                    lines.append('\tprintf("membersize %s %%zu\\n", sizeof(((%s *)0)->%s));' % (key, ty, path))
            else:
                lines.append('\t{ %s v; memset(&v, 0, sizeof(v)); v.%s = -1; bytes("bitfield %s", &v, sizeof(v)); }'
                             % (ty, path, key))
    for name in sorted(ref.enum_types):
        lines.append('\tprintf("sizeof enum %s %%zu\\n", sizeof(enum %s));' % (name, name))
    for name in sorted(ref.enums):
        lines.append('\tprintf("enum %s %%lld\\n", (long long)%s);' % (name, name))
    for name in sorted(macros_to_eval):
        lines.append('\tprintf("macro %s %%lld\\n", (long long)(%s));' % (name, name))
    lines += ['\treturn 0;', '}']
    return '\n'.join(lines) + '\n'


def run_probe(side, work, text):
    src = os.path.join(work, 'probe_%s.c' % side.name)
    exe = os.path.join(work, 'probe_%s' % side.name)
    with open(src, 'w') as f:
        f.write(text)
    r = run(['clang', '-std=gnu11', '-w'] + side.cflags() + [src, '-o', exe])
    if r.returncode:
        return None, r.stderr
    out = run([exe]).stdout
    facts = {}
    for line in out.splitlines():
        k, _, v = line.rpartition(' ')
        facts[k] = v
    return facts, ''


def numeric_macros(side, work, names):
    """Which macros evaluate as integer constant expressions on this side."""
    ok = set()
    for name in sorted(names):
        src = os.path.join(work, 'mac_%s.c' % side.name)
        with open(src, 'w') as f:
            f.write(TU + 'static const long long softdpu_probe = (long long)(%s);\n' % name)
        if run(['clang', '-fsyntax-only', '-w'] + side.cflags() + [src]).returncode == 0:
            ok.add(name)
    return ok


def redeclare(ref, side, work):
    """Declares every Debian function with Debian's prototype after our headers."""
    lines = [TU]
    owners = {}
    for name, t in sorted(ref.functions.items()):
        depth, cut = 0, None
        for i in range(len(t) - 1, -1, -1):
            if t[i] == ')':
                depth += 1
            elif t[i] == '(':
                depth -= 1
                if depth == 0:
                    cut = i
                    break
        if cut is None:
            continue
        owners[len(lines) + 1] = name
        lines.append('%s (%s)%s;' % (t[:cut].rstrip(), name, t[cut:]))
    src = os.path.join(work, 'redecl_%s.c' % side.name)
    with open(src, 'w') as f:
        f.write('\n'.join(lines) + '\n')
    r = run(['clang', '-fsyntax-only'] + side.cflags() + [src])
    bad = set()
    for m in re.finditer(r'redecl_%s\.c:(\d+):\d+: error' % re.escape(side.name), r.stderr):
        line = int(m.group(1))
        bad.add(owners.get(line, 'line %d' % line))
    return bad


def behaviour(cfg, ref, ours, work, miss):
    """Runs the inline-function probe built against each set; outputs must be equal."""
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'verbs_abi_behaviour.c')
    outs = []
    for side in (ref, ours):
        exe = os.path.join(work, 'behaviour_%s' % side.name)
        r = run(['clang', '-std=gnu11', '-O0', '-w'] + side.cflags() + [src, '-o', exe])
        if r.returncode:
            if side is ref:
                sys.exit('check-verbs-abi: the behaviour probe does not build against v44:\n' + r.stderr)
            miss('behaviour', 'the probe does not build against our headers:\n' + r.stderr)
            return 0
        r = run([exe])
        if r.returncode:
            miss('behaviour', '%s probe exited with %d' % (side.name, r.returncode))
        outs.append(r.stdout.splitlines())
    shown = 0
    for i in range(max(len(outs[0]), len(outs[1]))):
        a = outs[0][i] if i < len(outs[0]) else '<end>'
        b = outs[1][i] if i < len(outs[1]) else '<end>'
        if a != b and shown < 20:
            miss('behaviour line %d' % (i + 1), 'v44 "%.100s", ours "%.100s"' % (a, b))
            shown += 1
    return len(outs[0])


def compare(cfg, ref, ours, ref_macros, our_macros, macro_names, work, problems, checked, verbose):
    def miss(key, what):
        if key in EXCLUDED:
            return
        problems.append('[%s] %s: %s' % (cfg, key, what))

    for item in ours.foreign:
        miss('include', 'declaration comes from %s, not from our headers' % item)

    for name, (tag, fields) in sorted(ref.records.items()):
        key = 'record:%s' % name
        if name not in ours.records:
            miss(key, 'missing')
            continue
        otag, ofields = ours.records[name]
        if otag != tag:
            miss(key, '%s here, %s in v44' % (otag, tag))
        rf = [(p, canonical(t, ref.typedefs), w) for p, t, w in fields]
        of = [(p, canonical(t, ours.typedefs), w) for p, t, w in ofields]
        if [f[0] for f in rf] != [f[0] for f in of]:
            miss(key, 'members differ: v44 %s, ours %s' % ([f[0] for f in rf], [f[0] for f in of]))
            continue
        for a, b in zip(rf, of):
            if a != b:
                miss(key, 'member %s: v44 "%s"%s, ours "%s"%s' % (
                    a[0], a[1], '' if a[2] is None else ':%d' % a[2],
                    b[1], '' if b[2] is None else ':%d' % b[2]))

    for name in sorted(ref.enum_types - ours.enum_types):
        miss('enum:%s' % name, 'enum type missing')
    for name, v in sorted(ref.enums.items()):
        if name not in ours.enums:
            miss('enum:%s' % name, 'missing')
        elif ours.enums[name] != v:
            miss('enum:%s' % name, 'v44 %d, ours %d' % (v, ours.enums[name]))

    for name, t in sorted(ref.functions.items()):
        key = 'function:%s' % name
        if name not in ours.functions:
            miss(key, 'missing')
        elif canonical(t, ref.typedefs) != canonical(ours.functions[name], ours.typedefs):
            miss(key, 'v44 "%s", ours "%s"' % (t, ours.functions[name]))
    for name in sorted(redeclare(ref, ours, work)):
        miss('function:%s' % name, "v44's prototype does not match our declaration")

    # Macros: same parameters and tokens, or the same integer value.
    evaluate = set()
    for name in sorted(macro_names):
        key = 'macro:%s' % name
        if name not in ref_macros:
            continue
        if name not in our_macros:
            miss(key, 'missing')
            continue
        (rp, rv), (op, ov) = ref_macros[name], our_macros[name]
        if tokens(rp) != tokens(op):
            miss(key, 'parameters v44 %s, ours %s' % (rp, op))
        elif tokens(rv) != tokens(ov):
            if rp:
                miss(key, 'v44 expands to "%s", ours to "%s"' % (rv, ov))
            else:
                evaluate.add(name)
    ref_num = numeric_macros(ref, work, evaluate)
    our_num = numeric_macros(ours, work, evaluate)
    for name in sorted(evaluate - ref_num):
        miss('macro:%s' % name, 'v44 expands to "%s", ours to "%s"' % (ref_macros[name][1], our_macros[name][1]))
    for name in sorted(ref_num - our_num):
        miss('macro:%s' % name, 'not an integer constant here ("%s")' % our_macros[name][1])
    numeric = ref_num & our_num

    probe = build_probe(ref, numeric)
    rfacts, err = run_probe(ref, work, probe)
    if rfacts is None:
        sys.exit('check-verbs-abi: the probe does not build against v44:\n' + err)
    ofacts, err = run_probe(ours, work, probe)
    if ofacts is None:
        miss('probe', 'the layout probe does not build against our headers:\n' + err)
        return
    for k in sorted(rfacts):
        if ofacts.get(k) != rfacts[k]:
            miss(k, 'v44 %s, ours %s' % (rfacts[k], ofacts.get(k)))
    counted = behaviour(cfg, ref, ours, work, miss) + len(ref.records) + len(ref.enums) + len(ref.functions) + len(
        [n for n in macro_names if n in ref_macros]) + len(rfacts)
    checked[0] += counted
    if verbose:
        print('[%s] %d records, %d enum constants, %d functions, %d macros, %d layout facts' % (
            cfg, len(ref.records), len(ref.enums), len(ref.functions),
            len([n for n in macro_names if n in ref_macros]), len(rfacts)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--root', default=os.path.join(os.path.dirname(os.path.abspath(__file__)), '..'))
    ap.add_argument('-v', action='store_true')
    args = ap.parse_args()
    if not os.path.exists(os.path.join(DEBIAN_DIR, 'verbs.h')) or not shutil.which('clang'):
        print('verbs_abi: skipped (needs clang and libibverbs-dev)')
        return SKIP
    ours_dir = os.path.join(os.path.abspath(args.root), 'include')
    problems = []
    checked = [0]
    macro_names = macro_defs(os.path.join(DEBIAN_DIR, h) for h in HEADERS)
    with tempfile.TemporaryDirectory(prefix='verbs-abi-') as work:
        for cfg, flags in CONFIGS:
            ref = Side('v44_' + cfg, flags, '/usr/include')
            ours = Side('ours_' + cfg, flags, ours_dir)
            load(ref, work)
            load(ours, work)
            compare(cfg, ref, ours, dump_macros(ref, work), dump_macros(ours, work), macro_names,
                    work, problems, checked, args.v)
    seen = set()
    for p in problems:
        body = p.split('] ', 1)[1]
        if body in seen:
            continue
        seen.add(body)
        print('MISMATCH ' + p)
    print('checked %d facts; excluded on purpose: %s' % (checked[0], ', '.join(sorted(EXCLUDED))))
    # One case per kind of check and configuration, in the form the test
    # binaries print; a case fails when any of its facts differs.
    bad = set()
    for p in problems:
        cfg, key = p[1:].split('] ', 1)
        bad.add((cfg, KIND.get(re.split(r'[: ]', key)[0], 'layout')))
    cases = len(CONFIGS) * len(KINDS)
    print('verbs_abi: %d passed, %d failed' % (cases - len(bad), len(bad)))
    return 1 if seen else 0


if __name__ == '__main__':
    sys.exit(main())
