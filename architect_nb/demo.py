"""`make demo`: the build agent fixes a small project on the scripted model, printed as it goes.

The run works on a copy of `notebooks/sample_project/` and replays `notebooks/scripts/quickstart.yaml` (no API
key). It asks for approval before each edit and command (auto-approved here, and shown), then undoes its
change to show the checkpoints.
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

from architect_nb.agent import create_loop
from architect_nb.agent.console import ConsolePrinter
from architect_nb.config import load_config
from architect_nb.execution.confirm import ConfirmationAnswer, ConfirmationRequest

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


class AutoApprove:
    """Approves every request and says so; the notebook shows Approve / Deny buttons instead."""

    def confirm(self, request: ConfirmationRequest) -> ConfirmationAnswer:
        return ConfirmationAnswer.approve()


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="architect-demo-") as tmp:
        workspace = Path(tmp) / "sample_project"
        shutil.copytree(NOTEBOOKS / "sample_project", workspace)
        config = load_config(overrides={"workspace.root": str(workspace)}, environ={})
        printer = ConsolePrinter(sys.stdout, color=sys.stdout.isatty())
        loop = create_loop(
            config,
            model=f"scripted/{NOTEBOOKS / 'scripts' / 'quickstart.yaml'}",
            mode="confirm-sensitive",
            confirmer=AutoApprove(),
            on_event=printer,
        )
        print("(Approvals are given automatically in this terminal demo; a notebook asks with buttons.)")
        result = loop.run("Make Cart.total() always return a float, and keep the tests passing.")
        report = loop.engine.checkpoints.undo(result.run_id)
        print(f"\nUndo: {report}")
        return 0 if result.status == "success" else 1


if __name__ == "__main__":
    sys.exit(main())
