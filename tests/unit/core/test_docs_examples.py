"""Every code example in README.md and docs/*.md is executed, so none of them rots.

- ```python blocks run in order, one namespace per page, in a fresh process whose working folder is a
  temporary copy holding the repository's `notebooks/` (so `notebooks/sample_project` resolves as in a
  checkout). The venv's bin folder comes first on PATH. No API key is set: examples use the scripted model.
- ```yaml blocks are loaded: a block with `turns:` as a scripted-model script (`load_script`), any other as an
  `.architect.yaml` (`load_config`), so a misspelt key fails here.
- Shell blocks (bash, sh, console) and plain text are not executed; they are commands for a person.

A block opts out only with `<!-- not-tested: REASON -->` on the line right before its fence; there should be
almost none, and each needs a reason. The configuration reference table must match the schema.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from architect_nb.agent.models.scripted import load_script
from architect_nb.config import load_config
from architect_nb.config.reference import reference_rows, render_reference

# Slow, left out of `make test-unit`: each document's examples run in a fresh Python process, as a
# reader runs them.
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
FENCE = re.compile(
    r"^(?P<indent> *)```(?P<lang>[\w+-]*)[^\n]*\n(?P<body>.*?)^(?P=indent)```[ \t]*$", re.M | re.S
)
OPT_OUT = re.compile(r"<!--\s*not-tested:\s*(?P<reason>[^>]*?)\s*-->\s*$")
EXECUTED = {"python", "py", "yaml", "yml"}
NOT_CODE = {"bash", "sh", "shell", "console", "text", "", "json", "diff", "ini", "toml", "markdown"}


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    body: str
    opt_out: str | None

    @property
    def where(self) -> str:
        return f"{self.page.relative_to(ROOT)}:{self.line}"


def blocks(page: Path) -> list[Block]:
    text = page.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        line = text.count("\n", 0, match.start()) + 1
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        opt = OPT_OUT.search(before)
        body = textwrap.dedent(match.group("body"))
        found.append(
            Block(page, line, match.group("lang").lower(), body, opt.group("reason") if opt else None)
        )
    return found


ALL = [b for page in PAGES for b in blocks(page)]


def _ids(items: list[object]) -> list[str]:
    return [getattr(i, "where", str(i)) for i in items]


def test_every_block_has_a_known_language_and_opt_outs_give_a_reason() -> None:
    for block in ALL:
        assert block.lang in EXECUTED | NOT_CODE, f"{block.where}: unknown fence language {block.lang!r}"
        if block.opt_out is not None:
            assert len(block.opt_out) >= 10, f"{block.where}: say why the block is not tested"
    opted = [b for b in ALL if b.lang in EXECUTED and b.opt_out is not None]
    assert len(opted) <= 3, f"too many untested examples: {[b.where for b in opted]}"
    # The pages below are found from here: none found would make every test of this file pass unseen.
    assert ROOT / "README.md" in PYTHON_PAGES and len(PYTHON_PAGES) > 5 and len(YAML_BLOCKS) > 5


PYTHON_PAGES = sorted({b.page for b in ALL if b.lang in ("python", "py") and b.opt_out is None})


@pytest.mark.parametrize("page", PYTHON_PAGES, ids=[str(p.relative_to(ROOT)) for p in PYTHON_PAGES])
def test_python_examples_run(page: Path, tmp_path: Path) -> None:
    shutil.copytree(ROOT / "notebooks", tmp_path / "notebooks")
    runner = tmp_path / "run_examples.py"
    examples = [(b.where, b.body) for b in blocks(page) if b.lang in ("python", "py") and b.opt_out is None]
    runner.write_text(
        "import sys\n"
        f"examples = {examples!r}\n"
        "namespace = {'__name__': '__main__'}\n"
        "for where, source in examples:\n"
        "    print(f'--- {where}', flush=True)\n"
        "    exec(compile(source, where, 'exec'), namespace)\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARCHITECT_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["TMPDIR"] = str(tmp_path)
    env.pop("PYTHONPATH", None)
    for key in [k for k in env if k.endswith("_API_KEY")]:
        env.pop(key)  # examples must not need a paid model
    out = subprocess.run(
        [sys.executable, str(runner)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=240,
        check=False,
    )
    assert out.returncode == 0, f"{out.stdout[-4000:]}\n{out.stderr[-4000:]}"
    # The examples ran on the copy; the repository's sample project is as committed.
    assert (tmp_path / "notebooks" / "sample_project").is_dir()


YAML_BLOCKS = [b for b in ALL if b.lang in ("yaml", "yml") and b.opt_out is None]


@pytest.mark.parametrize("block", YAML_BLOCKS, ids=_ids(YAML_BLOCKS))  # type: ignore[arg-type]
def test_yaml_examples_load(block: Block, tmp_path: Path) -> None:
    path = tmp_path / ("script.yaml" if "turns:" in block.body else ".architect.yaml")
    path.write_text(block.body)
    if "turns:" in block.body:
        load_script(path)
    else:
        load_config(path, environ={})


def test_the_configuration_reference_matches_the_schema() -> None:
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    fix = "python -m architect_nb.config.reference docs/configuration.md"
    assert render_reference() in page, f"docs/configuration.md is out of date: run `{fix}`"
    assert all(row[3] for row in reference_rows()), "every key needs a description in the schema"
