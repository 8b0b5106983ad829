#!/usr/bin/env python3
"""dpacc: softdpu's FlexIO device-code compiler driver.

Usage: dpacc.py --app NAME --out DIR [options] SOURCE

Builds the device code of one FlexIO application into DIR/NAME.a, the static
library a host program links (what the vendor's DPACC produces). On softdpu
device code runs inside the host process: the device image is a
position-independent shared object built by the host compiler, which the
FlexIO runtime loads once per FlexIO process (memfd + dlopen).

Steps:
  1. preprocess SOURCE with the keywords __dpa_rpc__ / __dpa_global__ turned
     into markers, and parse the preprocessed text for the functions that
     carry them;
  2. learn each argument's size and kind by compiling probes in the source's
     own context (so its typedefs resolve) and reading back a table the probe
     puts in a dedicated section;
  3. compile the image from a wrapper that includes SOURCE and adds, per
     function f, the unpacker __dpa_unpack_f;
  4. compile the host side (image bytes, host stubs, packers, a constructor
     that registers everything with libflexio) and archive it.

Exit status 0 on success, 1 on any error (messages on stderr, "dpacc:" first).
Python 3 standard library only.
"""
import os
import re
import shlex
import shutil
import struct
import subprocess
import sys
import tempfile

PROG = "dpacc"

USAGE = """\
usage: dpacc.py --app NAME --out DIR [options] SOURCE

Builds the FlexIO device code in SOURCE into DIR/NAME.a (the device image and
the host code that registers it), as the vendor's DPACC does.

options:
  --app NAME          application name: the host's `struct flexio_app *NAME`
  --out DIR           output directory (created if missing)
  --dev-rt ARCHIVE    device runtime linked whole into the image (repeatable;
                      default: the whitespace-separated list in $DPACC_DEV_RT)
  --cc CC             C compiler (default: $CC, else cc)
  --sanitize=address  build the device image with AddressSanitizer (the host
                      program must then be built with it too)
  --keep-temps        keep the generated files in DIR/NAME.dpacc/
  -v, --verbose       print the commands run
  -h, --help          this text

Compiler flags passed to every compile of the device code:
  -I DIR, -D NAME[=VAL], -U NAME, -include FILE, -isystem DIR, -iquote DIR,
  -idirafter DIR, -O*, -g*, -W*, -f*, -m*, -std=*, -pedantic*, -w

Device functions are marked with the keywords __dpa_rpc__ (called from the
host with flexio_process_call, returns an integer or pointer, or void) and
__dpa_global__ (an event handler, returns void). Arguments must be integers
(any width, signed or not, _Bool, enums), pointers, or structs and unions
of at most 8-byte alignment whose bytes are passed as integers (no floating-
point member in the first 16 bytes; DPACC's `struct __dpa_global__ name`
marks such a struct, and the marker is accepted and ignored).

environment: CC, AR (default ar), OBJCOPY (default objcopy), DPACC_DEV_RT
"""

# What the keywords become when parsing: identifiers no source uses.
MARK_RPC = "__dpacc_marker_rpc__"
MARK_GLOBAL = "__dpacc_marker_global__"
MARK_NAMES = {MARK_RPC: "__dpa_rpc__", MARK_GLOBAL: "__dpa_global__"}
# What they become when compiling: the runtime finds device functions with
# dlsym, so they must be exported whatever -fvisibility the user passes.
KEYWORD_EXPANSION = '__attribute__((visibility("default")))'

SIG_SECTION = ".dpa_sig"
SIG_MAGIC = 0x4450415349470001  # "DPASIG", version 1

# __builtin_classify_type results (GCC's typeclass.h; clang uses the same).
CLASS_INTEGER = {1, 2, 3, 4}  # integer, char, enum, boolean
CLASS_POINTER = 5
CLASS_RECORD = {12, 13}  # struct, union
CLASS_NAMES = {0: "void", 6: "a reference", 7: "an offset", 8: "floating-point", 9: "complex",
               10: "a function", 11: "a method", 12: "a struct", 13: "a union", 14: "an array",
               15: "a string", 16: "a language-specific type", 18: "a _BitInt"}

C_KEYWORDS = set("""
auto break case char const continue default do double else enum extern float for goto if
inline int long register restrict return short signed sizeof static struct switch typedef
union unsigned void volatile while _Alignas _Alignof _Atomic _Bool _Complex _Generic
_Imaginary _Noreturn _Static_assert _Thread_local __inline __inline__ __restrict __restrict__
__volatile __volatile__ __const __const__ __signed __signed__ __thread __typeof __typeof__
typeof __int128 __label__ _Float16 _Float32 _Float64 _Float128 _Float32x _Float64x
__float128 __builtin_va_list __auto_type bool _BitInt
""".split())
QUALIFIERS = {"const", "volatile", "restrict", "__restrict", "__restrict__", "__const",
              "__const__", "__volatile", "__volatile__"}
# Specifiers that say how a function is stored or inlined, not what it returns.
NON_TYPE_SPECIFIERS = {"extern", "static", "inline", "__inline", "__inline__", "_Noreturn",
                       "register", "auto", "__thread", "_Thread_local", "typedef"}
# Keywords whose parenthesized operand belongs to the type, not to a declarator.
PAREN_SPECIFIERS = {"__typeof__", "__typeof", "typeof", "_Alignas", "_Atomic", "__alignof__"}
# GNU syntax that carries nothing the parser needs.
GROUP_EXTENSIONS = {"__attribute__", "__attribute", "__declspec", "__asm__", "__asm", "asm"}
ASM_QUALIFIERS = {"volatile", "__volatile__", "goto", "inline", "__inline__"}

OPENERS = {"(": ")", "[": "]", "{": "}"}


class DpaccError(Exception):
    """An error reported to the user; tok (optional) gives file:line."""

    def __init__(self, msg, tok=None):
        super().__init__(msg)
        self.tok = tok


# ---------------------------------------------------------------------------
# Tokens of the preprocessed text

class Tok:
    __slots__ = ("text", "kind", "file", "line")

    def __init__(self, text, kind, file, line):
        self.text, self.kind, self.file, self.line = text, kind, file, line

    def __repr__(self):
        return f"{self.text!r}@{self.file}:{self.line}"


