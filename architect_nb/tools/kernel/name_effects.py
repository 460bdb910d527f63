"""Which of a namespace's names a piece of code can touch, read from its syntax tree before it runs.

`name_effects(code)` says what `exec(code, namespace)` may do to the namespace: the names it binds, deletes,
or whose objects it may change in place, so undo knows what to snapshot first. It reads the text only.

Limits, all on the side of saying too much rather than too little, except where `hidden` says so:
- a method not known to be read-only counts as changing its object, and a name passed to a call counts as
  changed unless the callee is a known reader (`print`, `len`, `df.head`, ...);
- a function defined elsewhere (an earlier cell, a library) may change any variable it reaches when the code
  calls it; only the functions the code itself defines are read;
- a change made through another reference (an alias, a numpy view, an object held inside another) is seen
  only under the name the code uses;
- `hidden` lists what lets the code change names it never mentions (`exec()`, `globals()`, a star import,
  `get_ipython()`, ...): when it is not empty, the name lists are incomplete.

The walk keeps its own stack, so any tree the parser accepts is read without Python recursion. Code over
`MAX_CODE_CHARS` is refused, since parsing and walking it would take seconds.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from architect_nb.python_syntax import parse_module

__all__ = ["MAX_CODE_CHARS", "NameEffects", "name_effects"]

MAX_CODE_CHARS = 200_000  # about 0.3 s to parse and walk; agents' code and notebook cells are far smaller

# Methods that leave their object as it was (unless called with `inplace=True`), and leave their arguments
# as they were: pandas, numpy, str and container readers, and readers called through a module
# (`pd.concat`, `np.array_equal`). A method not listed here counts as a change of its object.
_READ_ONLY_METHODS = frozenset(
    {
        # pandas and numpy: views, summaries, and methods that return a new object
        "head", "tail", "describe", "info", "copy", "to_string", "to_numpy", "sum", "mean", "median",
        "min", "max", "std", "var", "count", "value_counts", "unique", "nunique", "isna", "notna",
        "isnull", "notnull", "any", "all", "astype", "groupby", "agg", "aggregate", "query", "filter",
        "select_dtypes", "reset_index", "set_index", "merge", "sort_values", "sort_index", "dropna",
        "fillna", "drop", "drop_duplicates", "duplicated", "rename", "apply", "map", "tolist", "item",
        "reshape", "ravel", "flatten", "transpose", "dot", "round", "clip", "cumsum", "equals", "isin",
        "between", "nlargest", "nsmallest", "sample", "iterrows", "itertuples", "to_dict", "to_csv",
        "to_parquet", "to_json", "to_excel", "quantile", "corr", "abs", "idxmax", "idxmin", "argmax",
        "argmin", "memory_usage", "pivot_table", "melt", "diff", "shift", "rolling", "transform",
        "replace",  # str.replace and pandas' (new object unless inplace=True)
        # str and containers
        "get", "keys", "values", "items", "index", "startswith", "endswith", "format", "join", "split",
        "rsplit", "splitlines", "strip", "lstrip", "rstrip", "lower", "upper", "title", "find", "encode",
        "decode",
        # module-level readers
        "concat", "array", "asarray", "array_equal", "allclose", "isclose", "DataFrame", "Series",
        "read_csv", "read_parquet", "read_excel", "read_json",
        # plotting draws the data; it does not change it
        "plot", "hist", "scatter", "bar", "barh", "boxplot", "imshow", "histplot", "lineplot",
        "scatterplot", "barplot", "heatmap",
    }
)  # fmt: skip

# Builtins (and IPython's display) that do not change the objects passed to them, called by their name.
_READ_ONLY_BUILTINS = frozenset(
    {
        "print", "len", "repr", "str", "int", "float", "bool", "type", "isinstance", "issubclass", "id",
        "hash", "sorted", "list", "tuple", "set", "frozenset", "dict", "sum", "min", "max", "abs", "round",
        "enumerate", "zip", "range", "reversed", "any", "all", "map", "filter", "format", "hasattr",
        "getattr", "iter", "display", "callable", "divmod", "pow", "chr", "ord", "bin", "hex", "oct", "dir",
    }
) | _READ_ONLY_METHODS  # `from pandas import concat` reads as well as `pd.concat`  # fmt: skip

# Methods that change their object but only store or read their arguments (`rows.append(df)`).
_STORING_METHODS = frozenset(
    {"append", "extend", "insert", "add", "update", "setdefault", "remove", "discard"}
)

# Names whose mere mention lets code reach names it does not write out, and how `hidden` says so.
_HIDDEN_NAMES = {
    "exec": "exec()",
    "eval": "eval()",
    "globals": "globals()",
    "__import__": "__import__()",
    "get_ipython": "get_ipython()",
    "builtins": "builtins",
    "__builtins__": "builtins",
    "__main__": "the __main__ module",
}
_HIDDEN_ATTRIBUTES = {
    "__globals__": "a function's __globals__",
    "f_globals": "a frame's f_globals",
    "f_locals": "a frame's f_locals",
}

_Comprehension = ast.ListComp | ast.SetComp | ast.GeneratorExp | ast.DictComp
_Function = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


@dataclass(frozen=True, slots=True)
class NameEffects:
    """What running the code at module level may do to the namespace's names (see the module's docstring)."""

    bound: frozenset[str] = frozenset()
    deleted: frozenset[str] = frozenset()
    mutated: frozenset[str] = frozenset()
    hidden: tuple[str, ...] = ()  # why the code may change names it does not mention; empty when none
    error: str | None = None  # why the code could not be read; then the other fields are empty

    @property
    def touched(self) -> frozenset[str]:
        return self.bound | self.deleted | self.mutated


def name_effects(code: str) -> NameEffects:
    """The names `code` can touch when run as `exec(code, namespace)`. Never raises: see `error`."""
    if len(code) > MAX_CODE_CHARS:
        size = f"{len(code):,} characters; the limit is {MAX_CODE_CHARS:,}"
        return NameEffects(error=f"the code is too long to analyse ({size})")
    try:
        tree = parse_module(code)
    except SyntaxError as exc:
        line = f" (line {exc.lineno})" if exc.lineno else ""
        return NameEffects(error=f"{type(exc).__name__}: {exc.msg}{line}")
    except (RecursionError, MemoryError):  # the parser's own depth limits
        return NameEffects(error="the code is too deeply nested to analyse")
    except ValueError as exc:  # a lone surrogate the parser cannot encode
        return NameEffects(error=f"{type(exc).__name__}: {exc}")
    try:
        return _Walker().run(tree)
    except MemoryError:
        return NameEffects(error="the code is too large to analyse")


# ---------------------------------------------------------------------- scopes


@dataclass(slots=True, eq=False)
class _Scope:
    """One module, function, class or comprehension body: what it binds, and what it changes in place."""

    kind: Literal["module", "function", "class", "comprehension"]
    parent: _Scope | None
    bound: set[str] = field(default_factory=set)
    deleted: set[str] = field(default_factory=set)
    local_only: set[str] = field(default_factory=set)  # parameters, `x: int` in a function
    declared_global: set[str] = field(default_factory=set)
    declared_nonlocal: set[str] = field(default_factory=set)
    mutated: set[str] = field(default_factory=set)  # not yet known to be this scope's or an outer one's

    def binding_scope(self) -> _Scope:
        """Where a walrus binds: comprehensions bind in the scope around them."""
        scope = self
        while scope.kind == "comprehension" and scope.parent is not None:
            scope = scope.parent
        return scope

    def enclosing(self) -> _Scope | None:
        """Where this body's free names are looked up: class bodies are skipped."""
        scope = self.parent
        while scope is not None and scope.kind == "class":
            scope = scope.parent
        return scope


