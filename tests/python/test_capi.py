"""The generated _capi.pxd against the public headers it mirrors.

python/gen_capi.py writes attnrank/_capi.pxd into the build tree from
include/attnrank/*.h at configure time.  Cython trusts the .pxd: a
declaration that drifts from the C header (a parameter added, a field's
type changed, an enum constant renamed) still compiles when the generated
C happens to convert, and then passes the wrong thing.  So the generator's
output is checked independently of the generator: every declaration of
each `cdef extern from "attnrank/X.h"` block against attnrank/X.h:

- by reading the header (comments stripped): the function, struct, enum
  type and constant is declared in that header itself (not only in one it
  includes), a function with the same number of parameters, each ctypedef
  enum's constants inside that enum;
- by the C compiler: a translation unit includes the headers and states,
  for each declaration, `__builtin_types_compatible_p` of the header's type
  and the .pxd's one (Cython spellings mapped to C: bint -> int, () ->
  (void)): function types (return and every parameter, const and pointers
  exactly), function pointer typedefs, and each struct field (arrays with
  their length); `#line` directives make each failure name _capi.pxd:LINE.

The build's file must equal a fresh run of the generator over every public
header (so none is missing from the meson list and the file is not stale),
and the generator refuses constructs it does not know, naming the file.
The last tests feed deliberately wrong declarations through the same checks
and require each to be reported with its line.  No torch, no extension
module: only the sources, the generated version.h and a C compiler
($ATTNRANK_CC from meson, else cc).
"""

import os
import re
import shlex
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INCLUDE = ROOT / "include"
GENERATOR = ROOT / "python" / "gen_capi.py"


def generated_pxd():
    """attnrank/_capi.pxd of the build tree on PYTHONPATH (<build>/python)."""
    for p in os.environ.get("PYTHONPATH", "").split(os.pathsep):
        if p and (Path(p) / "attnrank" / "_capi.pxd").exists():
            return Path(p) / "attnrank" / "_capi.pxd"
    return ROOT / "build" / "python" / "attnrank" / "_capi.pxd"


PXD = generated_pxd()

# Cython spellings of C types (the rest is C already).
CYTHON_TO_C = {"bint": "int", "Py_ssize_t": "ssize_t"}


@dataclass
class Decl:
    kind: str  # function, fnptr, struct, enum, constant
    header: str  # "attnrank/X.h"
    line: int  # 1-based line in the .pxd
    name: str
    ret: str = ""  # function, fnptr: the return type
    params: list = field(default_factory=list)  # function, fnptr: C parameter declarations
    fields: list = field(default_factory=list)  # struct: (line, name, C type-name)
    constants: list = field(default_factory=list)  # enum: (line, name)


def c_spelling(text):
    return re.sub(r"\b(\w+)\b", lambda m: CYTHON_TO_C.get(m.group(1), m.group(1)), text)


