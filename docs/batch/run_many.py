"""Run one architect-nb task over many workspaces in parallel, each in its own kernel, with papermill.

    python docs/batch/run_many.py --task "Run the tests and fix what fails." \
        --model gpt-4o-mini --allow "edit_file" --allow "run_command(python -m pytest*)" \
        --jobs 4 --out runs/ projects/*

For each workspace W: `runs/W.ipynb` (the executed notebook) and `runs/W.summary.json` (status, steps, cost,
changed files, the approvals the allow rules gave). A table of the runs at the end; the exit status is 1 when
any run failed, 0 when all succeeded. Each run is a `papermill` process executing `task.ipynb` (next to this
script) with the workspace as its working folder.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

TEMPLATE = Path(__file__).with_name("task.ipynb")


def run_one(workspace: Path, out: Path, args: argparse.Namespace) -> dict[str, Any]:
    """One papermill run; its summary (or why there is none)."""
    name = workspace.resolve().name
    notebook, summary_path = out / f"{name}.ipynb", out / f"{name}.summary.json"
    summary_path.unlink(missing_ok=True)
    parameters = {
        "task": args.task,
        "workspace": str(workspace.resolve()),
        "model": args.model,
        "mode": args.mode,
        "allow": args.allow,
        "summary_path": str(summary_path.resolve()),
        "max_steps": args.max_steps,
        "budget_usd": args.budget_usd,
    }
    command = [sys.executable, "-m", "papermill", str(TEMPLATE), str(notebook), "-k", args.kernel]
    command += ["-y", json.dumps(parameters), "--cwd", str(workspace.resolve()), "--no-progress-bar"]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=args.timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"workspace": name, "status": "failed", "message": f"no end after {args.timeout} s"}
    if summary_path.is_file():
        summary: dict[str, Any] = json.loads(summary_path.read_text(encoding="utf-8"))
    else:  # papermill or the kernel failed before the run could write anything
        lines = (done.stderr or done.stdout).strip().splitlines()
        summary = {"status": "failed", "message": lines[-1] if lines else f"exit {done.returncode}"}
    if done.returncode != 0 and summary.get("status") == "success":
        summary["status"] = "failed"  # the notebook failed after the run
    return {**summary, "workspace": name, "exit": done.returncode}  # the summary's own is a full path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("workspaces", nargs="+", type=Path)
    parser.add_argument("--task", required=True)
    parser.add_argument("--model", default=None, help="default: each workspace's llm.model")
    parser.add_argument("--mode", default="confirm-sensitive")
    parser.add_argument("--allow", action="append", default=[], help="an allow rule (repeat for more)")
    parser.add_argument("--jobs", "-j", type=int, default=2, help="runs at once (each is a kernel)")
    parser.add_argument("--out", type=Path, default=Path("runs"))
    parser.add_argument("--kernel", default="python3")
    parser.add_argument("--max-steps", type=int, default=30)
    parser.add_argument("--budget-usd", type=float, default=None)
    parser.add_argument("--timeout", type=float, default=1800, help="seconds one run may take")
    args = parser.parse_args(argv)
    names = [w.resolve().name for w in args.workspaces]
    if len(set(names)) != len(names):
        parser.error("two workspaces have the same folder name; their outputs would collide")
    args.out.mkdir(parents=True, exist_ok=True)
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        results = list(pool.map(lambda w: run_one(w, args.out, args), args.workspaces))
    for r in results:
        cost = f"${r['cost_usd']:.4f}" if isinstance(r.get("cost_usd"), int | float) else "-"
        changed = ", ".join(r.get("files_changed") or []) or "-"
        print(f"{r['workspace']:24} {r['status']:8} {r.get('steps', '-')!s:>5} steps {cost:>9}  {changed}")
        if r["status"] != "success":
            said = str(r.get("message") or "").strip().splitlines()
            print(f"{'':24} {said[0] if said else ''}")  # its first line; runs.json keeps it whole
    (args.out / "runs.json").write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    return 0 if all(r["status"] == "success" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