# ---------------------------------------------------------------------- the walk


class _Walker:
    """One pass over the tree with an explicit stack; facts go to the scope they occur in and are resolved
    at the end, innermost scopes first (a function's locals are only known once its whole body is read)."""

    def __init__(self) -> None:
        self.scopes: list[_Scope] = []
        self.hidden: dict[str, str] = {}  # kind -> phrase, in the order found
        self.todo: list[tuple[ast.AST, _Scope]] = []

    def run(self, tree: ast.Module) -> NameEffects:
        module = self.new_scope("module", None)
        self.push(module, tree.body)
        while self.todo:
            node, scope = self.todo.pop()
            handler = _HANDLERS.get(type(node))
            if handler is None:
                self.push(scope, ast.iter_child_nodes(node))
            else:
                handler(self, node, scope)
        return self.resolve(module)

    def new_scope(
        self, kind: Literal["module", "function", "class", "comprehension"], parent: _Scope | None
    ) -> _Scope:
        scope = _Scope(kind, parent)
        self.scopes.append(scope)
        return scope

    def push(self, scope: _Scope, nodes: Any) -> None:
        """Visit `nodes` (an iterable of nodes and Nones) in `scope`, in source order."""
        batch = [(node, scope) for node in nodes if node is not None and not isinstance(node, _SKIP)]
        self.todo.extend(reversed(batch))

    def hide(self, phrase: str, kind: str = "") -> None:
        """Say once per kind (the phrase by default) why names may change unseen."""
        self.hidden.setdefault(kind or phrase, phrase)

    def resolve(self, module: _Scope) -> NameEffects:
        bound, deleted, mutated = set(module.bound), set(module.deleted), set()
        for scope in reversed(self.scopes):  # children were made after their parents
            if scope is module:
                continue
            declared = scope.declared_global
            bound |= scope.bound & declared
            deleted |= scope.deleted & declared
            mutated |= scope.mutated & declared
            local = scope.bound | scope.deleted | scope.local_only
            free = scope.mutated - local - declared - scope.declared_nonlocal
            outer = scope.enclosing()
            if outer is not None:
                outer.mutated |= free
        mutated |= module.mutated
        return NameEffects(
            bound=frozenset(bound),
            deleted=frozenset(deleted),
            mutated=frozenset(mutated),
            hidden=tuple(self.hidden.values()),
        )

    # ------------------------------------------------------------------ targets

    def target(self, node: ast.expr, scope: _Scope) -> None:
        """An assignment, `for`, `with` or comprehension target."""
        if isinstance(node, ast.Name):
            scope.bound.add(node.id)
        elif isinstance(node, ast.Tuple | ast.List):
            for element in node.elts:
                self.target(element, scope)
        elif isinstance(node, ast.Starred):
            self.target(node.value, scope)
        elif isinstance(node, ast.Attribute | ast.Subscript):
            self.changed_in_place(node, scope)
        else:
            self.push(scope, [node])

    def changed_in_place(self, node: ast.Attribute | ast.Subscript, scope: _Scope) -> None:
        """`x.a = ...`, `x[k] += ...`, `del x.a`: the object x names changes."""
        root = _root(node, through_calls=True)
        if root is not None:
            scope.mutated.add(root)
        self.push(scope, [node.value, node.slice] if isinstance(node, ast.Subscript) else [node.value])

    # ------------------------------------------------------------------ statements

    def assign(self, node: ast.Assign, scope: _Scope) -> None:
        self.push(scope, [node.value])
        for target in node.targets:
            self.target(target, scope)

    def aug_assign(self, node: ast.AugAssign, scope: _Scope) -> None:
        self.push(scope, [node.value])
        if isinstance(node.target, ast.Name):  # `items += [1]` extends a list in place
            scope.bound.add(node.target.id)
            scope.mutated.add(node.target.id)
        else:
            self.target(node.target, scope)

    def ann_assign(self, node: ast.AnnAssign, scope: _Scope) -> None:
        self.push(scope, [node.annotation, node.value])
        if node.value is not None:
            self.target(node.target, scope)
        elif isinstance(node.target, ast.Name) and scope.kind == "function":
            scope.local_only.add(node.target.id)  # `x: int` makes x local to a function, binding nothing

    def delete(self, node: ast.Delete, scope: _Scope) -> None:
        todo = list(node.targets)
        while todo:
            target = todo.pop()
            if isinstance(target, ast.Name):
                scope.deleted.add(target.id)
            elif isinstance(target, ast.Tuple | ast.List):
                todo.extend(target.elts)
            elif isinstance(target, ast.Attribute | ast.Subscript):
                self.changed_in_place(target, scope)

    def for_loop(self, node: ast.For | ast.AsyncFor, scope: _Scope) -> None:
        self.push(scope, [node.iter, *node.body, *node.orelse])
        self.target(node.target, scope)

    def with_block(self, node: ast.With | ast.AsyncWith, scope: _Scope) -> None:
        self.push(scope, [*(item.context_expr for item in node.items), *node.body])
        for item in node.items:
            if item.optional_vars is not None:
                self.target(item.optional_vars, scope)

    def except_handler(self, node: ast.ExceptHandler, scope: _Scope) -> None:
        self.push(scope, [node.type, *node.body])
        if node.name:
            scope.bound.add(node.name)  # and unbound again when the block ends

    def import_(self, node: ast.Import, scope: _Scope) -> None:
        for alias in node.names:
            if alias.name in _HIDDEN_NAMES:
                self.hide(_HIDDEN_NAMES[alias.name])
            scope.bound.add(alias.asname or alias.name.split(".")[0])

    def import_from(self, node: ast.ImportFrom, scope: _Scope) -> None:
        module = "." * node.level + (node.module or "")
        if module in _HIDDEN_NAMES:
            self.hide(_HIDDEN_NAMES[module])
        for alias in node.names:
            if alias.name == "*":
                self.hide(f"a star import (from {module} import *)", kind="star import")
                continue
            if (module, alias.name) == ("sys", "modules"):
                self.hide("sys.modules")
            elif (module, alias.name) == ("importlib", "reload"):
                self.hide("importlib.reload()")
            scope.bound.add(alias.asname or alias.name)

    def global_(self, node: ast.Global, scope: _Scope) -> None:
        scope.declared_global.update(node.names)

    def nonlocal_(self, node: ast.Nonlocal, scope: _Scope) -> None:
        scope.declared_nonlocal.update(node.names)

    def match_capture(self, node: ast.MatchAs | ast.MatchStar | ast.MatchMapping, scope: _Scope) -> None:
        name = node.rest if isinstance(node, ast.MatchMapping) else node.name
        if name:
            scope.bound.add(name)
        self.push(scope, ast.iter_child_nodes(node))

    def type_alias(self, node: Any, scope: _Scope) -> None:  # `type X = ...` (Python 3.12+)
        scope.bound.add(node.name.id)

    # ------------------------------------------------------------------ new scopes

    def function(self, node: _Function, scope: _Scope) -> None:
        arguments = node.args
        outside: list[ast.AST | None] = [*arguments.defaults, *arguments.kw_defaults]
        if not isinstance(node, ast.Lambda):  # decorators and annotations run where the function is defined
            scope.bound.add(node.name)
            every = [*arguments.posonlyargs, *arguments.args, arguments.vararg, *arguments.kwonlyargs]
            outside += [*node.decorator_list, node.returns]
            outside += [arg.annotation for arg in [*every, arguments.kwarg] if arg is not None]
        self.push(scope, outside)
        self.decorators(node, scope)
        inner = self.new_scope("function", scope)
        for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
            inner.local_only.add(arg.arg)
        for extra in (arguments.vararg, arguments.kwarg):
            if extra is not None:
                inner.local_only.add(extra.arg)
        self.push(inner, node.body if isinstance(node.body, list) else [node.body])

    def decorators(self, node: _Function | ast.ClassDef, scope: _Scope) -> None:
        """`@registry.add` calls `registry.add` with what it decorates."""
        for decorator in [] if isinstance(node, ast.Lambda) else node.decorator_list:
            if isinstance(decorator, ast.Attribute):
                self.method_call(decorator, scope)

    def class_def(self, node: ast.ClassDef, scope: _Scope) -> None:
        self.push(scope, [*node.decorator_list, *node.bases, *(k.value for k in node.keywords)])
        self.decorators(node, scope)
        scope.bound.add(node.name)
        self.push(self.new_scope("class", scope), node.body)

    def comprehension(self, node: _Comprehension, scope: _Scope) -> None:
        first, *rest = node.generators
        self.push(scope, [first.iter])  # the first iterable is read in the enclosing scope
        inner = self.new_scope("comprehension", scope)
        parts: list[ast.AST] = [*first.ifs]
        for generator in rest:
            parts += [generator.iter, *generator.ifs]
        parts += [node.key, node.value] if isinstance(node, ast.DictComp) else [node.elt]
        self.push(inner, parts)
        for generator in node.generators:
            self.target(generator.target, inner)

    def named_expr(self, node: ast.NamedExpr, scope: _Scope) -> None:
        scope.binding_scope().bound.add(node.target.id)
        self.push(scope, [node.value])

    # ------------------------------------------------------------------ expressions

    def name(self, node: ast.Name, scope: _Scope) -> None:
        phrase = _HIDDEN_NAMES.get(node.id)
        if phrase is not None:
            self.hide(phrase)
        elif node.id in ("locals", "vars"):  # kept to be called later, or passed on
            self.hide(f"{node.id}()")

    def attribute(self, node: ast.Attribute, scope: _Scope) -> None:
        if node.attr in _HIDDEN_ATTRIBUTES:
            self.hide(_HIDDEN_ATTRIBUTES[node.attr])
        elif isinstance(node.value, ast.Name):
            pair = (node.value.id, node.attr)
            if pair == ("sys", "modules"):
                self.hide("sys.modules")
            elif pair == ("importlib", "reload"):
                self.hide("importlib.reload()")
        self.push(scope, [node.value])

    def call(self, node: ast.Call, scope: _Scope) -> None:
        func = node.func
        arguments = [*node.args, *(k.value for k in node.keywords)]
        self.push(scope, [func if not isinstance(func, ast.Name) else None, *arguments])
        if isinstance(func, ast.Name):
            if self.hidden_call(node, func.id, scope):
                return
            reads = func.id in _READ_ONLY_BUILTINS
        elif isinstance(func, ast.Attribute):
            self.method_call(func, scope, inplace=_inplace(node))
            if func.attr in _STORING_METHODS:
                return
            reads = func.attr in _READ_ONLY_METHODS
        else:
            reads = False
        if not reads:
            for argument in arguments:
                scope.mutated.update(_argument_roots(argument))

    def method_call(self, func: ast.Attribute, scope: _Scope, *, inplace: bool = False) -> None:
        """`x.m(...)`: x's object changes unless m is known to be read-only."""
        receiver = _root(func.value, through_calls=True)
        if receiver is not None and (func.attr not in _READ_ONLY_METHODS or inplace):
            scope.mutated.add(receiver)

    def hidden_call(self, node: ast.Call, callee: str, scope: _Scope) -> bool:
        """Note what a call of a plain name hides; True when its arguments need no more thought."""
        phrase = _HIDDEN_NAMES.get(callee)
        if phrase is not None:
            self.hide(phrase)
        elif callee == "locals" and scope.kind == "module":
            self.hide("locals()")
        elif callee == "vars" and not node.args and scope.kind == "module":
            self.hide("vars()")
        elif callee in ("setattr", "delattr"):
            root = _root(node.args[0], through_calls=False) if node.args else None
            if root is None:
                self.hide(f"{callee}() on a computed object")
            else:
                scope.mutated.add(root)
            return True  # the value set is stored, not changed
        return False


