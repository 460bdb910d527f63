"""The package's shape holds: its layers and the execution and agent families import one way only, the
notebook layer alone imports IPython, and tool families meet only at public names (a family's modules may use
each other's underscored names; a sibling family may not).

Every import counts, the lazy ones inside functions and those only for type checkers included: an arrow
that points the wrong way is a cycle waiting for its first eager import.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from pathlib import Path

import pytest

import architect_nb
from architect_nb.python_syntax import parse_module
from tests.support.layout import (
    Tree,
    claims,
    depends_text,
    family_cycles,
    module_cycles,
    top_doc,
    undeclared,
    unnamed_modules,
)

PACKAGE = Path(architect_nb.__file__).parent
TOOLS = PACKAGE / "tools"
EXECUTION = PACKAGE / "execution"
AGENT = PACKAGE / "agent"
NOTEBOOK = PACKAGE / "notebook"
FAMILIES = sorted(p.name for p in TOOLS.iterdir() if (p / "__init__.py").is_file())
IPYTHON_LIBRARIES = {"IPython", "ipykernel", "ipywidgets", "jupyter_ui_poll", "comm"}

# The layers of `architect_nb`, bottom first. A module may import its own layer's parts and the layers below;
# two parts of one layer never import each other. `paths` is the leaf that tools and execution both use.
LAYERS: list[set[str]] = [
    {"_lazy"},
    {"paths", "process_group", "provenance", "python_syntax", "redaction_prefilter", "server"},
    {"redaction", "config"},
    {"log"},
    {"tools", "checks"},
    {"execution", "mcp"},
    {"agent"},
    {"testing", "acp"},
    {"notebook"},
    {"__init__", "__main__", "demo"},
]
# The execution package: its families, bottom first, and the pipeline (its top-level modules) above them.
EXECUTION_LAYERS: list[set[str]] = [
    {"checkpoints", "confirmation", "gates"},
    {"hooks"},
    {"guardrails"},
    {"<pipeline>"},
]
# The agent package: the model clients know nothing of a run or its conversation, the conversation knows the
# models only, and the run (the package's own modules) uses both.
AGENT_LAYERS: list[set[str]] = [
    {"models"},
    {"conversation"},
    {"<run>"},
]


def imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, imported names) for every import in `path`, the lazy ones inside functions included."""
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(parse_module(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, [alias.name for alias in node.names]))
    return found


def part_of(module: str) -> str | None:
    """The top-level part of `architect_nb` a module belongs to (`tools`, `log`, ...), None outside it.

    The bare package is none: every module's parent package is imported before it (for `__version__`)."""
    parts = module.split(".")
    if parts[0] != "architect_nb" or len(parts) == 1:
        return None
    return parts[1]


def execution_part(module: str) -> str | None:
    """The execution family of a module (`hooks`, ...), `<pipeline>` for the package's own modules."""
    parts = module.split(".")
    if parts[:2] != ["architect_nb", "execution"]:
        return None
    if len(parts) > 3 or (len(parts) == 3 and (EXECUTION / parts[2] / "__init__.py").is_file()):
        return parts[2]
    return "<pipeline>"


def agent_part(module: str) -> str | None:
    """The agent family of a module (`models`, `conversation`), `<run>` for the package's own modules."""
    parts = module.split(".")
    if parts[:2] != ["architect_nb", "agent"]:
        return None
    if len(parts) > 3 or (len(parts) == 3 and (AGENT / parts[2] / "__init__.py").is_file()):
        return parts[2]
    return "<run>"


def rank(layers: list[set[str]], part: str) -> int:
    return next(i for i, layer in enumerate(layers) if part in layer)


def wrong_arrows(
    source: str, targets: list[str], layers: list[set[str]], part: Callable[[str], str | None]
) -> list[str]:
    """The imports of module `source` that point up a layer, or across to a sibling of the same layer."""
    mine = part(source)
    bad = []
    for target in targets:
        theirs = part(target)
        if mine is None or theirs is None or theirs == mine:
            continue
        if rank(layers, theirs) >= rank(layers, mine):
            bad.append(f"{source} -> {target}")
    return bad


def module_name(path: Path) -> str:
    """`architect_nb.tools.base` for tools/base.py; `architect_nb.__init__` for the package's own file."""
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__" and len(parts) > 2:
        parts.pop()
    return ".".join(parts)


