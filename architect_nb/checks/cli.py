"""`python -m architect_nb check NOTEBOOK --before DIR --after DIR`: the check for CI.

Exit 0 when the outputs are the same, 1 when one changed, 2 when the check could not finish (a side failed,
a timeout, no such kernel spec) or the arguments are wrong. The report goes to stdout as plain text.
"""

from __future__ import annotations

import argparse
import sys

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m architect_nb check",
        description="Run a notebook before and after a change in two fresh kernels; compare its outputs.",
    )
    parser.add_argument("notebook", help="the notebook's path inside both folders")
    parser.add_argument("--before", required=True, help="the folder as it was before the change")
    parser.add_argument("--after", required=True, help="the folder as it is now")
    parser.add_argument("--compare", default="", help="comma-separated variables compared at the end")
    parser.add_argument("--rel-tol", type=float, default=1e-9, help="relative tolerance for numbers")
    parser.add_argument(
        "--image-threshold", type=float, default=0.001, help="share of pixels that may differ"
    )
    parser.add_argument(
        "--stability", action="store_true", help="run the before side twice to learn unstable cells"
    )
    parser.add_argument("--kernel", default=None, help="the kernel spec (default: the notebook's)")
    parser.add_argument("--cell-timeout", type=float, default=120.0, help="seconds per cell")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds for the whole notebook")
    args = parser.parse_args(argv)

    from architect_nb.checks.api import compare_notebook_runs

    result = compare_notebook_runs(
        args.notebook,
        before=args.before,
        after=args.after,
        compare=[n.strip() for n in args.compare.split(",") if n.strip()],
        rel_tol=args.rel_tol,
        image_threshold=args.image_threshold,
        stability=args.stability,
        kernel_name=args.kernel,
        cell_timeout=args.cell_timeout,
        timeout=args.timeout,
    )
    print(result.text())
    if result.failure is not None:
        return 2
    return 0 if result.same else 1


if __name__ == "__main__":
    sys.exit(main())
