"""`python -m architect_nb COMMAND`: the commands the package offers outside a notebook: `check` (a refactor's
proof) and `provenance` (which lines of notebooks the agent wrote)."""

from __future__ import annotations

import sys

_USAGE = (
    "usage: python -m architect_nb check NOTEBOOK --before DIR --after DIR [options]\n"
    "       python -m architect_nb provenance PATH... [--json]\n"
    "(COMMAND --help for more)"
)


def main(argv: list[str]) -> int:
    if argv and argv[0] == "check":
        from architect_nb.checks.cli import main as check

        return check(argv[1:])
    if argv and argv[0] == "provenance":
        from architect_nb.provenance.report import main as provenance

        return provenance(argv[1:])
    print(_USAGE, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