def split_top_level(text, sep=","):
    """Split at sep outside parentheses and brackets."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            depth -= 1
        if ch == sep and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    if cur.strip():
        parts.append(cur)
    return [p.strip() for p in parts]


def parse_params(text):
    params = [c_spelling(p) for p in split_top_level(text)]
    return [] if params in ([], ["void"]) else params


FUNCTION = re.compile(r"^(?P<ret>.*?[\w*\s])(?P<name>\w+)\s*\((?P<params>.*)\)$", re.S)
FNPTR = re.compile(r"^ctypedef\s+(?P<ret>.+?)\s*\(\s*\*\s*(?P<name>\w+)\s*\)\s*\((?P<params>.*)\)$",
                   re.S)
DECLARATOR = re.compile(r"^(?P<stars>\**)\s*(?P<name>\w+)\s*(?P<array>\[[^\]]*\])?$")


def parse_fields(line_no, text):
    """`double *a, b[3]` -> [(line, 'a', 'double *'), (line, 'b', 'double[3]')]."""
    pieces = split_top_level(c_spelling(text))
    first = re.match(r"^(?P<base>.*?[\w\s])(?P<decl>\**\s*\w+\s*(\[[^\]]*\])?)$", pieces[0])
    if first is None:
        raise ValueError(f"{PXD.name}:{line_no}: cannot read the field {text!r}")
    base = first.group("base").strip()
    out = []
    for decl in [first.group("decl")] + pieces[1:]:
        m = DECLARATOR.match(decl.strip())
        if m is None:
            raise ValueError(f"{PXD.name}:{line_no}: cannot read the declarator {decl!r}")
        stars = " " + m.group("stars") if m.group("stars") else ""
        ctype = base + stars + (m.group("array") or "")
        out.append((line_no, m.group("name"), ctype))
    return out


def logical_lines(lines, start):
    """(line number, text) of one declaration from lines[start], joined while
    parentheses are open."""
    text, i = lines[start].split("#", 1)[0].strip(), start
    while text.count("(") > text.count(")"):
        i += 1
        text += " " + lines[i].split("#", 1)[0].strip()
    return text, i


def parse_pxd(text):
    """Every declaration inside the `cdef extern from "attnrank/..."` blocks.
    An unreadable line raises: nothing is skipped silently."""
    lines = text.splitlines()
    decls, header, i = [], None, 0
    while i < len(lines):
        raw = lines[i]
        stripped = raw.split("#", 1)[0].rstrip()
        m = re.match(r'^cdef extern from "(attnrank/[\w.]+)"', stripped)
        if m:
            header = m.group(1)
            i += 1
            continue
        if not stripped.strip():
            i += 1
            continue
        if not raw.startswith("    "):  # top level: imports, other blocks
            header = None
            i += 1
            continue
        if header is None:
            raise ValueError(f"{PXD.name}:{i + 1}: indented line outside an extern block")
        if raw.startswith("        "):
            raise ValueError(f"{PXD.name}:{i + 1}: body line without its declaration")
        line_no = i + 1
        body, j = [], i + 1
        while j < len(lines) and (lines[j].startswith("        ") or not lines[j].strip()):
            if lines[j].split("#", 1)[0].strip():
                body.append((j + 1, lines[j].split("#", 1)[0].strip()))
            j += 1
        s = stripped.strip()
        if m := re.match(r"^enum:\s*(\w+)?$", s):
            names = ([(line_no, m.group(1))] if m.group(1) else []) + body
            decls += [Decl("constant", header, n, name) for n, name in names]
            i = j
        elif m := re.match(r"^ctypedef enum (\w+):$", s):
            decls.append(Decl("enum", header, line_no, m.group(1), constants=body))
            i = j
        elif m := re.match(r"^ctypedef struct (\w+):$", s):
            fields = []
            for n, text_ in body:
                if text_ != "pass":
                    fields += parse_fields(n, text_)
            decls.append(Decl("struct", header, line_no, m.group(1), fields=fields))
            i = j
        else:
            s, end = logical_lines(lines, i)
            if m := FNPTR.match(s):
                decls.append(Decl("fnptr", header, line_no, m.group("name"),
                                  ret=c_spelling(m.group("ret")),
                                  params=parse_params(m.group("params"))))
            elif m := FUNCTION.match(s):
                decls.append(Decl("function", header, line_no, m.group("name"),
                                  ret=c_spelling(m.group("ret").strip()),
                                  params=parse_params(m.group("params"))))
            elif m := re.match(r"^[\w\s]+?[\s*]\**(\w+)$", s):  # a macro constant
                decls.append(Decl("constant", header, line_no, m.group(1)))
            elif m := re.match(r"^enum:\s*(\w+)$", s):
                decls.append(Decl("constant", header, line_no, m.group(1)))
            else:
                raise ValueError(f"{PXD.name}:{line_no}: cannot read {s!r}")
            i = end + 1
    return decls


# ---- the headers, read ------------------------------------------------------------


def header_path(header):
    """include/attnrank/X.h; version.h is generated into the build tree."""
    path = INCLUDE / header
    if path.exists():
        return path
    for build in build_include_dirs():
        if (build / header).exists():
            return build / header
    return INCLUDE / (header + ".in")


def build_include_dirs():
    dirs = []
    pythonpath = os.environ.get("PYTHONPATH", "")
    for p in pythonpath.split(os.pathsep):
        if p and (Path(p).parent / "include").is_dir():
            dirs.append(Path(p).parent / "include")  # <build>/python -> <build>/include
    dirs.append(ROOT / "build" / "include")
    return [d for d in dirs if d.is_dir()]


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def header_prototype(text, name):
    """The parameter list of name's prototype in text, or None."""
    for m in re.finditer(r"\b" + name + r"\s*\(", text):
        before = text[:m.start()]
        # a declaration: a type right before the name (not a call in a
        # macro or an inline body)
        if not re.search(r"[\w*]\s*$", before) or re.search(r"\breturn\s*$", before):
            continue
        depth, k = 1, m.end()
        while depth and k < len(text):
            depth += {"(": 1, ")": -1}.get(text[k], 0)
            k += 1
        after = text[k:].lstrip()
        if after.startswith((";", "{", "#", "AR_", "__attribute__")):
            return text[m.end():k - 1]
    return None


