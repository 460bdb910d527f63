"""apply_patch on real history: this repository's own changes (tests/support/patch_history.py), each as
several diffs.

No result may be wrong: every patch either gives the exact bytes the commit made or is refused, leaving the
file as it was. Diffs of the very file they were made from, with miscounted or shifted headers, CRLF endings
or a byte-order mark, must all apply exactly; against a file that later commits changed, a refusal is
allowed only where those commits changed the hunk's own lines.
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from architect_nb.tools.patch.apply_patch import ApplyPatchTool, PatchError, apply_patch_text
from tests.support.patch_history import VARIANTS, HistoryCase, build_history, history_available

pytestmark = [
    pytest.mark.skipif(
        shutil.which("git") is None or shutil.which("diff") is None, reason="needs git and diff"
    ),
    pytest.mark.skipif(not history_available(), reason="needs this repository's history (a full clone)"),
    pytest.mark.slow,
]
MUST_APPLY = ("git", "diff-u", "U1", "U0", "offset", "offset-U1", "counts", "crlf", "bom")


@pytest.fixture(scope="module")
def cases() -> list[HistoryCase]:
    return build_history()


def outcome(case: HistoryCase, tool: ApplyPatchTool, folder: Path) -> tuple[str, str]:
    """('exact' | 'wrong' | 'refused', the error). A byte-order mark case goes through the tool, on a file."""
    if case.variant == "bom":
        target = folder / "target"
        target.write_bytes(case.old)
        result = tool.execute(path="target", patch=case.patch)
        got = target.read_bytes()
        if not result.success:
            return ("refused" if got == case.old else "wrong"), result.error or ""
    else:
        try:
            got = apply_patch_text(case.old.decode(), case.patch, fallback=False).text.encode()
        except PatchError as exc:
            return "refused", str(exc)
    return ("exact" if got == case.new else "wrong"), ""


def test_real_history_is_applied_exactly_or_refused(cases: list[HistoryCase], tmp_path: Path) -> None:
    tool = ApplyPatchTool(tmp_path)
    tally: Counter[tuple[str, str]] = Counter()
    problems = []
    for case in cases:
        result, error = outcome(case, tool, tmp_path)
        tally[case.variant, result] += 1
        if result == "wrong":
            problems.append(f"{case.name}: a wrong result was written")
        elif result == "refused" and case.variant in MUST_APPLY:
            problems.append(f"{case.name}: refused: {error[:200]}")
        elif result == "refused" and "does not apply" not in error:
            problems.append(f"{case.name}: refused although its lines are unchanged: {error[:200]}")
    assert not problems, f"{len(problems)} of {len(cases)}:\n" + "\n".join(problems[:20])
    assert {variant for variant, _ in tally} == set(VARIANTS)
    assert len(cases) > 3000 and tally["bom", "exact"] >= 20
    later = sum(tally[v, r] for v in ("later", "later-U1") for r in ("exact", "refused"))
    assert tally["later", "exact"] + tally["later-U1", "exact"] >= 0.9 * later
