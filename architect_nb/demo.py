"""`make demo`: a short tour of the tool system on a copy of `notebooks/sample_project/`.

Until the agent loop lands, the tour drives the tools directly: it registers them, prints their schemas and
reads, lists and writes through them, including a refused escape from the workspace.
"""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

from architect_nb.config import WorkspaceConfig
from architect_nb.tools.registry import ToolRegistry
from architect_nb.tools.setup import register_all_tools

SAMPLE_PROJECT = Path(__file__).resolve().parent.parent / "notebooks" / "sample_project"


def _show(title: str, text: str) -> None:
    print(f"\n=== {title}")
    print(text.rstrip())


def _call(registry: ToolRegistry, name: str, **args: object) -> None:
    result = registry.get(name).execute(**args)
    shown_args = ", ".join(f"{k}={v!r}" for k, v in args.items())
    status = "ok" if result.success else "refused"
    _show(f"{name}({shown_args}) -> {status}", result.to_model_text())


def main(project: Path = SAMPLE_PROJECT) -> int:
    with tempfile.TemporaryDirectory(prefix="architect-demo-") as tmp:
        workspace = Path(tmp) / "sample_project"
        shutil.copytree(project, workspace)
        registry = ToolRegistry()
        register_all_tools(registry, WorkspaceConfig(root=workspace))
        print(f"Workspace: a copy of {project} in {workspace}")
        _show(f"{registry.count()} tools registered", "\n".join(t.name for t in registry.list_all()))
        schemas = registry.get_schemas()
        _show(
            f"Schemas the model receives ({len(json.dumps(schemas))} characters)",
            json.dumps(schemas, indent=1),
        )
        _call(registry, "list_files", recursive=True)
        _call(registry, "read_file", path="shop/cart.py", offset=20, limit=6)
        _call(
            registry,
            "write_file",
            path="NOTES.md",
            content="# Notes\n\nTotals are floats; consider Decimal.\n",
        )
        _call(registry, "read_file", path="NOTES.md")
        _call(registry, "read_file", path="../../etc/passwd")
        _call(registry, "delete_file", path="NOTES.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