def all_wrong_arrows() -> list[str]:
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if "labextension" in path.relative_to(PACKAGE).parts:
            continue
        source = module_name(path)
        targets = [module for module, _ in imports(path)]
        offenders += wrong_arrows(source, targets, LAYERS, part_of)
        offenders += wrong_arrows(source, targets, EXECUTION_LAYERS, execution_part)
        offenders += wrong_arrows(source, targets, AGENT_LAYERS, agent_part)
    return offenders


def test_every_part_of_the_package_has_a_layer() -> None:
    parts = {p.stem for p in PACKAGE.glob("*.py")} | {
        p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()
    }
    assert parts == set().union(*LAYERS)
    families = {p.name for p in EXECUTION.iterdir() if (p / "__init__.py").is_file()}
    assert families == {"checkpoints", "confirmation", "gates", "guardrails", "hooks"}
    families = {p.name for p in AGENT.iterdir() if (p / "__init__.py").is_file()}
    assert families == set().union(*AGENT_LAYERS) - {"<run>"}


def test_the_layers_and_the_execution_families_import_one_way() -> None:
    assert all_wrong_arrows() == []


@pytest.mark.parametrize(
    ("source", "target"),
    [
        ("architect_nb.tools.search.results", "architect_nb.execution.validators"),  # tools -> execution
        ("architect_nb.execution.engine", "architect_nb.agent.loop"),  # execution -> agent
        ("architect_nb.agent.models.llm", "architect_nb.testing.scripted"),  # agent -> testing
        ("architect_nb.execution.steps", "architect_nb.mcp.adapter"),  # a sibling of the same layer
        ("architect_nb.paths.validators", "architect_nb.log"),  # the leaf reaching up
        ("architect_nb.execution.hooks.executor", "architect_nb.execution.guardrails.rails"),  # family upward
        (
            "architect_nb.execution.gates.kernel_checks",
            "architect_nb.execution.confirmation.policy",
        ),  # sibling
        ("architect_nb.execution.checkpoints.store", "architect_nb.execution.engine"),  # family -> pipeline
        ("architect_nb.checks.api", "architect_nb.execution.checkpoints.store"),  # checks -> execution
        ("architect_nb.checks.sides", "architect_nb.tools.kernel.session"),  # a sibling of the same layer
        ("architect_nb.agent.models.gateway", "architect_nb.agent.conversation.context_meter"),  # models up
        ("architect_nb.agent.models.scripted", "architect_nb.agent.conversation.thread"),
        ("architect_nb.agent.models.llm", "architect_nb.agent.events"),  # models -> the run
        ("architect_nb.agent.conversation.thread", "architect_nb.agent.loop"),  # conversation -> the run
    ],
)
def test_the_layout_check_catches_a_wrong_arrow(tmp_path: Path, source: str, target: str) -> None:
    sample = tmp_path / "sample.py"
    sample.write_text(f"def lazy():\n    from {target} import something\n")
    found = [module for module, _ in imports(sample)]
    caught = (
        wrong_arrows(source, found, LAYERS, part_of)
        + wrong_arrows(source, found, EXECUTION_LAYERS, execution_part)
        + wrong_arrows(source, found, AGENT_LAYERS, agent_part)
    )
    assert caught == [f"{source} -> {target}"]


def test_the_layout_check_lets_downward_arrows_pass() -> None:
    allowed = [
        ("architect_nb.execution.engine", "architect_nb.execution.hooks.executor"),
        (
            "architect_nb.execution.guardrails.claude_permissions",
            "architect_nb.execution.hooks.claude_settings",
        ),
        ("architect_nb.execution.hooks.transcript", "architect_nb.execution.checkpoints.files"),
        ("architect_nb.tools.workspace", "architect_nb.paths.validators"),
        ("architect_nb.notebook.state", "architect_nb.execution.engine"),
        ("architect_nb.agent.conversation.context", "architect_nb.agent.models.model_reply"),
        ("architect_nb.agent.loop", "architect_nb.agent.conversation.recording"),
        ("architect_nb.agent", "architect_nb.agent.models.llm"),
    ]
    for source, target in allowed:
        assert wrong_arrows(source, [target], LAYERS, part_of) == []
        assert wrong_arrows(source, [target], EXECUTION_LAYERS, execution_part) == []
        assert wrong_arrows(source, [target], AGENT_LAYERS, agent_part) == []


def family_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] == ["architect_nb", "tools"] and len(parts) > 2 and parts[2] in FAMILIES:
        return parts[2]
    return None