TOKEN_RE = re.compile(r"""
    (?P<ws>\s+)
  | (?P<str>(?:u8|[uUL])?"(?:\\.|[^"\\])*")
  | (?P<chr>(?:u8|[uUL])?'(?:\\.|[^'\\])*')
  | (?P<id>[A-Za-z_$][A-Za-z0-9_$]*)
  | (?P<num>\.?[0-9](?:[eEpP][+-]|[A-Za-z0-9_.])*)
  | (?P<punct>\.\.\.|<<=|>>=|->|\+\+|--|<<|>>|<=|>=|==|!=|&&|\|\||[-+*/%&|^]=|\#\#|.)
""", re.X)
# cpp's line markers ("# 12 "file" 1 3") and #line directives.
LINE_MARKER_RE = re.compile(r'#\s*(?:line\s+)?(\d+)(?:\s+"((?:\\.|[^"\\])*)")?')


def unescape_cpp_name(name):
    return re.sub(r"\\(.)", r"\1", name)


def tokenize(text, first_file):
    """Tokens of preprocessed C, each knowing the source file and line it came from."""
    toks = []
    file, line = first_file, 1
    for raw in text.split("\n"):
        stripped = raw.lstrip()
        if stripped.startswith("#"):
            m = LINE_MARKER_RE.match(stripped)
            if m:
                line = int(m.group(1))
                if m.group(2) is not None:
                    file = unescape_cpp_name(m.group(2))
                continue
            line += 1  # #pragma and #ident lines survive preprocessing
            continue
        for m in TOKEN_RE.finditer(raw):
            if m.lastgroup != "ws":
                toks.append(Tok(m.group(), m.lastgroup, file, line))
        line += 1
    return toks


def skip_group(toks, i):
    """Index just past the bracket group opening at toks[i] (the end if unbalanced)."""
    stack = [OPENERS[toks[i].text]]
    i += 1
    while i < len(toks) and stack:
        t = toks[i].text
        if t in OPENERS:
            stack.append(OPENERS[t])
        elif t == stack[-1]:
            stack.pop()
        i += 1
    return i


def strip_extensions(toks):
    """Drops attributes, asm labels and __extension__: they never change a
    function's name, return type or parameters as far as dpacc is concerned."""
    out = []
    i, n = 0, len(toks)
    while i < n:
        t = toks[i].text
        if t in GROUP_EXTENSIONS:
            j = i + 1
            if t.startswith("__asm") or t == "asm":
                while j < n and toks[j].text in ASM_QUALIFIERS:
                    j += 1
            if j < n and toks[j].text == "(":
                i = skip_group(toks, j)
                continue
        elif t == "__extension__":
            i += 1
            continue
        elif t == "[" and i + 1 < n and toks[i + 1].text == "[":
            # a C23 attribute [[...]]: no C expression starts with '[['
            i = skip_group(toks, i)
            continue
        out.append(toks[i])
        i += 1
    return out


# ---------------------------------------------------------------------------
# File-scope items: a declaration up to its ';', or a function definition

class Item:
    __slots__ = ("head", "has_body")

    def __init__(self, head, has_body):
        self.head, self.has_body = head, has_body


def check_no_marker(toks, start, end):
    for t in toks[start:end]:
        if t.text in MARK_NAMES:
            raise DpaccError(f"{MARK_NAMES[t.text]} is allowed only on a file-scope function "
                             "declaration or definition", t)


def split_items(toks):
    items, cur = [], []
    i, n = 0, len(toks)
    while i < n:
        t = toks[i]
        if t.text in OPENERS:
            j = skip_group(toks, i)
            # a brace group right after ')' is a function body (attributes are gone)
            if t.text == "{" and cur and cur[-1].text == ")":
                check_no_marker(toks, i, j)
                items.append(Item(cur, True))
                cur = []
            else:
                check_no_marker(toks, i, j)
                cur.extend(toks[i:j])
            i = j
            continue
        if t.text == ";":
            if cur:
                items.append(Item(cur, False))
            cur = []
        else:
            cur.append(t)
        i += 1
    if cur:
        items.append(Item(cur, False))
    return items


def split_commas(toks):
    """Splits at top-level commas (groups stay whole)."""
    parts, cur = [], []
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.text in OPENERS:
            j = skip_group(toks, i)
            cur.extend(toks[i:j])
            i = j
            continue
        if t.text == ",":
            parts.append(cur)
            cur = []
        else:
            cur.append(t)
        i += 1
    parts.append(cur)
    return parts


def declarator_paren(toks):
    """Index of the first top-level '(' that opens a declarator or parameter
    list (not the operand of __typeof__ and the like), or -1."""
    i = 0
    while i < len(toks):
        t = toks[i].text
        if t == "(":
            if i > 0 and toks[i - 1].text in PAREN_SPECIFIERS:
                i = skip_group(toks, i)
                continue
            return i
        if t in OPENERS:
            i = skip_group(toks, i)
            continue
        i += 1
    return -1


def is_name(tok):
    return tok.kind == "id" and tok.text not in C_KEYWORDS and tok.text not in MARK_NAMES


def type_text(toks):
    """Tokens as C text (spaced, so no two tokens can merge)."""
    return " ".join(t.text for t in toks)


def pretty_type(toks):
    """Tokens as a person writes them: for messages and comments only."""
    out = ""
    prev, prev_word = None, False
    for t in toks:
        word = t.kind in ("id", "num")
        if prev is not None and (prev == "," or (prev_word and (word or t.text in "*("))):
            out += " "
        out += t.text
        prev, prev_word = t.text, word
    return out


# ---------------------------------------------------------------------------
# Declarations of functions

class Param:
    def __init__(self, pos, name, type_toks, tok, variadic=False):
        self.pos, self.name, self.type_toks, self.tok = pos, name, type_toks, tok
        self.variadic = variadic
        self.size = self.cls = self.adjusted = self.align = None
        self.signed = self.is_bool = False
        self.offset = 0

    @property
    def type(self):
        return type_text(self.type_toks)

    @property
    def pretty(self):
        return pretty_type(self.type_toks)

    def label(self):
        name = f" '{self.name}'" if self.name else ""
        return f"argument {self.pos}{name}"


