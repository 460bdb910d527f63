"""The names a code cell defines, uses and deletes, and the modules it imports, read statically from its
source.

Defining covers assignment (also augmented, annotated, walrus, `for` and `with` targets), imports, function
and class definitions, `except ... as`, match captures and `global` names a function assigns. Changing a
variable in place through a subscript or attribute (`df["x"] = 1`, `cfg.a = 2`) counts as using and defining
it. Uses are the names read before the cell itself defines them, including those read inside its functions
(read when they are called). `from m import *` defines names nobody can list: it is reported as such.
IPython syntax (`%magic`, `!cmd`, `x = !cmd`, `obj?`) is read as the Python around it; a `%%` cell magic
has no names. Results are cached by source, since the same cells are read run after run.
"""

from __future__ import annotations

import ast
import builtins
import functools
import re
from dataclasses import dataclass
from typing import Any, ClassVar

from architect_nb.python_syntax import parse_module

__all__ = ["CellNames", "cell_names"]

_BUILTINS = frozenset(dir(builtins)) | {"get_ipython", "display", "In", "Out", "exit", "quit"}
_MAGIC_LINE = re.compile(r"^(\s*)(?:[%!]|\?)")
_MAGIC_ASSIGN = re.compile(r"^(\s*)([\w.,\s\[\]()*]+?)\s*=\s*[%!].*$")
_HELP = re.compile(r"^(\s*)[\w.]+\?{1,2}\s*$")


@dataclass(frozen=True, slots=True)
class CellNames:
    defines: frozenset[str] = frozenset()
    uses: frozenset[str] = frozenset()
    deletes: frozenset[str] = frozenset()
    imports: tuple[str, ...] = ()  # modules imported, dotted ("shop.cart"; "shop" and "shop.cart" for `from`)
    star_imports: tuple[str, ...] = ()  # modules of `from m import *`
    parsed: bool = True  # False: the source could not be read as Python (its names are unknown)
    cell_magic: str = ""  # the `%%name` of a cell magic cell


class _Scope:
    def __init__(self) -> None:
        self.bound: set[str] = set()
        self.loads: set[str] = set()