def test_the_families_are_the_documented_ones() -> None:
    assert FAMILIES == [
        "commands",
        "filesystem",
        "kernel",
        "notebook_files",
        "patch",
        "search",
        "todo",
        "tree",
    ]
    top = sorted(p.stem for p in TOOLS.glob("*.py"))
    assert top == [
        "__init__",
        "base",
        "metadata",
        "outcome",
        "registry",
        "setup",
        "state_snapshot",
        "workspace",
    ]
    notebook = sorted(p.name for p in NOTEBOOK.iterdir() if (p / "__init__.py").is_file())
    assert notebook == ["context", "kernel", "output", "questions"]
    packages = [TOOLS / family for family in FAMILIES] + [
        p
        for folder in (EXECUTION, AGENT, NOTEBOOK)
        for p in folder.iterdir()
        if (p / "__init__.py").is_file()
    ]
    for package in [*packages, PACKAGE / "paths"]:
        doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text()))
        assert doc and "depends on" in doc.lower(), (
            f"{package.relative_to(PACKAGE)}/__init__.py must say what it holds and what it depends on"
        )


def test_the_tool_core_imports_no_family() -> None:
    """`base`, `registry` and `workspace` are what every family builds on; `setup` is where they meet."""
    for name in ("base", "metadata", "outcome", "registry", "workspace"):
        families = {family_of(module) for module, _ in imports(TOOLS / f"{name}.py")} - {None}
        assert not families, f"tools/{name}.py imports {families}"


def test_only_the_notebook_layer_imports_ipython() -> None:
    offenders = []
    for path in PACKAGE.rglob("*.py"):
        rel = path.relative_to(PACKAGE)
        if rel.parts[0] in ("notebook", "labextension"):
            continue
        for module, _ in imports(path):
            if module.split(".")[0] in IPYTHON_LIBRARIES:
                offenders.append(f"{rel}: {module}")
    assert not offenders


def test_no_family_imports_a_sibling_familys_private_parts() -> None:
    offenders = []
    for family in FAMILIES:
        for path in (TOOLS / family).glob("*.py"):
            for module, names in imports(path):
                other = family_of(module)
                if other is None or other == family:
                    continue
                private = [p for p in module.split(".")[3:] if p.startswith("_")]
                private += [n for n in names if n.startswith("_")]
                if private:
                    offenders.append(f"tools/{family}/{path.name}: {module} {private}")
    assert not offenders


def test_the_layout_check_sees_a_private_import(tmp_path: Path) -> None:
    sample = tmp_path / "x.py"
    sample.write_text("from architect_nb.tools.search.literals import _parser\nimport IPython\n")
    assert imports(sample) == [("architect_nb.tools.search.literals", ["_parser"]), ("IPython", [])]
    assert family_of("architect_nb.tools.search.literals") == "search"
    assert family_of("architect_nb.tools.base") is None


def test_the_guardrails_read_and_write_checks_import_one_way() -> None:
    """`writes` may use `reads` (the per-program walks); neither uses the engine (`rails`) nor Claude Code's
    rules, and `reads` never uses `writes`."""
    guardrails = EXECUTION / "guardrails"
    top = "architect_nb.execution.guardrails"
    forbidden = {
        "reads": (f"{top}.writes", f"{top}.rails", f"{top}.claude_permissions"),
        "writes": (f"{top}.rails", f"{top}.claude_permissions"),
    }
    checked = 0
    offenders = []
    for package, banned in forbidden.items():
        for path in (guardrails / package).glob("*.py"):
            checked += 1
            offenders += [f"{package}/{path.name}: {m}" for m, _ in imports(path) if m.startswith(banned)]
    assert checked >= 10 and offenders == []


# ---------------------------------------------------------------------- what the top docs claim, and cycles


LAYOUT = Tree(PACKAGE)
SUBPACKAGES = [p for p in LAYOUT.packages() if p != "architect_nb"]


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_every_package_names_its_modules_and_what_it_depends_on(package: str) -> None:
    assert depends_text(top_doc(LAYOUT, package)), f"{package}'s top doc has no 'Depends on ...' paragraph"
    assert unnamed_modules(LAYOUT, package) == [], f"{package}'s top doc does not name these modules"


@pytest.mark.parametrize("package", SUBPACKAGES)
def test_the_depends_on_lines_are_true(package: str) -> None:
    """Every package the modules import is named in the doc's "Depends on", and every name there exists."""
    _declared, unknown = claims(LAYOUT, package)
    assert unknown == [], f"{package}'s 'Depends on' names modules that do not exist: {unknown}"
    assert undeclared(LAYOUT, package) == [], f"{package} imports what its 'Depends on' does not name"


def test_no_import_cycle_between_modules_or_families() -> None:
    assert module_cycles(LAYOUT) == []
    assert family_cycles(LAYOUT) == []