class Decl:
    """One declarator of a function: NAME with its return type and either a
    parameter list or, for `KEYWORD handler_t NAME;`, a function typedef."""

    def __init__(self, name_tok, prefix, params, typedef_tok, has_body, markers):
        self.name_tok = name_tok
        self.name = name_tok.text
        self.prefix = prefix          # tokens before the name (specifiers, '*')
        self.params = params          # tokens inside the parentheses, or None
        self.typedef_tok = typedef_tok
        self.has_body = has_body
        self.markers = markers        # MARK_* carried by this declaration

    def is_static(self):
        return any(t.text == "static" for t in self.prefix)

    def ret_toks(self):
        return [t for t in self.prefix if t.text not in NON_TYPE_SPECIFIERS]


def parse_decl_item(item):
    """The function declarators of a file-scope item, or [] when it declares
    no function. Raises DpaccError (with a location) on what it cannot read."""
    markers = [t for t in item.head if t.text in MARK_NAMES]
    head = [t for t in item.head if t.text not in MARK_NAMES]
    if not head:
        if markers:
            raise DpaccError(f"{MARK_NAMES[markers[0].text]} marks nothing", markers[0])
        return []
    if any(t.text == "typedef" for t in head):
        if markers:
            raise DpaccError(f"{MARK_NAMES[markers[0].text]} cannot mark a typedef", markers[0])
        return []
    chunks = [head] if item.has_body else split_commas(head)
    first = chunks[0]
    p = declarator_paren(first)
    decls = []
    if p >= 0:
        if p == 0 or not is_name(first[p - 1]):
            raise DpaccError("cannot parse this declaration: the function name must come right "
                             "before its parameter list (parenthesized declarators, function "
                             "pointers and functions returning them are not supported)", first[p])
        q = skip_group(first, p)
        if q < len(first) and first[q].text == "(":
            raise DpaccError("cannot parse this declaration: parenthesized declarators "
                             "(`(name)(...)`, function pointers, functions returning them) "
                             "are not supported", first[p])
        if q != len(first):
            raise DpaccError("cannot parse this declaration: unexpected "
                             f"'{first[q].text}' after the parameter list", first[q])
        prefix = first[:p - 1]
        decls.append(Decl(first[p - 1], prefix, first[p + 1:q - 1], None, item.has_body, markers))
    else:
        if not is_name(first[-1]):
            raise DpaccError("cannot parse this declaration: expected a function name at "
                             f"'{first[-1].text}'", first[-1])
        prefix = first[:-1]
        decls.append(Decl(first[-1], prefix, None, None, False, markers))
    # specifiers the other declarators share: the first one's, up to its '*'
    base = []
    for t in prefix:
        if t.text == "*":
            break
        base.append(t)
    for chunk in chunks[1:]:
        if not chunk:
            raise DpaccError("cannot parse this declaration: empty declarator", first[0])
        k = 0
        while k < len(chunk) and (chunk[k].text == "*" or chunk[k].text in QUALIFIERS):
            k += 1
        if k >= len(chunk) or not is_name(chunk[k]):
            raise DpaccError("cannot parse this declaration: unsupported declarator",
                             chunk[min(k, len(chunk) - 1)])
        rest = chunk[k + 1:]
        params = None
        if rest:
            if rest[0].text != "(" or skip_group(rest, 0) != len(rest):
                raise DpaccError("cannot parse this declaration: unsupported declarator", rest[0])
            params = rest[1:-1]
        decls.append(Decl(chunk[k], base + chunk[:k], params, None, False, markers))
    # `KEYWORD handler_t NAME;`: the function type comes from a typedef
    for d in decls:
        if d.params is None:
            names = [t for t in d.prefix if is_name(t)]
            if len(names) != 1 or any(t.text == "*" for t in d.prefix):
                if markers:
                    raise DpaccError(f"'{d.name}' is not a function: expected a parameter list "
                                     "or a function typedef name", d.name_tok)
                return []
            d.typedef_tok = names[0]
    return decls


def param_name_index(toks):
    """Index of the parameter's name in toks, or None for an unnamed one."""
    def has_type_before(k):
        return any(t.text not in QUALIFIERS and t.text not in NON_TYPE_SPECIFIERS for t in toks[:k])

    p = declarator_paren(toks)
    if p >= 0:
        q = skip_group(toks, p)
        if p + 1 < q and toks[p + 1].text in ("*", "^"):
            # (*name)(...), (* const name)(...), (*name[4])(...)
            inner = [k for k in range(p + 1, q - 1) if is_name(toks[k])]
            return inner[0] if inner else None
        if p > 0 and is_name(toks[p - 1]) and has_type_before(p - 1):
            return p - 1  # a parameter of function type: T name(args)
        return None
    end = len(toks)
    for k, t in enumerate(toks):
        if t.text == "[":
            end = k  # name[...]: an array parameter
            break
    k = end - 1
    if k >= 1 and is_name(toks[k]) and toks[k - 1].text not in ("struct", "union", "enum") \
            and has_type_before(k):
        return k
    return None


def parse_params(decl_toks, where):
    """Parameters of a parameter list's tokens; where: a token for errors."""
    if not decl_toks:
        return []  # f(): no prototype; taken as no arguments
    chunks = split_commas(decl_toks)
    if len(chunks) == 1 and [t.text for t in chunks[0]] == ["void"]:
        return []
    params = []
    for pos, chunk in enumerate(chunks, 1):
        if not chunk:
            raise DpaccError(f"cannot parse parameter {pos}: it is empty", where)
        if len(chunk) == 1 and chunk[0].text == "...":
            params.append(Param(pos, "...", chunk, chunk[0], variadic=True))
            continue
        k = param_name_index(chunk)
        name = chunk[k].text if k is not None else None
        type_toks = [t for j, t in enumerate(chunk)
                     if j != k and t.text not in ("register", "auto")]
        if not type_toks:
            raise DpaccError(f"cannot parse parameter {pos}: no type", chunk[0])
        params.append(Param(pos, name, type_toks, chunk[0]))
    return params


