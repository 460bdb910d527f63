"""Reads the inline Python code a command runs (`python -c CODE args`, `python - args <<EOF`) with `ast`, so
the guardrail on protected files can tell which paths the code only reads and what it does with its arguments.

A path is proven read only when every use of it is in a read position (`open(p)`, `Path(p).read_text()`,
`os.path.exists(p)`, ...); anything else is left to the caller's stricter check. Code that could rebind the
names this relies on, or that runs code built at run time, proves nothing.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

__all__ = ["Access", "PythonPaths", "read_python"]

Access = Literal["read", "write", "unknown"]
# One use of a value. "harmless" touches no file (print, len): a read for an argv word, but no proof for a
# literal, whose name the caller should still see. When uses are merged, the higher rank wins.
_Kind = Literal["read", "harmless", "unknown", "write"]
_RANK = {"read": 0, "harmless": 1, "unknown": 2, "write": 3}
_MAX_CODE = 100_000
_FOLLOW_DEPTH = 8  # `a = 'x'; b = a; ...` chains followed at most this deep


def _words(text: str, prefix: str = "") -> frozenset[str]:
    return frozenset(prefix + word for word in text.split())


_OPENERS = _words("open io.open codecs.open")
# Anything else (`opener=`, `**kw`, a 7th argument) could do more than read.
_OPEN_KEYWORDS = _words("file mode buffering encoding errors newline")
_PATH_TYPES = _words("pathlib.Path pathlib.PurePath")
_PATH_READS = _words("read_text read_bytes exists is_file is_dir stat")
_PATH_WRITES = _words("write_text write_bytes unlink rename replace touch mkdir rmdir chmod lchmod")
_PATH_WRITES |= _words("symlink_to hardlink_to")
_READS = _words("stat lstat access", "os.")
_READS |= _words("exists isfile isdir getsize getmtime islink", "os.path.")
_COPIES = _words("copy copy2 copyfile copytree", "shutil.")
# `copy_function=` and `ignore=` are handed the source's paths: with them the source is not proven read.
_COPY_KEYWORDS = _words("src dst follow_symlinks symlinks dirs_exist_ok ignore_dangling_symlinks")
_WRITES = _words("move rmtree chown", "shutil.")
_WRITES |= _words("remove unlink rename renames replace rmdir removedirs chmod lchmod chown lchown", "os.")
_WRITES |= _words("truncate utime symlink link mkdir makedirs", "os.")
_BUILTINS = _words("open print len str")
_WRAPPERS = _PATH_TYPES | {"str"}  # give back their one argument, as a path or a string
# The names the proofs rely on, and the only imports that may bind them; any other binding proves nothing.
_TRUSTED = {"open": _OPENERS - {"open"}, "Path": {"pathlib.Path"}, "PurePath": {"pathlib.PurePath"}}
_TRUSTED |= {module: {module} for module in _words("os io codecs pathlib shutil sys")}
_TRUSTED["argv"] = {"sys.argv"}
# Assigning one of these attributes (`os.path.exists = ...`) would change what the tables above mean.
_TRUSTED_ATTRS = {name.rpartition(".")[2] for name in _OPENERS | _PATH_TYPES | _READS | _COPIES | _WRITES}
_TRUSTED_ATTRS |= _PATH_READS | _PATH_WRITES | {"path", "argv"}
# Code built at run time, or names, frames, modules and open files reached by reflection, prove nothing.
# (`f.name` gives back the path a read `open` was given; `f.fileno()` lets `os.fchmod` change its mode.)
_DYNAMIC_NAMES = _words(
    "exec eval compile __import__ getattr setattr delattr globals locals vars breakpoint __builtins__"
    " __loader__ __spec__"
)
_DYNAMIC_MODULES = _words("builtins importlib runpy inspect ctypes gc pickle marshal code codeop __main__")
_DYNAMIC_ATTRS = _words(
    "__dict__ __getattribute__ __setattr__ __delattr__ __globals__ __code__ __self__ __builtins__"
    " __subclasses__ __import__ _getframe f_globals f_locals f_back modules attrgetter methodcaller fileno"
    " fchmod fchown ftruncate name"
)
# Reopening an open file (/proc/self/fd/3, /dev/fd/3), or reading the command line without sys.argv.
_SNEAKY_TEXT = ("/proc/", "/dev/fd", "cmdline")
# A script read from stdin (`python - <<EOF`) is decoded as its first two lines say, `ast.parse` of a str
# ignores that: under `# coding: utf-7`, "+AAo-" is a line break and a comment can hide code.
_CODING = re.compile(r"[ \t\f]*#.*?coding[:=][ \t]*([-\w.]+)")


@dataclass(frozen=True, slots=True)
class PythonPaths:
    """What inline Python code does with the paths it names."""

    #: The code with the string literal of every proven read blanked out by spaces (same length, newlines
    #: kept), so a check that looks for file names in the text no longer sees them. The whole code, unchanged,
    #: when nothing could be proven (it does not parse, or it runs code built at run time).
    unproven: str
    #: For each sys.argv index the code uses with a literal index (sys.argv[1]): "read" if every use of it is
    #: a proven read (or harmless: print, len), "write" if any use writes, removes, moves, truncates or
    #: changes the mode of that path, else "unknown".
    argv: Mapping[int, Access]
    #: sys.argv is used in a way no index can be given for (a slice, iteration, `sys.argv` passed whole,
    #: a non-literal index, unpacking, dynamic code): every argv word must be treated as "unknown".
    argv_whole: bool
    #: The code declares a source encoding other than UTF-8 (`# coding: utf-7`): read from a pipe, what runs
    #: is not the text that was read, so no check of the text holds.
    hidden: bool = False


def read_python(code: str) -> PythonPaths:
    """What `code` (the text given to `python -c` or piped to `python -`) does with the paths it names."""
    try:
        if not _utf8(code):
            return PythonPaths(code, {}, True, hidden=True)
        if len(code) > _MAX_CODE:
            return PythonPaths(code, {}, True)
        reader = _Reader(ast.parse(code))  # SyntaxError, ValueError (NUL), RecursionError, MemoryError
        if reader.dynamic:
            return PythonPaths(code, {}, True)
        argv = reader.argv()
        return PythonPaths(_blank(code, reader.proven_reads()), argv, reader.argv_whole)
    except Exception:  # hostile input must never break the guardrail: then nothing is proven
        return PythonPaths(code, {}, True)


class _Reader:
    """One pass over the tree for bindings, loads, literals and argv mentions; then uses judged on demand."""

    def __init__(self, tree: ast.Module) -> None:
        self.parents: dict[ast.AST, ast.AST] = {}
        # What each name is bound to: the dotted name an import gives it, None for any other binding.
        self.bindings: dict[str, list[str | None]] = {}
        self.loads: dict[str, list[ast.Name]] = {}
        self.strings: dict[str, list[ast.Constant]] = {}
        self.argv_attributes: list[ast.Attribute] = []
        self.dynamic = self.argv_whole = False
        for node in ast.walk(tree):  # iterative: deep trees cannot overflow the stack here
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
            self._note(node)
        for name, allowed in _TRUSTED.items():
            self.dynamic |= any(target not in allowed for target in self.bindings.get(name, ()))

    def _note(self, node: ast.AST) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            module = node.module or "" if isinstance(node, ast.ImportFrom) else ""
            for alias in node.names:
                dotted = f"{module}.{alias.name}" if module else alias.name
                words = {*dotted.split("."), alias.asname or ""}
                # `from x import *` may bind any name (`open` from os); a relative import, who knows what.
                self.dynamic |= alias.name == "*" or bool(words & (_DYNAMIC_MODULES | _DYNAMIC_ATTRS))
                if isinstance(node, ast.ImportFrom):
                    self._bind(alias.asname or alias.name, dotted if node.level == 0 else None)
                else:
                    top = alias.name.partition(".")[0]
                    self._bind(alias.asname or top, alias.name if alias.asname else top)
        elif isinstance(node, ast.Name):
            if isinstance(node.ctx, ast.Load):
                self.dynamic |= node.id in _DYNAMIC_NAMES
                self.loads.setdefault(node.id, []).append(node)
            else:
                self._bind(node.id, None)
        elif isinstance(node, ast.Attribute):
            stored = not isinstance(node.ctx, ast.Load)
            self.dynamic |= node.attr in _DYNAMIC_ATTRS
            self.dynamic |= stored and (node.attr in _TRUSTED_ATTRS or node.attr.startswith("read_"))
            if node.attr in ("argv", "orig_argv"):
                self.argv_attributes.append(node)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str | bytes):
            value = node.value
            text = (value if isinstance(value, str) else value.decode("latin-1")).lower()
            self.dynamic |= any(sneaky in text for sneaky in _SNEAKY_TEXT)
            self.argv_whole |= "argv" in text
            if isinstance(value, str):
                self.strings.setdefault(value, []).append(node)
        elif isinstance(node, ast.arg):
            self._bind(node.arg, None)
        elif isinstance(node, ast.Global | ast.Nonlocal):
            for name in node.names:
                self._bind(name, None)
        elif not isinstance(node, ast.alias):  # def, class, except ... as, match captures, type parameters
            for bound in (getattr(node, "name", None), getattr(node, "rest", None)):
                if isinstance(bound, str):
                    self._bind(bound, None)

    def _bind(self, name: str, target: str | None) -> None:
        self.dynamic |= name in _DYNAMIC_NAMES
        self.bindings.setdefault(name, []).append(target)

    def _resolve(self, expr: ast.expr) -> str | None:
        """The dotted name `expr` surely stands for (`pl.Path` -> "pathlib.Path"), or None."""
        attrs: list[str] = []
        while isinstance(expr, ast.Attribute):
            attrs.append(expr.attr)
            expr = expr.value
        if not isinstance(expr, ast.Name):
            return None
        targets = self.bindings.get(expr.id, [expr.id if expr.id in _BUILTINS else None])
        if targets[0] is None or len(set(targets)) != 1:
            return None
        return ".".join([targets[0], *reversed(attrs)])

    def proven_reads(self) -> list[ast.Constant]:
        """The string literals whose value is only ever used as a path to read."""
        proven = [
            n for nodes in self.strings.values() if all(self._use(n) == "read" for n in nodes) for n in nodes
        ]
        return [node for node in proven if not self._in_fstring(node)]

    def _in_fstring(self, node: ast.AST) -> bool:
        """Inside an f-string, where `ast` positions were unreliable before Python 3.12: never blanked."""
        parent = self.parents.get(node)
        while parent is not None and not isinstance(parent, ast.JoinedStr):
            parent = self.parents.get(parent)
        return parent is not None

    def argv(self) -> dict[int, Access]:
        result: dict[int, Access] = {}
        names = [load for loads in self.loads.values() for load in loads if self._resolve(load) == "sys.argv"]
        mentions: list[ast.Attribute | ast.Name] = [*self.argv_attributes, *names]
        for mention in mentions:
            # `os.sys.argv`, `sys.orig_argv`, `x.argv`: argv reached some way this does not follow.
            is_argv = isinstance(mention, ast.Name) or (
                mention.attr == "argv" and self._resolve(mention.value) == "sys"
            )
            parent = self.parents.get(mention)
            index = parent.slice if isinstance(parent, ast.Subscript) else None
            if (
                is_argv
                and isinstance(parent, ast.Subscript)
                and isinstance(parent.ctx, ast.Load)
                and isinstance(index, ast.Constant)
                and type(index.value) is int
                and index.value >= 0
            ):
                kind = self._use(parent)
                access: Access = "read" if kind == "harmless" else kind
                if _RANK[access] >= _RANK[result.get(index.value, "read")]:
                    result[index.value] = access
            elif not (is_argv and isinstance(parent, ast.Call) and self._resolve(parent.func) == "len"):
                self.argv_whole = True  # anything but len(sys.argv)
        return result

    def _use(self, node: ast.expr, depth: int = 0) -> _Kind:
        """How the value of `node` is used where it stands."""
        while True:
            parent = self.parents.get(node)
            if isinstance(parent, ast.Assign):
                return self._follow(parent, node, depth)
            formatted = self._formatted_into(node, parent)
            if formatted is not None:  # a new string, harmless only where it is
                harmless = isinstance(formatted, ast.expr) and self._use(formatted, depth + 1) == "harmless"
                return "harmless" if harmless else "unknown"
            position = self._position(node)
            if position is None:
                return "unknown"
            call, where = position
            func = self._resolve(call.func)
            if func in _WRAPPERS and where == 0 and len(call.args) == 1 and not call.keywords:
                method = self.parents.get(call)
                if func != "str" and isinstance(method, ast.Attribute):
                    return self._path_method(method)
                node = call  # Path(x) or str(x) handed on: judged where it goes
                continue
            return self._argument(call, func, where)

    def _formatted_into(self, node: ast.expr, parent: ast.AST | None) -> ast.AST | None:
        """The string `node` is formatted into by f"{node}" or "...".format(node), if it is."""
        if isinstance(parent, ast.FormattedValue) and parent.value is node:
            return self.parents.get(parent)
        func = parent.func if isinstance(parent, ast.Call) else None
        if isinstance(func, ast.Attribute) and func.attr == "format" and isinstance(func.value, ast.Constant):
            return parent if isinstance(func.value.value, str) else None
        return None

    def _position(self, node: ast.expr) -> tuple[ast.Call, int | str] | None:
        """The call `node` is an argument of, and its index or keyword."""
        parent = self.parents.get(node)
        if isinstance(parent, ast.keyword) and parent.arg is not None:
            call = self.parents.get(parent)
            return (call, parent.arg) if isinstance(call, ast.Call) else None
        if isinstance(parent, ast.Call):
            for index, arg in enumerate(parent.args):
                if arg is node:
                    return parent, index
        return None

    def _argument(self, call: ast.Call, func: str | None, where: int | str) -> _Kind:
        if func in _OPENERS and where in (0, "file"):
            return "read" if _reads(call, 1) else "write"
        if func in _READS and where in (0, "path"):
            return "read"
        if func in _COPIES and where in (1, "dst"):
            return "write"
        if func in _COPIES and where in (0, "src"):
            simple = len(call.args) <= 2 and all(k.arg in _COPY_KEYWORDS for k in call.keywords)
            return "read" if simple else "unknown"
        if func in _WRITES:
            return "write"
        if func in ("print", "len"):
            return "harmless"
        # pandas.read_csv(x), pq.read_table(x): a read_* function of an imported module (no `mode="a"`).
        if where == 0 and func is not None and "." in func and func.rpartition(".")[2].startswith("read_"):
            return "unknown" if any(k.arg in ("mode", None) for k in call.keywords) else "read"
        return "unknown"

    def _path_method(self, method: ast.Attribute) -> _Kind:
        """`Path(x).method(...)`: what the call does to x."""
        call = self.parents.get(method)
        if not isinstance(call, ast.Call) or call.func is not method:
            return "unknown"
        if method.attr == "open":
            return "read" if _reads(call, 0) else "write"
        return "read" if method.attr in _PATH_READS else "write" if method.attr in _PATH_WRITES else "unknown"

    def _follow(self, assign: ast.Assign, node: ast.expr, depth: int) -> _Kind:
        """`name = node` at module level, name bound nowhere else: the strongest use of the name."""
        target = assign.targets[0]
        if (
            depth >= _FOLLOW_DEPTH
            or assign.value is not node
            or len(assign.targets) != 1
            or not isinstance(target, ast.Name)
            or not isinstance(self.parents.get(assign), ast.Module)
            or len(self.bindings.get(target.id, ())) != 1
        ):
            return "unknown"
        uses = [self._use(load, depth + 1) for load in self.loads.get(target.id, ())]
        return max(uses, key=_RANK.__getitem__, default="unknown")  # never used: nothing to prove


def _utf8(code: str) -> bool:
    """The code declares no source encoding other than UTF-8."""
    for line in re.split(r"\r\n|\r|\n", code, maxsplit=2)[:2]:
        declared = _CODING.match(line)
        if declared and declared[1].lower().replace("_", "-") not in ("utf-8", "utf8"):
            return False
    return True


def _reads(call: ast.Call, mode_index: int) -> bool:
    """An `open`-like call whose mode surely only reads."""
    if any(isinstance(arg, ast.Starred) for arg in call.args) or len(call.args) > mode_index + 5:
        return False
    mode = call.args[mode_index] if len(call.args) > mode_index else None
    for keyword in call.keywords:
        if keyword.arg not in _OPEN_KEYWORDS:
            return False
        mode = keyword.value if keyword.arg == "mode" else mode
    if mode is None:
        return True
    return (
        isinstance(mode, ast.Constant) and isinstance(mode.value, str) and not set(mode.value) & set("wax+")
    )


def _blank(code: str, literals: list[ast.Constant]) -> str:
    """`code` with each literal's text replaced by spaces, line breaks kept."""
    if not literals:
        return code
    starts = [0, *(m.end() for m in re.finditer(r"\r\n|\r|\n", code))]  # the breaks the tokenizer counts
    ends = [*starts[1:], len(code)]
    columns: dict[int, list[int]] = {}  # per line: the string index of each UTF-8 byte column

    def offset(line: int | None, column: int | None) -> int | None:
        if line is None or column is None or not 0 < line <= len(starts):
            return None
        if line not in columns:
            text = code[starts[line - 1] : ends[line - 1]]
            columns[line] = [i for i, char in enumerate(text) for _ in char.encode()] + [len(text)]
        return starts[line - 1] + columns[line][column] if column < len(columns[line]) else None

    chars = list(code)
    for node in literals:
        start, end = offset(node.lineno, node.col_offset), offset(node.end_lineno, node.end_col_offset)
        if start is not None and end is not None and _is_literal(code[start:end], node):
            chars[start:end] = [c if c in "\r\n" else " " for c in chars[start:end]]
    return "".join(chars)


def _is_literal(text: str, node: ast.Constant) -> bool:
    """Whether `text` is a string literal (maybe implicitly concatenated) of the node's value."""
    try:  # only text that surely is this literal gets blanked
        return bool(ast.literal_eval(f"({text})") == node.value)
    except Exception:
        return False