def _planted(tmp_path: Path, files: dict[str, str]) -> Tree:
    root = tmp_path / "planted"
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return Tree(root)


def test_the_layout_check_catches_a_planted_cycle(tmp_path: Path) -> None:
    tree = _planted(
        tmp_path,
        {
            "__init__.py": "",
            "one/__init__.py": '"""One.\n\n- `a`: a.\n\nDepends on `two`."""\n',
            "one/a.py": "def f():\n    from planted.two.b import g  # lazy, inside a function: counts too\n",
            "two/__init__.py": '"""Two.\n\n- `b`: b.\n\nDepends on `one`."""\n',
            "two/b.py": "from planted.one.a import f\n",
        },
    )
    assert module_cycles(tree) == [["planted.one.a", "planted.two.b"]]
    assert family_cycles(tree) == [["planted.one", "planted.two"]]


def test_the_layout_check_catches_a_planted_false_depends_on_line(tmp_path: Path) -> None:
    tree = _planted(
        tmp_path,
        {
            "__init__.py": "",
            "core/__init__.py": '"""Core.\n\n- `base`: base.\n\nDepends on `gone` only."""\n',
            "core/base.py": "from planted.extra.thing import x\n",
            "extra/__init__.py": '"""Extra.\n\n- `thing`: a thing.\n\nDepends on nothing."""\n',
            "extra/thing.py": "x = 1\n",
        },
    )
    assert claims(tree, "planted.core")[1] == ["gone"]  # a module that does not exist
    assert undeclared(tree, "planted.core") == ["planted.core.base -> planted.extra.thing"]
    assert unnamed_modules(tree, "planted.extra") == []
    assert module_cycles(tree) == [] and family_cycles(tree) == []


def test_the_layout_check_catches_a_planted_cycle_between_sibling_families(tmp_path: Path) -> None:
    """Two families of one package (as `agent.models` and `agent.conversation` are) that import each other,
    each doc saying so: the "Depends on" lines are true, and the cycle is still caught."""
    tree = _planted(
        tmp_path,
        {
            "__init__.py": "",
            "agent/__init__.py": '"""Agent: `loop`, `models`, `conversation`.\n\nDepends on nothing."""\n',
            "agent/loop.py": "from planted.agent.models.llm import call\n",
            "agent/models/__init__.py": '"""Models.\n\n- `llm`: l.\n\nDepends on `agent.conversation`."""\n',
            "agent/models/llm.py": "def call():\n    from planted.agent.conversation.thread import Thread\n",
            "agent/conversation/__init__.py": '"""Talk.\n\n- `thread`: t.\n\nDepends on `agent.models`."""\n',
            "agent/conversation/thread.py": "from planted.agent.models.llm import call\n",
        },
    )
    assert undeclared(tree, "planted.agent.models") == []
    assert undeclared(tree, "planted.agent.conversation") == []
    assert module_cycles(tree) == [["planted.agent.conversation.thread", "planted.agent.models.llm"]]
    assert family_cycles(tree) == [["planted.agent.conversation", "planted.agent.models"]]


def test_the_layout_check_catches_a_planted_false_depends_on_line_in_a_family(tmp_path: Path) -> None:
    """In a family's doc a bare name is its parent's module first: `config` in `agent.models` is
    `agent.config`, so a family that imports the top-level `config` must say `planted.config`."""
    tree = _planted(
        tmp_path,
        {
            "__init__.py": "",
            "config/__init__.py": '"""Config.\n\n- `schema`: s.\n\nDepends on nothing."""\n',
            "config/schema.py": "x = 1\n",
            "agent/__init__.py": '"""Agent.\n\n- `config`: c.\n- `models`.\n\nDepends on `config`."""\n',
            "agent/config.py": "y = 2\n",
            "agent/models/__init__.py": '"""Models: `llm`.\n\nDepends on `config` and `agent.gone`."""\n',
            "agent/models/llm.py": "from planted.config.schema import x\n",
        },
    )
    assert claims(tree, "planted.agent.models") == ({"planted.agent.config"}, ["agent.gone"])
    assert undeclared(tree, "planted.agent.models") == ["planted.agent.models.llm -> planted.config.schema"]
    (tree.root / "agent/models/__init__.py").write_text(
        '"""Models.\n\n- `llm`: l.\n\nDepends on `planted.config`."""\n'
    )
    assert claims(tree, "planted.agent.models") == ({"planted.config"}, [])
    assert undeclared(tree, "planted.agent.models") == []
    assert module_cycles(tree) == [] and family_cycles(tree) == []