def find_typedef(items, name, seen=()):
    """(return type tokens, parameter tokens) of the function typedef `name`,
    or None when `name` is no function typedef dpacc can read."""
    if name in seen:
        return None
    for item in items:
        head = item.head
        if not head or head[0].text != "typedef" or item.has_body:
            continue
        if not any(t.text == name for t in head):
            continue
        body = head[1:]
        p = declarator_paren(body)
        if p >= 0:
            q = skip_group(body, p)
            # typedef R name(params);
            if p > 0 and body[p - 1].text == name and q == len(body):
                return body[:p - 1], body[p + 1:q - 1]
            # typedef R (name)(params);
            if [t.text for t in body[p + 1:q - 1]] == [name] and q < len(body) \
                    and body[q].text == "(" and skip_group(body, q) == len(body):
                return body[:p], body[q + 1:-1]
            continue
        # typedef other_t name;  (an alias of another function typedef)
        if body and body[-1].text == name:
            others = [t for t in body[:-1] if is_name(t)]
            if len(others) == 1 and not any(t.text == "*" for t in body):
                return find_typedef(items, others[0].text, tuple(seen) + (name,))
    return None


class DeviceFunc:
    def __init__(self, name, kind, tok):
        self.name, self.kind, self.tok = name, kind, tok  # kind: "rpc" or "global"
        self.decls = []           # every file-scope declaration of the name
        self.ret_toks = None
        self.params = []
        self.defined = False
        self.ret_void = False
        self.ret_size = self.ret_cls = None
        self.ret_adjusted = False
        self.argbuf_size = 8

    @property
    def ret(self):
        return pretty_type(self.ret_toks)


def strip_type_markers(toks):
    """Drops a marker right after `struct` or `union` (DPACC's way of naming
    a type host and device share, which changes nothing here)."""
    return [t for i, t in enumerate(toks)
            if not (t.text in MARK_NAMES and i > 0 and toks[i - 1].text in ("struct", "union"))]


def find_device_functions(toks):
    """The marked functions, in the order they first appear, with their
    return types and parameters."""
    items = split_items(strip_type_markers(strip_extensions(toks)))
    funcs = {}
    order = []
    for item in items:
        if not any(t.text in MARK_NAMES for t in item.head):
            continue
        for d in parse_decl_item(item):
            kinds = {m.text for m in d.markers}
            if len(kinds) > 1:
                raise DpaccError(f"'{d.name}' is marked both __dpa_rpc__ and __dpa_global__",
                                 d.name_tok)
            kind = "rpc" if MARK_RPC in kinds else "global"
            f = funcs.get(d.name)
            if f is None:
                f = funcs[d.name] = DeviceFunc(d.name, kind, d.name_tok)
                order.append(f)
            elif f.kind != kind:
                raise DpaccError(f"'{d.name}' is marked {MARK_NAMES[MARK_RPC]} and "
                                 f"{MARK_NAMES[MARK_GLOBAL]} in different declarations",
                                 d.name_tok)
    if not order:
        return []
    # every file-scope declaration of those names, marked or not, in order
    for item in items:
        if not any(t.text in funcs for t in item.head):
            continue
        try:
            decls = parse_decl_item(item)
        except DpaccError:
            if any(t.text in MARK_NAMES for t in item.head):
                raise
            continue  # something else that mentions the name
        for d in decls:
            if d.name in funcs:
                funcs[d.name].decls.append(d)
    for f in order:
        for d in f.decls:
            if d.is_static():
                raise DpaccError(f"device function '{f.name}' is static: the runtime finds it "
                                 "by name, so it needs external linkage", d.name_tok)
        f.defined = any(d.has_body for d in f.decls)
        # the parameter names of the definition are the most telling
        with_params = sorted((d for d in f.decls if d.params is not None),
                             key=lambda d: (not d.has_body, not d.markers, not d.params))
        if with_params:
            d = with_params[0]
            f.ret_toks = d.ret_toks()
            f.params = parse_params(d.params, d.name_tok)
            f.tok = d.name_tok
        else:
            d = f.decls[0]
            found = find_typedef(items, d.typedef_tok.text)
            if found is None:
                raise DpaccError(f"'{f.name}' is not a function: '{d.typedef_tok.text}' is no "
                                 "function typedef dpacc can read (`typedef R name(params);` or "
                                 "`typedef R (name)(params);`)", d.name_tok)
            ret, params = found
            f.ret_toks = [t for t in ret if t.text not in NON_TYPE_SPECIFIERS]
            f.params = parse_params(params, d.typedef_tok)
        if not f.ret_toks:
            raise DpaccError(f"device function '{f.name}' has no return type", f.tok)
    return order


# ---------------------------------------------------------------------------
# Running tools

class Runner:
    def __init__(self, verbose):
        self.verbose = verbose

    def run(self, cmd, what, show_stderr=True):
        """Runs cmd; on failure raises DpaccError with its output."""
        if self.verbose:
            print(f"{PROG}: + " + " ".join(shlex.quote(c) for c in cmd), file=sys.stderr)
        try:
            r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               encoding="utf-8", errors="replace")
        except OSError as e:
            raise DpaccError(f"{what}: cannot run {cmd[0]}: {e.strerror}")
        if r.returncode != 0:
            sys.stderr.write(r.stderr)
            raise DpaccError(f"{what} failed ({cmd[0]} exited with status {r.returncode})")
        if show_stderr and r.stderr:
            sys.stderr.write(r.stderr)
        return r.stdout


def c_string(s):
    """s as a C string literal."""
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch == "\n":
            out.append("\\n")
        elif " " <= ch <= "~":
            out.append(ch)
        else:
            out.extend(f"\\{b:03o}" for b in ch.encode())
    return '"' + "".join(out) + '"'


def include_line(path):
    if '"' in path or "\n" in path:
        raise DpaccError(f"cannot #include a path containing '\"' or a newline: {path!r}")
    return f'#include "{path}"'


# ---------------------------------------------------------------------------
# Probes: what the compiler knows of each argument's type

def ty(toks_or_text):
    text = toks_or_text if isinstance(toks_or_text, str) else type_text(toks_or_text)
    return f"__typeof__({text})"


def probe_line(label):
    # errors in a probe expression then name the function and argument
    return "#line 1 " + c_string(f"dpacc probe of {label}")


