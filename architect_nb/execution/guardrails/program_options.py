"""Reading a program's command line as GNU getopt does: options anywhere before `--`, short clusters
(`-rn`, `-C2`), `--name=value`, and which options take a value. The guardrails' per-program models (what a
program reads, lists or writes) all read arguments through it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field

__all__ = ["Options", "options", "paths"]


@dataclass(slots=True)
class Options:
    flags: set[str] = field(default_factory=set)  # "-r", "--hidden", ...
    values: list[tuple[str, str]] = field(default_factory=list)  # ("--exclude", "*.log"), ...
    operands: list[str] = field(default_factory=list)

    def has(self, *names: str) -> bool:
        return any(n in self.flags for n in names)

    def of(self, *names: str) -> list[str]:
        return [v for n, v in self.values if n in names]


def options(args: Sequence[str], short_values: str, long_values: frozenset[str]) -> Options:
    """Options anywhere before `--` (GNU style), short clusters (`-rn`, `-C2`), `--name=value`."""
    out = Options()
    i = 0
    while i < len(args):
        arg = args[i]
        i += 1
        if arg == "--":
            out.operands += args[i:]
            break
        if arg.startswith("--"):
            name, eq, value = arg.partition("=")
            if eq:
                out.values.append((name, value))
            elif name in long_values and i < len(args):
                out.values.append((name, args[i]))
                i += 1
            else:
                out.flags.add(name)
        elif arg.startswith("-") and len(arg) > 1:
            for at, letter in enumerate(arg[1:], start=1):
                if letter in short_values:
                    value = arg[at + 1 :]
                    if not value and i < len(args):
                        value, i = args[i], i + 1
                    out.values.append((f"-{letter}", value))
                    break
                out.flags.add(f"-{letter}")
        else:
            out.operands.append(arg)
    return out


def paths(operands: Sequence[str], cwd: str, default: str | None = ".") -> list[str]:
    names = list(operands) or ([default] if default else [])
    return [os.path.realpath(os.path.join(cwd, n)) for n in names if os.path.exists(os.path.join(cwd, n))]
