"""`python -m architect_nb COMMAND`: the commands the package offers outside a notebook (for now, `check`)."""

from __future__ import annotations

import sys

_USAGE = "usage: python -m architect_nb check NOTEBOOK --before DIR --after DIR [options] (--help for more)"


def main(argv: list[str]) -> int:
    if not argv or argv[0] != "check":
        print(_USAGE, file=sys.stderr)
        return 2
    from architect_nb.checks.cli import main as check

    return check(argv[1:])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
