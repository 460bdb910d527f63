"""The package's shape holds: the notebook layer alone imports IPython, and tool families meet only at public
names (a family's modules may use each other's underscored names; a sibling family may not)."""

from __future__ import annotations

import ast
from pathlib import Path

import architect_nb

PACKAGE = Path(architect_nb.__file__).parent
TOOLS = PACKAGE / "tools"
FAMILIES = sorted(p.name for p in TOOLS.iterdir() if (p / "__init__.py").is_file())
IPYTHON_LIBRARIES = {"IPython", "ipykernel", "ipywidgets", "jupyter_ui_poll", "comm"}


def imports(path: Path) -> list[tuple[str, list[str]]]:
    """(module, imported names) for every import in `path`, the lazy ones inside functions included."""
    found: list[tuple[str, list[str]]] = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found += [(alias.name, []) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.module, [alias.name for alias in node.names]))
    return found


def family_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[:2] == ["architect_nb", "tools"] and len(parts) > 2 and parts[2] in FAMILIES:
        return parts[2]
    return None


def test_the_families_are_the_documented_ones() -> None:
    assert FAMILIES == ["commands", "filesystem", "kernel", "notebook_files", "patch", "search"]
    top = sorted(p.stem for p in TOOLS.glob("*.py"))
    assert top == ["__init__", "base", "registry", "setup", "workspace"]
    for family in FAMILIES:
        doc = ast.get_docstring(ast.parse((TOOLS / family / "__init__.py").read_text()))
        assert doc and "Depends on" in doc, f"tools/{family}/__init__.py must say what it holds and needs"


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
