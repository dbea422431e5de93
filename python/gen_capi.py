"""Write the Cython declarations of attnrank's C API from its public headers.

    python3 gen_capi.py OUTPUT HEADER...

The extension module `attnrank._core` cimports `attnrank._capi`; meson runs
this script at configure time (and again whenever a header changes) so that
the declarations are never written by hand.  Every public declaration of
every header is emitted, in one `cdef extern from "attnrank/X.h" nogil:`
block per header, headers ordered so that each comes after the ones it
includes:

- object-like macros: integer constants as `enum:` names, floating ones as
  `double`, `(size_t)` casts as `size_t`, unsigned literals as
  `unsigned int` (function-like macros are C-only and left out);
- enums (named, typedef'd or anonymous) with their constants;
- structs with every field, opaque structs as `pass`;
- function pointer typedefs and AR_API functions, with parameters as
  written (names that are Cython keywords get a trailing underscore).

The headers follow a small, regular subset of C (docs/api.md, "Headers");
anything outside it stops the script with the file and the text, so a new
construct is seen at build time, not as a silent gap.
"""

import re
import sys
from pathlib import Path

CYTHON_KEYWORDS = {
    "and", "as", "assert", "by", "cdef", "class", "cpdef", "ctypedef", "def", "del", "elif",
    "except", "exec", "finally", "from", "gil", "global", "import", "in", "include", "inline",
    "is", "lambda", "nogil", "not", "object", "or", "pass", "print", "property", "public",
    "raise", "readonly", "try", "with", "yield", "None", "True", "False", "type",
}
STDINT = ["int8_t", "int16_t", "int32_t", "int64_t", "uint8_t", "uint16_t", "uint32_t",
          "uint64_t", "intptr_t", "uintptr_t", "SIZE_MAX"]


class HeaderError(Exception):
    pass


def strip_comments(text):
    return re.sub(r"/\*.*?\*/", " ", re.sub(r"//[^\n]*", "", text), flags=re.S)


def active_lines(path, text):
    """The lines a C compiler (not C++, not GNU attributes) sees, with the
    directives kept: #define and #include lines, everything else plain."""
    out, stack = [], []
    for number, line in enumerate(text.splitlines(), 1):
        s = line.strip()
        m = re.match(r"#\s*(\w+)\s*(.*)", s)
        if not m:
            if all(stack):
                out.append(line)
            continue
        directive, rest = m.group(1), m.group(2).strip()
        if directive in ("ifndef", "ifdef", "if"):
            if directive == "ifndef" and rest.startswith("ATTNRANK_"):
                stack.append(True)  # the include guard
            elif directive == "ifdef" and rest == "__cplusplus":
                stack.append(False)
            elif directive == "if" and "defined(__GNUC__)" in rest:
                stack.append(False)  # attributes only: no declaration inside
            else:
                raise HeaderError(f"{path}:{number}: unknown condition '#{directive} {rest}'")
        elif directive == "else":
            stack[-1] = not stack[-1]
        elif directive == "endif":
            stack.pop()
        elif directive in ("define", "include"):
            if all(stack):
                out.append(s)
        else:
            raise HeaderError(f"{path}:{number}: unknown directive '#{directive}'")
    return out


def macro_declaration(name, value):
    if not value or name.startswith("ATTNRANK_") or name == "AR_API":
        return None
    if value.startswith('"'):
        return f"const char *{name}"
    if re.search(r"\d\.\d|\d[eE][+-]?\d", value):
        return f"double {name}"
    if "(size_t)" in value:
        return f"size_t {name}"
    if re.search(r"\b\d+[uU]\b", value):
        return f"unsigned int {name}"
    return f"enum: {name}"


def split_statements(code, where="header"):
    """Top-level statements ending in ';' (braces kept inside)."""
    statements, depth, cur = [], 0, []
    for ch in code:
        cur.append(ch)
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        elif ch == ";" and depth == 0:
            statements.append(" ".join("".join(cur).split()))
            cur = []
    rest = " ".join("".join(cur).split())
    if rest:
        raise HeaderError(f"{where}: text after the last declaration: {rest[:80]!r}")
    return statements


def safe_name(name):
    return name + "_" if name in CYTHON_KEYWORDS else name


def rename_declarator(decl):
    """`const char *lambda` -> `const char *lambda_`; unnamed or `...` kept."""
    decl = decl.strip()
    m = re.match(r"^(.*?)(\w+)(\s*\[[^\]]*\])?$", decl)
    if decl == "..." or m is None or m.group(1).strip() == "":
        return decl
    return m.group(1) + safe_name(m.group(2)) + (m.group(3) or "")


def split_params(text):
    parts, depth, cur = [], 0, ""
    for ch in text:
        depth += ch in "(["
        depth -= ch in ")]"
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    parts = [p.strip() for p in parts if p.strip()]
    return [] if parts == ["void"] else parts


def params_text(text):
    return ", ".join(rename_declarator(p) for p in split_params(text))


def enum_constants(body, where, values=None):
    """The constant names; with values, {name: int} of the explicit ones."""
    names = []
    for item in body.split(","):
        item = item.strip()
        if not item:
            continue
        m = re.match(r"^(\w+)(?:\s*=\s*(.*))?$", item)
        if m is None:
            raise HeaderError(f"{where}: cannot read the enum constant {item!r}")
        names.append(m.group(1))
        if values is not None and m.group(2) and re.fullmatch(r"\d+", m.group(2).strip()):
            values[m.group(1)] = int(m.group(2))
    return names