def _root(node: ast.expr, *, through_calls: bool) -> str | None:
    """The name an `a.b[0].c` chain starts from; with `through_calls`, also `a.get(k).c`."""
    while True:
        if isinstance(node, ast.Name):
            return node.id
        if isinstance(node, ast.Attribute | ast.Subscript):
            node = node.value
        elif through_calls and isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            node = node.func.value
        elif (
            through_calls
            and isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and node.args
        ):
            node = node.args[0]
        else:
            return None


def _argument_roots(node: ast.expr) -> Iterator[str]:
    """The names whose objects a call receives: `f(df)`, `f(*rows)`, `f(df.a)`, `f([a, b])`."""
    todo = [node]
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Starred):
            todo.append(node.value)
        elif isinstance(node, ast.List | ast.Tuple | ast.Set):
            todo.extend(node.elts)
        elif isinstance(node, ast.Dict):
            todo.extend(key for key in node.keys if key is not None)
            todo.extend(node.values)
        else:
            root = _root(node, through_calls=False)
            if root is not None:
                yield root


def _inplace(node: ast.Call) -> bool:
    """`inplace=` with anything but a false constant."""
    return any(
        k.arg == "inplace" and not (isinstance(k.value, ast.Constant) and not k.value.value)
        for k in node.keywords
    )