class _Reader(ast.NodeVisitor):
    """Walks a cell's module: module-level binds and reads in order; function bodies for their free names."""

    _handlers: ClassVar[dict[type[ast.AST], Any]] = {}

    def visit(self, node: ast.AST) -> None:
        """ast.NodeVisitor's dispatch, with the handler looked up once per node type (the outline reads
        every cell of a notebook as a run starts; this is most of its time)."""
        kind = type(node)
        handler = self._handlers.get(kind)
        if handler is None:
            handler = getattr(type(self), "visit_" + kind.__name__, None) or type(self).generic_visit
            self._handlers[kind] = handler
        handler(self, node)

    def generic_visit(self, node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, ast.Constant | ast.expr_context):
                self.visit(child)

    def __init__(self) -> None:
        self.defines: set[str] = set()
        self.uses: set[str] = set()
        self.deletes: set[str] = set()
        self.imports: list[str] = []
        self.stars: list[str] = []
        self._scopes: list[_Scope] = []  # the function and class bodies we are in
        self._globals: list[set[str]] = []

    # ------------------------------------------------------------------ binding and reading

    def _bind(self, name: str) -> None:
        if self._scopes and name not in self._globals[-1]:
            self._scopes[-1].bound.add(name)
        else:
            self.defines.add(name)

    def _read(self, name: str) -> None:
        if self._scopes:
            self._scopes[-1].loads.add(name)
        elif name not in self.defines and name not in _BUILTINS:
            self.uses.add(name)

    def visit_Name(self, node: ast.Name) -> None:
        if isinstance(node.ctx, ast.Load):
            self._read(node.id)
        elif isinstance(node.ctx, ast.Store):
            self._bind(node.id)
        else:  # del
            self._read(node.id)
            if not self._scopes:
                self.deletes.add(node.id)
                self.defines.discard(node.id)

    def _mutated(self, target: ast.expr) -> None:
        """`x[...] = ...`, `x.a = ...`, `del x[...]`: x is used and changed."""
        base = target
        while isinstance(base, ast.Subscript | ast.Attribute):
            base = base.value
        if isinstance(base, ast.Name):
            self._read(base.id)
            if not self._scopes:
                self.defines.add(base.id)

    def visit_Subscript(self, node: ast.Subscript) -> None:
        if not isinstance(node.ctx, ast.Load):
            self._mutated(node)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if not isinstance(node.ctx, ast.Load):
            self._mutated(node)
        self.generic_visit(node)

    def visit_Assign(self, node: ast.Assign) -> None:
        self.visit(node.value)  # the value is read before the targets are bound
        for target in node.targets:
            self.visit(target)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        if node.value is not None:
            self.visit(node.value)
        self.visit(node.annotation)
        self.visit(node.target)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self.visit(node.value)
        if isinstance(node.target, ast.Name):
            self._read(node.target.id)
            self._bind(node.target.id)
        else:
            self.visit(node.target)

    def visit_NamedExpr(self, node: ast.NamedExpr) -> None:
        self.visit(node.value)
        self._bind(node.target.id)

    def visit_For(self, node: ast.For | ast.AsyncFor) -> None:
        self.visit(node.iter)
        self.visit(node.target)
        for statement in [*node.body, *node.orelse]:
            self.visit(statement)

    visit_AsyncFor = visit_For  # noqa: N815 - ast.NodeVisitor dispatches on these names

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> None:
        if node.type is not None:
            self.visit(node.type)
        if node.name:
            self._bind(node.name)
        for statement in node.body:
            self.visit(statement)

    def visit_Global(self, node: ast.Global) -> None:
        if self._globals:
            self._globals[-1].update(node.names)

    def visit_MatchAs(self, node: ast.MatchAs) -> None:
        if node.pattern is not None:
            self.visit(node.pattern)
        if node.name:
            self._bind(node.name)

    def visit_MatchStar(self, node: ast.MatchStar) -> None:
        if node.name:
            self._bind(node.name)

    def visit_MatchMapping(self, node: ast.MatchMapping) -> None:
        self.generic_visit(node)
        if node.rest:
            self._bind(node.rest)

    # ------------------------------------------------------------------ imports

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            self.imports.append(alias.name)
            self._bind(alias.asname or alias.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        module = "." * node.level + (node.module or "")
        for alias in node.names:
            if alias.name == "*":
                self.stars.append(module)
                continue
            self._bind(alias.asname or alias.name)
            self.imports.append(
                f"{module}.{alias.name}" if module and not module.endswith(".") else alias.name
            )
        self.imports.append(module)

    # ------------------------------------------------------------------ scopes

    def _body(self, arguments: ast.arguments | None, body: list[ast.stmt] | ast.expr) -> None:
        scope = _Scope()
        if arguments is not None:
            for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
                scope.bound.add(arg.arg)
            for extra in (arguments.vararg, arguments.kwarg):
                if extra is not None:
                    scope.bound.add(extra.arg)
        self._scopes.append(scope)
        self._globals.append(set())
        for statement in body if isinstance(body, list) else [body]:
            self.visit(statement)
        self._globals.pop()
        self._scopes.pop()
        for name in scope.loads - scope.bound:
            self._read(name)

    def _function(self, node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> None:
        for default in [*node.args.defaults, *(d for d in node.args.kw_defaults if d is not None)]:
            self.visit(default)
        if not isinstance(node, ast.Lambda):
            for decorator in node.decorator_list:
                self.visit(decorator)
            self._bind(node.name)
        self._body(node.args, node.body)

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = _function  # noqa: N815

    def visit_ClassDef(self, node: ast.ClassDef) -> None:
        for expression in [*node.bases, *(k.value for k in node.keywords), *node.decorator_list]:
            self.visit(expression)
        self._bind(node.name)
        self._body(None, node.body)

    def _comprehension(self, node: ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp) -> None:
        first, *rest = node.generators
        self.visit(first.iter)  # read in the enclosing scope
        scope = _Scope()
        self._scopes.append(scope)
        self._globals.append(set())
        self.visit(first.target)
        for condition in first.ifs:
            self.visit(condition)
        for generator in rest:
            self.visit(generator)
        if isinstance(node, ast.DictComp):
            self.visit(node.key)
            self.visit(node.value)
        else:
            self.visit(node.elt)
        self._globals.pop()
        self._scopes.pop()
        for name in scope.loads - scope.bound:
            self._read(name)

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension  # noqa: N815


def _python_of(source: str) -> str:
    """The cell with IPython's own syntax replaced by Python that binds and reads the same names."""
    lines = []
    for line in source.split("\n"):
        assign = _MAGIC_ASSIGN.match(line)
        if assign and not line.lstrip().startswith(("%", "!")):
            lines.append(f"{assign.group(1)}{assign.group(2)} = None")
        elif (magic := _MAGIC_LINE.match(line) or _HELP.match(line)) is not None:
            lines.append(f"{magic.group(1)}pass")
        else:
            lines.append(line)
    return "\n".join(lines)


@functools.lru_cache(maxsize=4096)
def cell_names(source: str) -> CellNames:
    """What the code cell with `source` defines, uses and deletes (see the module's docstring)."""
    stripped = source.lstrip()
    if stripped.startswith("%%"):
        return CellNames(cell_magic=stripped[2:].split(None, 1)[0] if len(stripped) > 2 else "")
    try:
        tree = parse_module(source)
    except (SyntaxError, ValueError):
        try:
            tree = parse_module(_python_of(source))
        except (SyntaxError, ValueError):
            return CellNames(parsed=False)
    except (MemoryError, RecursionError):
        return CellNames(parsed=False)
    reader = _Reader()
    try:
        for statement in tree.body:
            reader.visit(statement)
    except RecursionError:
        return CellNames(parsed=False)
    return CellNames(
        defines=frozenset(reader.defines),
        uses=frozenset(reader.uses),
        deletes=frozenset(reader.deletes),
        imports=tuple(dict.fromkeys(reader.imports)),
        star_imports=tuple(reader.stars),
    )