def enum_constants(text, name=None):
    """Constants of `typedef enum [tag] { ... } name;` (name None: every enum)."""
    out = set()
    for m in re.finditer(r"\benum\s*\w*\s*\{(?P<body>[^}]*)\}\s*(?P<name>\w*)", text):
        if name is None or m.group("name") == name:
            for item in m.group("body").split(","):
                ident = re.match(r"\s*(\w+)", item)
                if ident:
                    out.add(ident.group(1))
    return out


def check_against_headers(decls):
    """What reading the headers finds wrong, one line per problem."""
    problems, texts = [], {}
    for d in decls:
        if d.header not in texts:
            path = header_path(d.header)
            texts[d.header] = strip_comments(path.read_text()) if path.exists() else None
        text = texts[d.header]
        where = f"{PXD.name}:{d.line}"
        if text is None:
            problems.append(f"{where}: {d.header} does not exist")
            continue
        if d.kind == "function":
            proto = header_prototype(text, d.name)
            if proto is None:
                problems.append(f"{where}: {d.name} is not declared in {d.header}")
                continue
            want = parse_params(re.sub(r"\s+", " ", proto))
            if len(want) != len(d.params):
                problems.append(f"{where}: {d.name} takes {len(want)} parameter(s) in "
                                f"{d.header}, {len(d.params)} in the .pxd")
        elif d.kind == "fnptr":
            if not re.search(r"\(\s*\*\s*" + d.name + r"\s*\)", text):
                problems.append(f"{where}: function pointer type {d.name} not in {d.header}")
        elif d.kind == "struct":
            if not re.search(r"(\}\s*|typedef\s+struct\s+\w+\s+)" + d.name + r"\s*;", text):
                problems.append(f"{where}: struct {d.name} is not defined in {d.header}")
        elif d.kind == "enum":
            members = enum_constants(text, d.name)
            if not members:
                problems.append(f"{where}: enum {d.name} is not defined in {d.header}")
            for n, const in d.constants:
                if members and const not in members:
                    problems.append(f"{PXD.name}:{n}: {const} is not a constant of {d.name} "
                                    f"in {d.header}")
        elif d.kind == "constant":
            if (d.name not in enum_constants(text)
                    and not re.search(r"#\s*define\s+" + d.name + r"\b", text)):
                problems.append(f"{where}: constant {d.name} is not defined in {d.header}")
    return problems


# ---- the types, compiled ------------------------------------------------------------


