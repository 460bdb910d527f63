"""The registry: every program model, found by name (`model_of`).

The models are declared one family to a module (`readers`, `files`, `code`, `archiving`, `network`,
`dev_tools`) and gathered on first use, so importing a check stays cheap and a family may use the checks'
helpers without an import cycle.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from functools import cache

from architect_nb.tools.commands.programs.model import ProgramModel

__all__ = ["FAMILIES", "UNMODELLED", "described", "extended", "model_of", "models"]

FAMILIES = ("readers", "files", "code", "archiving", "network", "dev_tools")
_added: dict[str, ProgramModel] = {}
#: What is known of a program without a model: nothing (not safe, no options taking values, no effects).
UNMODELLED = ProgramModel(name="")
_VERSION_CHARACTERS = "0123456789."


@cache
def _declared() -> Mapping[str, ProgramModel]:
    found: dict[str, ProgramModel] = {}
    for family in FAMILIES:
        module = importlib.import_module(f"{__package__}.{family}")
        for model in module.MODELS:
            if model.name in found:
                raise ValueError(f"program {model.name!r} is modelled twice (second in {family})")
            found[model.name] = model
    return found


def models() -> Mapping[str, ProgramModel]:
    """Every model, by program name."""
    return {**_declared(), **_added} if _added else _declared()


def model_of(program: str) -> ProgramModel | None:
    """The model of `program` (its base name, as the shell would find it), or of the program it is a version
    of (`python3.12`, `pip3`) when that model says so; None if it has none."""
    found = _added.get(program) or _declared().get(program)
    if found is None and program and program[-1] in _VERSION_CHARACTERS:
        unversioned = program.rstrip(_VERSION_CHARACTERS)
        found = _added.get(unversioned) or _declared().get(unversioned)
        return found if found is not None and found.versioned else None
    return found


def described(program: str) -> ProgramModel:
    """`model_of(program)`, or `UNMODELLED` for a program without one: what the checks read it by."""
    return model_of(program) or UNMODELLED


@contextmanager
def extended(*added: ProgramModel) -> Iterator[None]:
    """Models added for the duration of a `with` block (tests, and a plugin's programs), replacing any of the
    same name. Checks that cache their verdicts must be cleared by the caller."""
    before = dict(_added)
    _added.update({m.name: m for m in added})
    try:
        yield
    finally:
        _added.clear()
        _added.update(before)