def run_probe(ctx, name, entries):
    """Compiles a probe of the source with entries [(label, [expr, ...])] and
    returns their values as integers, in order."""
    lines = [include_line(ctx.source), "",
             f"static const long long __dpa_sig[] __attribute__((used, section("
             f"{c_string(SIG_SECTION)}), aligned(8))) = {{",
             f"\t{SIG_MAGIC}LL,"]
    count = 0
    for label, exprs in entries:
        lines.append(probe_line(label))
        for e in exprs:
            lines.append(f"\t(long long)({e}),")
            count += 1
    lines.append("};")
    c_path = os.path.join(ctx.work, name + ".c")
    o_path = os.path.join(ctx.work, name + ".o")
    bin_path = os.path.join(ctx.work, name + ".bin")
    write(c_path, "\n".join(lines) + "\n")
    ctx.runner.run(ctx.cc + ctx.device_flags() + ["-O0", "-w", "-c", c_path, "-o", o_path],
                   f"probing the argument types of {ctx.source}")
    ctx.runner.run([ctx.objcopy, "-O", "binary", "--only-section=" + SIG_SECTION, o_path, bin_path],
                   "reading the probe's table")
    with open(bin_path, "rb") as f:
        blob = f.read()
    want = 8 * (count + 1)
    for order in ("<", ">"):
        if len(blob) >= want and struct.unpack(order + "q", blob[:8])[0] == SIG_MAGIC:
            return list(struct.unpack(f"{order}{count}q", blob[8:want]))
    raise DpaccError(f"the probe's {SIG_SECTION} section is missing or malformed "
                     f"({len(blob)} bytes, {want} expected)")


def check_variadic(funcs):
    for f in funcs:
        for a in f.params:
            if a.variadic:
                raise DpaccError(f"function '{f.name}': {a.label()}: variadic functions are "
                                 "not supported (every argument needs a declared type)", a.tok)


def probe_types(ctx, funcs):
    # Stage 1: what every argument is, and whether each return type is void.
    # Only expressions valid for any complete type may appear here.
    entries = []
    for f in funcs:
        for a in f.params:
            t = ty(a.type_toks)
            entries.append((f"{f.name} {a.label()}", [
                f"sizeof({t})",
                f"__builtin_classify_type(*({t} *)0)",
                # arrays and functions decay in a comma expression: the type changes
                f"!__builtin_types_compatible_p({t}, __typeof__((0, *({t} *)0)))",
                f"__alignof__({t})"]))
        entries.append((f"{f.name} return type",
                        [f"__builtin_types_compatible_p({ty(f.ret_toks)}, void)"]))
    values = iter(run_probe(ctx, "probe1", entries))
    for f in funcs:
        for a in f.params:
            a.size, a.cls, a.adjusted = next(values), next(values), bool(next(values))
            a.align = next(values)
        f.ret_void = bool(next(values))
    check_params(funcs)
    check_records_in_registers(ctx, funcs)

    # Stage 2: signedness of the integer arguments (a cast to the type is now
    # valid), and what the non-void return types are.
    entries = []
    for f in funcs:
        for a in f.params:
            if a.cls in CLASS_INTEGER:
                t = ty(a.type_toks)
                entries.append((f"{f.name} {a.label()}", [
                    f"({t})-1 < ({t})0",
                    f"({t})2 == ({t})1"]))  # only _Bool turns 2 into 1
        if not f.ret_void:
            t = ty(f.ret_toks)
            entries.append((f"{f.name} return type", [
                f"sizeof({t})",
                f"__builtin_classify_type(*({t} *)0)",
                f"!__builtin_types_compatible_p({t}, __typeof__((0, *({t} *)0)))"]))
    if not entries:
        return
    values = iter(run_probe(ctx, "probe2", entries))
    for f in funcs:
        for a in f.params:
            if a.cls in CLASS_INTEGER:
                a.signed, a.is_bool = bool(next(values)), bool(next(values))
        if not f.ret_void:
            f.ret_size, f.ret_cls, f.ret_adjusted = next(values), next(values), bool(next(values))
    check_returns(funcs)


def kind_problem(size, cls, adjusted, align=None):
    """Why a type cannot cross between host and device, or None."""
    if adjusted:
        return "is an array or function type (pass a pointer instead)"
    if cls in CLASS_RECORD and align is not None:
        if align > 8:
            return f"is {CLASS_NAMES[cls]} aligned to {align} bytes (at most 8)"
        return None if size > 0 else f"is an empty {CLASS_NAMES[cls][2:]}"
    if cls == CLASS_POINTER:
        return None if size in (4, 8) else f"is a {size}-byte pointer"
    if cls in CLASS_INTEGER:
        return None if size in (1, 2, 4, 8) else f"is a {size}-byte integer (at most 8 bytes)"
    return f"is {CLASS_NAMES.get(cls, f'of type class {cls}')}"


def check_params(funcs):
    for f in funcs:
        for a in f.params:
            why = kind_problem(a.size, a.cls, a.adjusted, a.align)
            if why:
                raise DpaccError(f"function '{f.name}': {a.label()} of type '{a.pretty}' {why}; "
                                 "only integer, pointer, struct and union arguments are "
                                 "supported", a.tok)


def check_records_in_registers(ctx, funcs):
    """A struct or union argument crosses as whole 8-byte words, which the
    host's packer takes as a struct of as many integers: the same way the
    caller passed it unless part of it travels in floating-point registers
    (x86-64's SSE class), which the compiler shows by using %xmm to pass it."""
    # above 16 bytes always in memory (the compiler may copy it through %xmm)
    recs = [(f, a) for f in funcs for a in f.params if a.cls in CLASS_RECORD and a.size <= 16]
    if not recs:
        return
    lines = [include_line(ctx.source), ""]
    for k, (f, a) in enumerate(recs):
        t = ty(a.type_toks)
        lines += [probe_line(f"{f.name} {a.label()}"),
                  f"extern void __dpa_rec_sink_{k}({t});",
                  f"void __dpa_rec_probe_{k}({t} *p) {{ __dpa_rec_sink_{k}(*p); }}",
                  f"void __dpa_rec_probe_{k}_end(void) {{}}"]
    c_path = os.path.join(ctx.work, "probe_rec.c")
    s_path = os.path.join(ctx.work, "probe_rec.s")
    write(c_path, "\n".join(lines) + "\n")
    ctx.runner.run(ctx.cc + ctx.device_flags() + ["-O2", "-w", "-S", c_path, "-o", s_path],
                   f"probing how {ctx.source}'s struct arguments are passed")
    with open(s_path, encoding="utf-8", errors="replace") as fh:
        asm = fh.read()
    for k, (f, a) in enumerate(recs):
        m = re.search(rf"^__dpa_rec_probe_{k}:(.*?)^__dpa_rec_probe_{k}_end:", asm, re.S | re.M)
        if m is not None and "%xmm" in m.group(1):
            raise DpaccError(f"function '{f.name}': {a.label()} of type '{a.pretty}' is passed "
                             "partly in floating-point registers; a struct or union argument "
                             "must be passed as integers (pass a pointer instead)", a.tok)


