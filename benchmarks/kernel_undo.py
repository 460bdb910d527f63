"""What undo of the agent's Python costs on a one-million-row DataFrame changed in place.

The code `df["c"] = df["a"] * 2; df.drop(columns="b", inplace=True)` runs in a plain namespace, as run_python
would run it. Timed, each as the median of `--runs` rounds: reading the code (`name_effects`), the snapshot of
the names it touches (`take_snapshot`), the change itself, `changes()`, and `restore`. The snapshot's memory
is its `kept_bytes` and the growth of this process's resident memory (VmRSS) while the first one was taken.
Also the time to read a code that touches no names (median of 200 runs).

Run: `.venv/bin/python benchmarks/kernel_undo.py [--rows 1000000] [--runs 5]` (a few seconds).
"""

from __future__ import annotations

import argparse
import importlib
import statistics
import time
import warnings
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np

from architect_nb.tools.kernel.name_effects import name_effects
from architect_nb.tools.kernel.namespace_snapshot import (
    brief,
    changes,
    default_budget_bytes,
    restore,
    take_snapshot,
)

pd: Any = importlib.import_module("pandas")  # no pandas-stubs in the venv: untyped

CODE = 'df["c"] = df["a"] * 2\ndf.drop(columns="b", inplace=True)\n'
UNTOUCHING = (
    "print(sum(x * x for x in range(1000)))\n"
    'print(len("a b c".split()), {k: k**2 for k in range(5)})\n'
    'print([w.upper() for w in ("north", "south") if w.startswith("n")])\n'
)


def frame(rows: int) -> Any:
    rng = np.random.default_rng(7)
    return pd.DataFrame(
        {
            "a": rng.integers(0, 1000, rows),
            "b": rng.random(rows),
            "x": rng.normal(size=rows),
            "label": rng.choice(["north", "south", "east", "west"], rows).astype(str),
        }
    )


def rss_bytes() -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
    return 0


def timed(work: Callable[[], Any]) -> tuple[float, Any]:
    started = time.perf_counter()
    result = work()
    return (time.perf_counter() - started) * 1000, result


def median_ms(work: Callable[[], Any], runs: int) -> float:
    return statistics.median(timed(work)[0] for _ in range(runs))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--runs", type=int, default=5)
    options = parser.parse_args()
    warnings.simplefilter("ignore", DeprecationWarning)  # pandas 3.1 deprecates inplace= (PDEP-8)

    namespace: dict[str, Any] = {"df": frame(options.rows)}
    budget = default_budget_bytes()
    frame_bytes = int(namespace["df"].memory_usage(deep=True).sum())
    described = brief(namespace["df"])
    effects = name_effects(CODE)
    assert effects.touched == {"df"}, effects
    samples: dict[str, list[float]] = {"snapshot": [], "change": [], "changes()": [], "restore": []}
    kept, rss_growth = 0, 0
    for round_ in range(options.runs):
        before_columns = list(namespace["df"].columns)
        rss = rss_bytes()
        ms, snapshot = timed(partial(take_snapshot, namespace, effects.touched, budget_bytes=budget))
        samples["snapshot"].append(ms)
        if round_ == 0:
            kept, rss_growth = snapshot.kept_bytes, rss_bytes() - rss
        samples["change"].append(timed(partial(exec, CODE, namespace))[0])
        ms, found = timed(partial(changes, namespace, snapshot))
        samples["changes()"].append(ms)
        assert [(c.name, c.kind) for c in found] == [("df", "mutated")], found
        ms, report = timed(partial(restore, namespace, snapshot))
        samples["restore"].append(ms)
        assert report.rebound_only == ["df"] and list(namespace["df"].columns) == before_columns, report
        snapshot.release()

    median = {step: statistics.median(values) for step, values in samples.items()}
    analysis = median_ms(lambda: name_effects(CODE), 200)
    untouching = median_ms(lambda: name_effects(UNTOUCHING), 200)
    assert not name_effects(UNTOUCHING).touched
    mib = 1024 * 1024
    print(
        f"{described}, {frame_bytes / mib:.1f} MiB (memory_usage deep); "
        f"undo budget {budget / mib:.0f} MiB; median of {options.runs} rounds"
    )
    print(f"{'step':<34}{'ms':>10}")
    print(f"{'name_effects (the change code)':<34}{analysis:>10.3f}")
    for step, ms in median.items():
        print(f"{step:<34}{ms:>10.1f}")
    print(f"{'name_effects (touches no names)':<34}{untouching:>10.3f}")
    print(f"snapshot memory: kept_bytes {kept / mib:.1f} MiB, RSS growth {rss_growth / mib:.1f} MiB")
    print(
        f"snapshot / change {median['snapshot'] / median['change']:.2f}x; "
        f"restore / change {median['restore'] / median['change']:.2f}x"
    )


if __name__ == "__main__":
    main()
