"""What a package's top doc claims about its layout, and what its imports say: the checks of
tests/unit/core/test_package_layout.py, on any tree (a planted one included).

Every import counts, the lazy ones inside functions and those only for type checkers too: an arrow that is
not declared, or that closes a circle, is a cycle waiting for its first eager import.
"""

from __future__ import annotations

import ast
import functools
import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

from architect_nb.python_syntax import parse_module

#: Single modules at the top of the package that anything may use without naming them: leaves.
LEAF_MODULES = {"_lazy", "log", "redaction", "redaction_prefilter", "process_group", "python_syntax"}
#: What "the core" means in a tool family's doc.
TOOLS_CORE = {"base", "metadata", "outcome", "registry", "workspace"}
_BACKTICKED = re.compile(r"`([A-Za-z_][\w.]*)`")
#: "Depends on ..." opening a line or a sentence, or "it depends on ..." ("A leaf: it depends on ...").
_DEPENDS = re.compile(r"(?:^|(?<=[.:;]\s)|(?<=\n))(?:[Ii]t )?[Dd]epends on", re.MULTILINE)


@dataclass(frozen=True)
class Tree:
    """The modules of a package tree (`root` is the folder of its top package, e.g. .../architect_nb)."""

    root: Path

    @property
    def top(self) -> str:
        return self.root.name

    def modules(self) -> dict[str, Path]:
        """Every module by dotted name; a package by its own name (its `__init__.py`)."""
        return _modules(self.root)

    def packages(self) -> list[str]:
        return [name for name, path in self.modules().items() if path.name == "__init__.py"]


@functools.cache
def _modules(root: Path) -> dict[str, Path]:
    """Every module under `root` by dotted name; a package by its own name (its `__init__.py`)."""
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = list(path.relative_to(root.parent).with_suffix("").parts)
        if "labextension" in parts:
            continue
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


@functools.cache
def imported(path: Path) -> list[str]:
    """The dotted names `path` imports (absolute imports; `from a import b` gives `a.b` and `a`)."""
    names: list[str] = []
    for node in ast.walk(parse_module(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
            names += [f"{node.module}.{alias.name}" for alias in node.names]
    return names


@functools.cache
def import_graph(tree: Tree) -> dict[str, set[str]]:
    """Module -> the modules of the tree it imports (a package importing its own modules is left out: that
    is how lazy exports work)."""
    modules = tree.modules()

    def resolve(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = {t for n in imported(path) if n.split(".")[0] == tree.top and (t := resolve(n)) is not None}
        graph[name] = {t for t in targets if t != name and not t.startswith(name + ".")}
    return graph


def family_of(tree: Tree, module: str) -> str:
    """The package a module belongs to (a package is its own family)."""
    return module if tree.modules()[module].name == "__init__.py" else module.rpartition(".")[0]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected parts of `graph` with more than one member (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0

    def visit(node: str) -> None:
        nonlocal counter
        index[node] = low[node] = counter
        counter += 1
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            part = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                part.append(member)
                if member == node:
                    break
            if len(part) > 1:
                found.append(sorted(part))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def module_cycles(tree: Tree) -> list[list[str]]:
    return cycles(import_graph(tree))


def family_cycles(tree: Tree) -> list[list[str]]:
    """Cycles between packages: one family importing another that (through any module) imports it back. A
    package and its own subpackages are one line of descent, not a cycle."""
    families: dict[str, set[str]] = {}
    for module, targets in import_graph(tree).items():
        mine = family_of(tree, module)
        for target in targets:
            theirs = family_of(tree, target)
            if not (theirs == mine or theirs.startswith(mine + ".") or mine.startswith(theirs + ".")):
                families.setdefault(mine, set()).add(theirs)
    return cycles(families)


def top_doc(tree: Tree, package: str) -> str:
    return ast.get_docstring(parse_module(tree.modules()[package].read_text(encoding="utf-8"))) or ""


def depends_text(doc: str) -> str:
    """The doc's "Depends on ..." paragraph, from those words to the paragraph's end ('' if none)."""
    match = _DEPENDS.search(doc)
    return doc[match.start() :].split("\n\n", maxsplit=1)[0] if match else ""


def claims(tree: Tree, package: str) -> tuple[set[str], list[str]]:
    """The modules and packages a package's "Depends on" names, resolved, and the names that resolve to
    nothing (a module that does not exist, or no longer does)."""
    text = depends_text(top_doc(tree, package))
    modules = tree.modules()
    parent = package.rpartition(".")[0]
    resolved: set[str] = set()
    unknown: list[str] = []
    if re.search(r"\bthe core\b", text):
        tools = f"{tree.top}.tools"
        resolved |= {f"{tools}.{name}" for name in TOOLS_CORE if f"{tools}.{name}" in modules}
        resolved.add(f"{tree.top}.paths")
    for token in _BACKTICKED.findall(text):
        candidates = [token] if token.startswith(tree.top + ".") else []
        candidates += [f"{parent}.{token}", f"{tree.top}.{token}", f"{package}.{token}"]
        hit = next((c for c in candidates if c in modules), None)
        if hit is not None:
            resolved.add(hit)
        elif "." not in token and importlib.util.find_spec(token) is not None:
            continue  # a library (`pathspec`): not ours to check
        else:
            unknown.append(token)
    return resolved, unknown


def undeclared(tree: Tree, package: str) -> list[str]:
    """What the package's own modules import from other packages of the tree that its doc does not name."""
    modules = tree.modules()
    graph = import_graph(tree)
    declared, _unknown = claims(tree, package)
    own = [m for m in modules if m == package or family_of(tree, m) == package]
    missing = set()
    for module in own:
        for target in graph[module]:
            if target == package or target.startswith(package + "."):
                continue  # its own modules and subpackages
            if target.rpartition(".")[2] in LEAF_MODULES and target.count(".") == 1:
                continue
            if target == tree.top:
                continue
            covered = any(
                target == name or target.startswith(name + ".") or name.startswith(target + ".")
                for name in declared
            )
            if not covered:
                missing.add(f"{module} -> {target}")
    return sorted(missing)


def unnamed_modules(tree: Tree, package: str) -> list[str]:
    """The package's own modules and subpackages its top doc does not name (as `name`)."""
    named = set(_BACKTICKED.findall(top_doc(tree, package)))
    folder = tree.modules()[package].parent
    own = [p.stem for p in folder.glob("*.py") if p.stem != "__init__"]
    own += [p.name for p in folder.iterdir() if (p / "__init__.py").is_file()]
    return sorted(
        name for name in own if name not in named and not any(n.endswith("." + name) for n in named)
    )