_SKIP = (ast.Constant, ast.expr_context, ast.operator, ast.cmpop, ast.unaryop, ast.boolop)

_HANDLERS: dict[type[ast.AST], Callable[[_Walker, Any, _Scope], None]] = {
    ast.Assign: _Walker.assign,
    ast.AugAssign: _Walker.aug_assign,
    ast.AnnAssign: _Walker.ann_assign,
    ast.Delete: _Walker.delete,
    ast.For: _Walker.for_loop,
    ast.AsyncFor: _Walker.for_loop,
    ast.With: _Walker.with_block,
    ast.AsyncWith: _Walker.with_block,
    ast.ExceptHandler: _Walker.except_handler,
    ast.Import: _Walker.import_,
    ast.ImportFrom: _Walker.import_from,
    ast.Global: _Walker.global_,
    ast.Nonlocal: _Walker.nonlocal_,
    ast.MatchAs: _Walker.match_capture,
    ast.MatchStar: _Walker.match_capture,
    ast.MatchMapping: _Walker.match_capture,
    ast.FunctionDef: _Walker.function,
    ast.AsyncFunctionDef: _Walker.function,
    ast.Lambda: _Walker.function,
    ast.ClassDef: _Walker.class_def,
    ast.ListComp: _Walker.comprehension,
    ast.SetComp: _Walker.comprehension,
    ast.GeneratorExp: _Walker.comprehension,
    ast.DictComp: _Walker.comprehension,
    ast.NamedExpr: _Walker.named_expr,
    ast.Name: _Walker.name,
    ast.Attribute: _Walker.attribute,
    ast.Call: _Walker.call,
}
if hasattr(ast, "TypeAlias"):  # pragma: no cover - Python 3.12+
    _HANDLERS[ast.TypeAlias] = _Walker.type_alias