def c_check_unit(decls, pxd_name):
    """A C translation unit whose static assertions fail where a .pxd type
    differs from the header's (each placed at its .pxd line by #line)."""
    headers = sorted({d.header for d in decls})
    out = ["#include <stddef.h>", "#include <stdint.h>", "#include <sys/types.h>"]
    out += [f'#include "{h}"' for h in headers]
    out.append("#define AR_SAME(a, b) __builtin_types_compatible_p(a, b)")
    uses = []

    def at(line):
        return f'#line {line} "{pxd_name}"'

    def params(ps):
        return ", ".join(ps) if ps else "void"

    for k, d in enumerate(decls):
        if d.kind == "function":
            declared = f"{d.ret} {d.name}({params(d.params)})"
            out += [at(d.line), f"_Static_assert(AR_SAME(__typeof__(&{d.name}), "
                    f"{d.ret} (*)({params(d.params)})), \"{d.name}: the .pxd declares "
                    f"{declared}, which is not the type in {d.header}\");"]
        elif d.kind == "fnptr":
            out += [at(d.line), f"_Static_assert(AR_SAME({d.name}, "
                    f"{d.ret} (*)({params(d.params)})), "
                    f"\"{d.name}: not the function pointer type of {d.header}\");"]
        elif d.kind == "struct":
            out += [at(d.line), f"typedef {d.name} *ar_pxd_struct_{k};"]
            for line, fname, ctype in d.fields:
                out += [at(line), f"_Static_assert(AR_SAME(__typeof__((({d.name} *)0)->{fname}), "
                        f"{ctype}), \"{d.name}.{fname}: the .pxd's type {ctype} is not the "
                        f"header's\");"]
        elif d.kind == "enum":
            out += [at(d.line), f"typedef {d.name} ar_pxd_enum_{k};"]
            uses += [(line, const) for line, const in d.constants]
        elif d.kind == "constant":
            uses.append((d.line, d.name))
    out.append("void ar_pxd_constants(void);")
    out.append("void ar_pxd_constants(void)")
    out.append("{")
    for line, const in uses:
        out += [at(line), f"    (void)({const});"]
    out.append("}")
    return "\n".join(out) + "\n"


def compiler():
    return shlex.split(os.environ.get("ATTNRANK_CC") or "cc")


def compile_check(decls, pxd_name):
    """The compiler's diagnostics (empty when every type matches)."""
    unit = c_check_unit(decls, pxd_name)
    includes = [f"-I{INCLUDE}"] + [f"-I{d}" for d in build_include_dirs()]
    proc = subprocess.run(compiler() + ["-std=c11", "-fsyntax-only", "-Werror", *includes,
                                        "-x", "c", "-"],
                          input=unit, capture_output=True, text=True, check=False)
    return "" if proc.returncode == 0 else proc.stderr


# ---- the tests ------------------------------------------------------------------


@pytest.fixture(scope="module")
def decls():
    return parse_pxd(PXD.read_text())


def test_the_parser_reads_every_declaration(decls):
    """A line the parser did not understand would raise; the counts show it
    read the file, not an empty part of it."""
    kinds = {k: sum(d.kind == k for d in decls) for k in ("function", "struct", "enum")}
    assert kinds["function"] >= 100, kinds
    assert kinds["struct"] >= 40, kinds
    assert kinds["enum"] >= 20, kinds
    funcs = {d.name: d for d in decls if d.kind == "function"}
    assert funcs["ar_error_set"].params == ["ar_error *err", "int status", "const char *fmt",
                                            "..."]
    assert funcs["ar_version"].params == [] and funcs["ar_version"].ret == "const char *"
    metrics = next(d for d in decls if d.kind == "struct" and d.name == "ar_rank_metrics")
    assert ("m", "size_t") in [(f[1], f[2]) for f in metrics.fields]
    err = next(d for d in decls if d.kind == "struct" and d.name == "ar_error")
    assert [(f[1], f[2]) for f in err.fields] == [("msg", "char[AR_ERROR_MSG_LEN]")]


def test_every_declaration_is_in_the_header_it_names(decls):
    problems = check_against_headers(decls)
    assert not problems, "\n".join(problems)


def test_declared_types_match_the_headers(decls):
    errors = compile_check(decls, PXD.name)
    assert not errors, errors


def public_headers():
    return sorted(p for p in (INCLUDE / "attnrank").glob("*.h")
                  if p.name not in ("attnrank.h", "export.h")) + \
        [INCLUDE / "attnrank" / "version.h.in"]


def run_generator(out, headers):
    return subprocess.run(["/usr/bin/python3", str(GENERATOR), str(out), *map(str, headers)],
                          capture_output=True, text=True, check=False)