def struct_fields(body, where, typed_constants):
    """One line per declarator (Cython warns on shared ones with pointers);
    an array length naming a constant of a typed enum is replaced by its
    value, since Cython takes only plain integers there."""
    lines = []
    for field in split_statements(body):
        field = field.rstrip(";").strip()
        first = re.match(r"^(.*?)(\**\s*\w+\s*(\[[^\]]*\])?)$", field.split(",")[0])
        if first is None or "(" in field or not first.group(1).strip():
            raise HeaderError(f"{where}: cannot read the field {field!r}")
        base = first.group(1).strip()
        for decl in [first.group(2)] + field.split(",")[1:]:
            decl = re.sub(r"\[(\w+)\]",
                          lambda m: f"[{typed_constants.get(m.group(1), m.group(1))}]", decl)
            lines.append(base + " " + rename_declarator(decl))
    return lines


def declarations(path, statements, typed_constants):
    """Cython lines of one header's statements (list of (header line, body
    lines)); typed_constants collects the typed enums' explicit values."""
    out = []
    for s in statements:
        where = f"{path.name}: {s[:60]!r}"
        body = ""
        if "{" in s:
            head, body = s.split("{", 1)
            body, tail = body.rsplit("}", 1)
            s_head, s_tail = head.strip(), tail.rstrip(";").strip()
        else:
            s_head, s_tail = s.rstrip(";").strip(), ""
        if s_head.startswith('extern "C"'):
            raise HeaderError(f"{where}: extern \"C\" outside #ifdef __cplusplus")
        if m := re.match(r"^typedef enum( \w+)?$", s_head):
            out.append((f"ctypedef enum {s_tail}:", enum_constants(body, where, typed_constants)))
        elif m := re.match(r"^enum( \w+)?$", s_head):
            out.append(("enum:", enum_constants(body, where)))
        elif m := re.match(r"^typedef struct( \w+)?$", s_head):
            out.append((f"ctypedef struct {s_tail}:", struct_fields(body, where, typed_constants) or ["pass"]))
        elif m := re.match(r"^typedef struct (\w+) (\w+)$", s_head):
            out.append((f"ctypedef struct {m.group(2)}:", ["pass"]))
        elif m := re.match(r"^typedef (.+?)\(\s*\*\s*(\w+)\s*\)\s*\((.*)\)$", s_head):
            out.append((f"ctypedef {m.group(1).strip()} (*{m.group(2)})({params_text(m.group(3))})",
                        []))
        elif m := re.match(r"^AR_API (.+?)(\w+)\s*\((.*)\)$", s_head):
            out.append((f"{m.group(1).strip()} {m.group(2)}({params_text(m.group(3))})"
                        .replace("* ", "*").replace(" *", " *"), []))
        else:
            raise HeaderError(f"{where}: not a declaration this script knows")
    return out


def read_header(path, typed_constants=None):
    text = strip_comments(path.read_text()).replace("\\\n", " ")
    lines = active_lines(path, text)
    includes, macros, code = [], [], []
    for line in lines:
        if m := re.match(r'#\s*include\s+"(?:attnrank/)?([\w.]+)"', line):
            includes.append(m.group(1))
        elif re.match(r"#\s*include\s+<", line):
            continue
        elif m := re.match(r"#\s*define\s+(\w+)(\(?)\s*(.*)", line):
            if not m.group(2):
                decl = macro_declaration(m.group(1), m.group(3).strip())
                if decl:
                    macros.append(decl)
        else:
            code.append(line)
    text = re.sub(r"__attribute__\s*\(\(.*?\)\)", "", "\n".join(code), flags=re.S)
    constants = {} if typed_constants is None else typed_constants
    return includes, macros, declarations(path, split_statements(text, path.name), constants)


def header_order(headers):
    """Headers after the ones they include (depth first, by name otherwise:
    the output does not depend on the order of the command line)."""
    by_name = {p.name: p for p in headers}
    done, order = set(), []

    def visit(name, trail):
        if name in done or name not in by_name:
            return
        if name in trail:
            raise HeaderError(f"include cycle: {' -> '.join(trail + [name])}")
        for inc in read_header(by_name[name])[0]:
            visit(inc, trail + [name])
        done.add(name)
        order.append(by_name[name])

    for p in sorted(headers, key=lambda h: h.name):
        visit(p.name, [])
    return order


def render(headers):
    blocks, used, typed_constants = [], set(), {}
    for path in header_order(headers):
        _, macros, decls = read_header(path, typed_constants)
        if not macros and not decls:
            continue
        name = path.name[:-3] if path.name.endswith(".h.in") else path.name
        lines = [f'cdef extern from "attnrank/{name}" nogil:']
        lines += [f"    {m}" for m in macros]
        for head, body in decls:
            lines.append(f"    {head}")
            lines += [f"        {b}" for b in body]
        text = "\n".join(lines)
        used |= {t for t in STDINT if re.search(rf"\b{t}\b", text)}
        blocks.append(text)
    header = ["# Generated by python/gen_capi.py from include/attnrank/*.h: do not edit.", ""]
    if used:
        header.append(f"from libc.stdint cimport {', '.join(sorted(used))}")
        header += ["", ""]
    return "\n".join(header) + "\n\n".join(blocks) + "\n"


def main(argv):
    if len(argv) < 3:
        sys.stderr.write("usage: gen_capi.py OUTPUT HEADER...\n")
        return 2
    headers = [Path(p) for p in argv[2:] if not p.endswith(("attnrank.h", "export.h"))]
    try:
        text = render(headers)
    except HeaderError as e:
        sys.stderr.write(f"gen_capi.py: {e}\n")
        return 1
    out = Path(argv[1])
    tmp = out.with_name(out.name + ".tmp")
    tmp.write_text(text)
    tmp.replace(out)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
