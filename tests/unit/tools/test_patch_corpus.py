"""The stdlib patch corpus: each damaged diff applies byte for byte; a stale one fails, changing nothing."""

from __future__ import annotations

import shutil
import stat
from collections import Counter
from pathlib import Path

import pytest

from architect_nb.tools.patch.apply_patch import ApplyPatchTool, PatchError, apply_patch_text
from tests.support.patch_corpus import DAMAGES, Case, build_corpus

pytestmark = pytest.mark.skipif(
    shutil.which("diff") is None or shutil.which("git") is None, reason="needs diff and git"
)


def check_corpus(cases: list[Case]) -> Counter[str]:
    """Apply every case in process; return the tally, failing on any wrong result."""
    tally: Counter[str] = Counter()
    wrong = []
    for case in cases:
        try:
            got = apply_patch_text(case.old.decode(), case.patch, fallback=False).text.encode()
        except PatchError as exc:
            if case.must_fail:
                tally["stale refused"] += 1
            elif case.may_refuse:
                tally["ambiguous refused"] += 1
            else:
                wrong.append(f"{case.name}: refused: {str(exc)[:300]}")
            continue
        if case.must_fail:
            wrong.append(f"{case.name}: a stale patch applied")
        elif got != case.new:
            wrong.append(f"{case.name}: result differs from the expected bytes")
        else:
            tally[case.damage] += 1
    assert not wrong, f"{len(wrong)} of {len(cases)} cases wrong:\n" + "\n".join(wrong[:20])
    return tally


@pytest.mark.slow  # left out of `make test-unit`: a corpus built by diff and git in subprocesses
def test_corpus_in_process() -> None:
    cases = build_corpus(n_files=150)
    tally = check_corpus(cases)
    assert set(DAMAGES) <= set(tally)
    assert tally["stale refused"] >= 100
    assert sum(tally.values()) == len(cases)


@pytest.mark.slow
def test_large_corpus_in_process() -> None:
    cases = build_corpus(n_files=600, seed=7)
    check_corpus(cases)


@pytest.mark.slow  # left out of `make test-unit`: a corpus built by diff and git in subprocesses
def test_corpus_through_the_tool(tmp_path: Path) -> None:
    """A sample through ApplyPatchTool: bytes on disk, permission bits kept, stale files untouched."""
    tool = ApplyPatchTool(tmp_path)
    cases = build_corpus(n_files=25, seed=11)
    for i, case in enumerate(cases):
        target = tmp_path / f"case{i}.py"
        target.write_bytes(case.old)
        target.chmod(0o640 if i % 2 else 0o755)
        mode = stat.S_IMODE(target.stat().st_mode)
        result = tool.execute(path=target.name, patch=case.patch)
        if case.must_fail or (case.may_refuse and not result.success):
            assert not result.success, case.name
            assert target.read_bytes() == case.old, case.name
        else:
            assert result.success, f"{case.name}: {result.error}"
            assert result.metadata["engine"] == "builtin", case.name
            assert target.read_bytes() == case.new, case.name
        assert stat.S_IMODE(target.stat().st_mode) == mode
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(f"case{i}.py" for i in range(len(cases)))