def test_the_build_file_is_the_generator_on_every_header(tmp_path):
    """A header missing from ar_public_headers (include/attnrank/meson.build)
    or a stale build file shows here as a difference."""
    proc = run_generator(tmp_path / "capi.pxd", public_headers())
    assert proc.returncode == 0, proc.stderr
    fresh = (tmp_path / "capi.pxd").read_text()
    blocks = re.findall(r'^cdef extern from "attnrank/([\w.]+)"', fresh, flags=re.M)
    assert len(blocks) == len(public_headers()), blocks
    assert PXD.read_text() == fresh, "the build's _capi.pxd differs: reconfigure the build " \
        "and add any new header to ar_public_headers"


@pytest.mark.parametrize("body, what", [
    ("#ifdef AR_SOMETHING\nint x;\n#endif\n", "unknown condition '#ifdef AR_SOMETHING'"),
    ("#pragma once\n", "unknown directive '#pragma'"),
    ("typedef union ar_u { int a; double b; } ar_u;\n", "not a declaration"),
    ("typedef struct ar_s { int (*f)(void); } ar_s;\n", "cannot read the field"),
    ("AR_API int ar_f(void)\n", "text after the last declaration"),
])
def test_the_generator_refuses_what_it_does_not_know(tmp_path, body, what):
    header = tmp_path / "odd.h"
    header.write_text("#ifndef ATTNRANK_ODD_H\n#define ATTNRANK_ODD_H\n" + body + "#endif\n")
    out = tmp_path / "capi.pxd"
    proc = run_generator(out, [header])
    assert proc.returncode == 1
    assert what in proc.stderr and "odd.h" in proc.stderr, proc.stderr
    assert not out.exists()  # nothing half-written


# ---- the checks can fail ----------------------------------------------------------

WRONG_PXD = '''\
cdef extern from "attnrank/status.h" nogil:
    enum:
        AR_OK
        AR_NO_SUCH_STATUS
    ctypedef struct ar_error:
        char msg[256]
    int ar_strerror(int status)
    int ar_error_printable(ar_error *err)
    ctypedef enum ar_option_style:
        AR_OPTION_STYLE_CLI
        AR_OPTION_STYLE_JSON
cdef extern from "attnrank/rank.h" nogil:
    ctypedef struct ar_rank_opts:
        double rtol
        float atol
    void ar_rank_opts_init(const ar_rank_opts *opts)
    int ar_strerror_again(int status)
cdef extern from "attnrank/matrix.h" nogil:
    const char *ar_strerror(int status)
'''


def test_wrong_declarations_are_reported_with_their_line():
    decls = parse_pxd(WRONG_PXD)
    problems = "\n".join(check_against_headers(decls))
    for expected in [f"{PXD.name}:4: constant AR_NO_SUCH_STATUS",
                     f"{PXD.name}:8: ar_error_printable takes 2 parameter(s)",
                     f"{PXD.name}:11: AR_OPTION_STYLE_JSON is not a constant of ar_option_style",
                     f"{PXD.name}:17: ar_strerror_again is not declared in attnrank/rank.h",
                     f"{PXD.name}:19: ar_strerror is not declared in attnrank/matrix.h"]:
        assert expected in problems, problems
    # only the compiler sees the types (the misnamed ones left out: they are
    # reported above, and would only add "undeclared" errors here)
    misnamed = ("ar_strerror_again", "AR_NO_SUCH_STATUS", "ar_option_style")
    typed = [d for d in decls if d.name not in misnamed and d.header != "attnrank/matrix.h"]
    errors = compile_check(typed, "wrong.pxd")
    for line, what in [(6, "ar_error.msg"), (7, "ar_strerror"), (8, "ar_error_printable"),
                       (15, "ar_rank_opts.atol"), (16, "ar_rank_opts_init")]:
        assert re.search(rf"wrong\.pxd:{line}:.*{re.escape(what)}", errors), (line, errors)
    assert not re.search(r"wrong\.pxd:14:", errors), errors  # rtol is right