def check_returns(funcs):
    for f in funcs:
        if f.kind == "global" and not f.ret_void:
            raise DpaccError(f"event handler '{f.name}' must return void (it returns "
                             f"'{f.ret}')", f.tok)
        if f.ret_void:
            continue
        why = kind_problem(f.ret_size, f.ret_cls, f.ret_adjusted)
        if why:
            raise DpaccError(f"function '{f.name}': the return type '{f.ret}' {why}; an RPC "
                             "returns an integer or pointer of at most 8 bytes, or void", f.tok)


def lay_out(funcs):
    """Each argument at the next offset aligned to its own size (a struct or
    union: to its alignment), in declaration order; the buffer rounded up to 8
    bytes (8 at least)."""
    for f in funcs:
        off = 0
        for a in f.params:
            al = a.align if a.cls in CLASS_RECORD else a.size
            off = (off + al - 1) // al * al
            a.offset = off
            off += a.size
        f.argbuf_size = max(8, (off + 7) // 8 * 8)


# ---------------------------------------------------------------------------
# Generated code

def gen_device_wrapper(source, funcs):
    """The image's translation unit: the user's source and the unpackers."""
    out = [f"/* Generated by softdpu's dpacc from {source}: the device image's",
           " * translation unit (the device source and one argument unpacker per",
           " * device function). Do not edit. */",
           include_line(source), "",
           "#include <stdint.h>", ""]
    for f in funcs:
        u = f"__dpa_unpack_{f.name}"
        proto = f"uint64_t {u}(void *__dpa_argbuf, void *__dpa_func)"
        out.append(f'{proto} __attribute__((visibility("default")));')
        out.append(proto)
        out.append("{")
        if f.params:
            out.append("\tconst unsigned char *__dpa_buf = __dpa_argbuf;")
        else:
            out.append("\t(void)__dpa_argbuf;")
        for a in f.params:
            if a.cls in CLASS_RECORD:
                out.append(f"\t__typeof__({a.type}) __dpa_a{a.pos};")
            else:
                # a cast's type is unqualified, so a const parameter still gets a writable copy
                out.append(f"\t__typeof__(({a.type})0) __dpa_a{a.pos};")
        for a in f.params:
            out.append(f"\t__builtin_memcpy((void *)&__dpa_a{a.pos}, __dpa_buf + {a.offset}, "
                       f"sizeof(__dpa_a{a.pos})); /* {a.label()}: {a.pretty} */")
        ptypes = ", ".join(ty(a.type_toks) for a in f.params) or "void"
        args = ", ".join(f"__dpa_a{a.pos}" for a in f.params)
        # via uintptr_t: ISO C has no object-to-function pointer conversion (-Wpedantic)
        call = f"(({ty(f.ret_toks)} (*)({ptypes}))(uintptr_t)__dpa_func)({args})"
        if f.ret_void:
            out.append(f"\t{call};")
            out.append("\treturn 0;")
        elif f.ret_cls == CLASS_POINTER:
            out.append(f"\treturn (uint64_t)(uintptr_t){call};")
        else:
            out.append(f"\treturn (uint64_t){call};")
        out.append("}")
        out.append("")
    return "\n".join(out)


def pack_statement(a):
    """Fetches one argument as the caller's default promotions passed it and
    stores exactly its size at its offset."""
    if a.cls in CLASS_RECORD:
        # the same words, passed the same way (check_records_in_registers)
        words = f"struct __dpa_words{(a.size + 7) // 8}"
        return (f"\t{{ /* {a.label()}: {a.pretty}, {a.size} bytes */\n"
                f"\t\t{words} __dpa_v = va_arg(__dpa_ap, {words});\n\n"
                f"\t\tmemcpy(__dpa_buf + {a.offset}, &__dpa_v, {a.size});\n"
                f"\t}}")
    if a.cls == CLASS_POINTER:
        fetch, store = "va_arg(__dpa_ap, void *)", "void *"
    elif a.is_bool:
        fetch, store = "va_arg(__dpa_ap, int) != 0", "uint8_t"
    else:
        bits = 8 * a.size
        store = f"{'int' if a.signed else 'uint'}{bits}_t"
        if a.size == 8:
            fetch = f"va_arg(__dpa_ap, {store})"
        else:
            fetch = f"({store})va_arg(__dpa_ap, {'int' if a.signed else 'unsigned int'})"
    decl = f"{store}__dpa_v" if store.endswith("*") else f"{store} __dpa_v"
    return (f"\t{{ /* {a.label()}: {a.pretty} */\n"
            f"\t\t{decl} = {fetch};\n\n"
            f"\t\tmemcpy(__dpa_buf + {a.offset}, &__dpa_v, sizeof(__dpa_v));\n"
            f"\t}}")


def gen_host(app, source, image_path, image_size, funcs):
    img = f"__dpa_image_{app}"
    out = [f"/* Generated by softdpu's dpacc from {source} for the FlexIO application",
           f" * \"{app}\": the device image, the host stubs and argument packers of its",
           " * device functions, and their registration with libflexio. Do not edit. */",
           "#include <stdarg.h>",
           "#include <stddef.h>",
           "#include <stdint.h>",
           "#include <stdio.h>",
           "#include <string.h>",
           "",
           "/* The FlexIO SDK's declarations this file needs (its headers need not be",
           " * installed where device code is built); the SDK declares the same. */",
           "#ifndef DPACC_FLEXIO_HOST_DECLS",
           "#define DPACC_FLEXIO_HOST_DECLS",
           "typedef enum {",
           "\tFLEXIO_STATUS_SUCCESS = 0,",
           "\tFLEXIO_STATUS_FAILED = 1,",
           "\tFLEXIO_STATUS_TIMEOUT = 2,",
           "\tFLEXIO_STATUS_FATAL_ERR = 3,",
           "} flexio_status;",
           "struct flexio_app;",
           "typedef void(flexio_func_t)(void);",
           "typedef void(flexio_func_arg_pack_fn_t)(void *argbuf, va_list ap);",
           "flexio_status flexio_app_create(const char *name, void *elf_buffer, size_t buffer_size,",
           "\t\t\t\t struct flexio_app **app_ptr);",
           "flexio_status flexio_app_destroy(struct flexio_app *app);",
           "flexio_status flexio_func_pup_register(struct flexio_app *app, const char *dev_func_name,",
           "\t\t\t\t       const char *dev_unpack_func_name, flexio_func_t *host_stub_func_addr,",
           "\t\t\t\t       size_t argbuf_size, flexio_func_arg_pack_fn_t *host_pack_func);",
           "#endif",
           "",
           "/* The device image (an ELF shared object), assembled in from the file dpacc",
           " * built; global but hidden so that it survives LTO partitioning. */",
           "__asm__(\".pushsection .rodata." + img + ",\\\"a\\\"\\n\"",
           "\t\".balign 64\\n\"",
           f"\t\".globl {img}\\n\"",
           f"\t\".hidden {img}\\n\"",
           f"\t\"{img}:\\n\"",
           "\t\".incbin " + c_string(c_string(image_path))[1:-1] + "\\n\"",
           f"\t\".size {img}, . - {img}\\n\"",
           "\t\".popsection\\n\");",
           f'extern const unsigned char {img}[] __attribute__((visibility("hidden")));',
           f"static const size_t {img}_size = {image_size};",
           "",
           f"struct flexio_app *{app} = NULL;",
           ""]
    words = sorted({(a.size + 7) // 8 for f in funcs for a in f.params if a.cls in CLASS_RECORD})
    if words:
        out.append("/* A struct or union argument as the 8-byte words it is passed as. */")
        out += [f"struct __dpa_words{n} {{ uint64_t w[{n}]; }};" for n in words]
        out.append("")
    for f in funcs:
        out += [f"/* {f.name}: the host's handle of the device function (the runtime knows it",
                " * by this stub's address; each stub's own string keeps it from being",
                " * folded with another). Never meant to be called on the host. */",
                f"void {f.name}(void);",
                f"void {f.name}(void)",
                "{",
                "\tfputs(" + c_string(f"dpacc: {f.name} is device code of FlexIO application "
                                      f"{app}; call it with flexio_process_call()\n")
                + ", stderr);",
                "}",
                ""]
        sig = ", ".join(a.pretty for a in f.params) or "void"
        out.append(f"/* {f.name}({sig}): {f.argbuf_size}-byte argument buffer */")
        out.append(f"static void __dpa_pack_{f.name}(void *__dpa_argbuf, va_list __dpa_ap)")
        out.append("{")
        if f.params:
            out.append("\tunsigned char *__dpa_buf = __dpa_argbuf;")
            out.append("")
            out += [pack_statement(a) for a in f.params]
        else:
            out.append("\t(void)__dpa_argbuf;")
            out.append("\t(void)__dpa_ap;")
        out += ["}", ""]
    out += ["__attribute__((constructor)) static void __dpa_register_" + app + "(void)",
            "{",
            f"\tflexio_status st = flexio_app_create({c_string(app)}, (void *)(uintptr_t){img}, "
            f"{img}_size, &{app});",
            "",
            "\tif (st != FLEXIO_STATUS_SUCCESS) {",
            "\t\tfprintf(stderr, " + c_string(f"dpacc: flexio_app_create(\"{app}\") failed "
                                               "(status %d)\n") + ", (int)st);",
            "\t\treturn;",
            "\t}"]
    for f in funcs:
        out += [f"\tst = flexio_func_pup_register({app}, {c_string(f.name)}, "
                f"{c_string('__dpa_unpack_' + f.name)}, {f.name}, {f.argbuf_size}, "
                f"__dpa_pack_{f.name});",
                "\tif (st != FLEXIO_STATUS_SUCCESS)",
                "\t\tfprintf(stderr, " + c_string(f"dpacc: registering {f.name} with FlexIO "
                                                   f"application {app} failed (status %d)\n")
                + ", (int)st);"]
    out += ["}",
            "",
            "__attribute__((destructor)) static void __dpa_unregister_" + app + "(void)",
            "{",
            f"\tif ({app} != NULL) {{",
            f"\t\tflexio_app_destroy({app});",
            f"\t\t{app} = NULL;",
            "\t}",
            "}",
            ""]
    return "\n".join(out)


# ---------------------------------------------------------------------------
# Driver

def write(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


class Context:
    def __init__(self, opts, work, runner):
        self.opts, self.work, self.runner = opts, work, runner
        self.cc = opts.cc
        self.source = opts.source
        self.objcopy = os.environ.get("OBJCOPY") or "objcopy"
        self.ar = os.environ.get("AR") or "ar"
        self.type_markers = False

    def device_flags(self):
        flags = ["-std=gnu11",
                 f"-D__dpa_rpc__={KEYWORD_EXPANSION}",
                 f"-D__dpa_global__={KEYWORD_EXPANSION}"]
        flags += self.opts.flags
        if self.type_markers:
            flags.append("-Wno-attributes")
        if self.opts.sanitize:
            flags.append("-fsanitize=address")
        return flags


class Options:
    def __init__(self):
        self.app = self.out = self.source = None
        self.cc = None
        self.dev_rt = []
        self.flags = []
        self.sanitize = False
        self.keep = False
        self.verbose = False


SEPARATE_VALUE = {"-I", "-D", "-U", "-include", "-isystem", "-iquote", "-idirafter"}
JOINED_PREFIX = ("-I", "-D", "-U")
PASS_PREFIX = ("-O", "-g", "-W", "-f", "-m", "-std=", "-pedantic")


def parse_args(argv):
    o = Options()
    i = 0

    def value(opt):
        nonlocal i
        a = argv[i]
        if a.startswith(opt + "="):
            return a[len(opt) + 1:]
        if i + 1 >= len(argv):
            raise DpaccError(f"option {opt} needs a value")
        i += 1
        return argv[i]

    while i < len(argv):
        a = argv[i]
        long_name = a.split("=", 1)[0]
        if a in ("-h", "--help"):
            sys.stdout.write(USAGE)
            sys.exit(0)
        elif long_name == "--app":
            o.app = value("--app")
        elif long_name == "--out":
            o.out = value("--out")
        elif long_name == "--dev-rt":
            o.dev_rt.append(value("--dev-rt"))
        elif long_name == "--cc":
            o.cc = value("--cc")
        elif long_name == "--sanitize":
            v = value("--sanitize")
            if v != "address":
                raise DpaccError(f"--sanitize={v}: only --sanitize=address is supported")
            o.sanitize = True
        elif a == "--keep-temps":
            o.keep = True
        elif a in ("-v", "--verbose"):
            o.verbose = True
        elif a in SEPARATE_VALUE:
            if i + 1 >= len(argv):
                raise DpaccError(f"option {a} needs a value")
            o.flags += [a, argv[i + 1]]
            i += 1
        elif a.startswith(JOINED_PREFIX) or a.startswith(PASS_PREFIX) or a == "-w":
            o.flags.append(a)
        elif a.startswith("-") and a != "-":
            raise DpaccError(f"unknown option {a} (see --help)")
        elif o.source is None:
            o.source = a
        else:
            raise DpaccError(f"one source file only ({o.source}, then {a})")
        i += 1
    if o.app is None or o.out is None or o.source is None:
        raise DpaccError("--app, --out and a source file are required (see --help)")
    if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", o.app):
        raise DpaccError(f"application name '{o.app}' is not a C identifier (it names the "
                         "host's struct flexio_app * variable)")
    if not os.path.isfile(o.source):
        raise DpaccError(f"{o.source}: no such file")
    display_names[os.path.abspath(o.source)] = o.source
    o.source = os.path.abspath(o.source)
    o.cc = shlex.split(o.cc or os.environ.get("CC") or "cc")
    if not o.dev_rt:
        o.dev_rt = os.environ.get("DPACC_DEV_RT", "").split()
    for rt in o.dev_rt:
        if not os.path.isfile(rt):
            raise DpaccError(f"device runtime {rt}: no such file")
    o.dev_rt = [os.path.abspath(rt) for rt in o.dev_rt]
    return o


def build(ctx):
    o = ctx.opts
    # 1. preprocess with the keywords as markers, then parse
    pre = ctx.runner.run(ctx.cc + ["-E", "-std=gnu11", f"-D__dpa_rpc__={MARK_RPC}",
                                   f"-D__dpa_global__={MARK_GLOBAL}"] + o.flags +
                         (["-fsanitize=address"] if o.sanitize else []) + ["-w", o.source],
                         f"preprocessing {o.source}", show_stderr=False)
    toks = tokenize(pre, o.source)
    # DPACC's struct marker compiles to a visibility attribute GCC ignores on a
    # type with a warning: quiet where the source uses it (-Werror builds).
    ctx.type_markers = any(t.text in MARK_NAMES and i > 0 and toks[i - 1].text in ("struct", "union")
                           for i, t in enumerate(toks))
    funcs = find_device_functions(toks)
    for f in funcs:
        if f.name == o.app:
            raise DpaccError(f"the application name '{o.app}' is also a device function's name",
                             f.tok)
    check_variadic(funcs)

    # 2. what each argument is
    if funcs:
        probe_types(ctx, funcs)
    lay_out(funcs)
    if not funcs:
        warn(f"{o.source}: no __dpa_rpc__ or __dpa_global__ function")
    for f in funcs:
        if not f.defined:
            warn(f"{location(f.tok)}device function '{f.name}' is declared but not defined in "
                 f"{o.source} (the device runtime must provide it)")

    # 3. the image
    wrapper = os.path.join(ctx.work, "device.c")
    image = os.path.join(ctx.work, o.app + ".so")
    write(wrapper, gen_device_wrapper(o.source, funcs))
    link_rt = []
    if o.dev_rt:
        link_rt = ["-Wl,--whole-archive"] + o.dev_rt + ["-Wl,--no-whole-archive"]
    # -Bsymbolic: device code calls its own functions and reads its own globals
    # even where the host program has symbols of the same names (the stubs).
    # Undefined symbols stay allowed: the host's libc provides them at load.
    # Device functions are entry points the runtime calls, written without a
    # prior prototype (as vendor samples do), so -Wmissing-prototypes is off.
    ctx.runner.run(ctx.cc + ["-fPIC", "-shared", "-O2", "-g"] + ctx.device_flags() +
                   ["-Wno-missing-prototypes", "-Wl,-Bsymbolic", wrapper] + link_rt +
                   ["-o", image],
                   f"building the device image of {o.source}")

    # 4. the host side, archived
    host_c = os.path.join(ctx.work, o.app + "_host.c")
    host_o = os.path.join(ctx.work, o.app + "_host.o")
    write(host_c, gen_host(o.app, o.source, image, os.path.getsize(image), funcs))
    ctx.runner.run(ctx.cc + ["-std=gnu11", "-fPIC", "-O2", "-Wall", "-Wextra", "-c", host_c,
                             "-o", host_o], "compiling the host code")
    os.makedirs(o.out, exist_ok=True)
    archive = os.path.join(o.out, o.app + ".a")
    tmp_archive = os.path.join(ctx.work, o.app + ".a")
    if os.path.exists(tmp_archive):
        os.unlink(tmp_archive)
    ctx.runner.run([ctx.ar, "rcs", tmp_archive, host_o], "archiving the host code")
    shutil.copyfile(tmp_archive, archive + ".tmp")
    os.replace(archive + ".tmp", archive)
    return funcs


# Source paths as the user wrote them (the compiler sees absolute ones).
display_names = {}


def location(tok):
    if tok is None:
        return ""
    return f"{display_names.get(tok.file, tok.file)}:{tok.line}: "


def warn(msg):
    print(f"{PROG}: warning: {msg}", file=sys.stderr)


def main(argv):
    try:
        opts = parse_args(argv)
        runner = Runner(opts.verbose)
        if opts.keep:
            work = os.path.join(os.path.abspath(opts.out), opts.app + ".dpacc")
            shutil.rmtree(work, ignore_errors=True)
            os.makedirs(work)
        else:
            work = tempfile.mkdtemp(prefix="dpacc-")
        try:
            funcs = build(Context(opts, work, runner))
        finally:
            if not opts.keep:
                shutil.rmtree(work, ignore_errors=True)
        if opts.verbose:
            for f in funcs:
                args = ", ".join(f"{a.pretty}@{a.offset}" for a in f.params)
                print(f"{PROG}: {f.kind} {f.name}({args}) argbuf {f.argbuf_size}",
                      file=sys.stderr)
        return 0
    except DpaccError as e:
        print(f"{PROG}: {location(e.tok)}error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
