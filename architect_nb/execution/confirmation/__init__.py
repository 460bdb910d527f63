"""Confirmation: which calls need a person's approval, and how the person is asked.

- `policy`: `ConfirmationPolicy` (yolo, confirm-sensitive, confirm-all), pure: it asks nobody; and
  `CommandCheck`, how a shell command was judged before it runs.
- `confirmers`: the `Confirmer` protocol, `ConfirmationRequest` and `ConfirmationAnswer`, the terminal and
  scripted confirmers, and `show`, arguments with hidden characters made visible.
- `allow_rules`: the calls an unattended run may make unasked, from `.architect.yaml`.

Depends on `architect_nb.config`, `architect_nb.paths`, `architect_nb.redaction` and
`architect_nb.tools.base`, and `tools.commands` (how a command was judged); on no other execution family.
"""

from __future__ import annotations

from architect_nb._lazy import lazy_exports

TYPE_CHECKING = False
if TYPE_CHECKING:
    from architect_nb.execution.confirmation.confirmers import (
        Approval,
        ConfirmationAnswer,
        ConfirmationRequest,
        Confirmer,
        ScriptedConfirmer,
        TerminalConfirmer,
    )
    from architect_nb.execution.confirmation.policy import CommandCheck, ConfirmationPolicy, NoTTYError

__all__ = [
    "Approval",
    "CommandCheck",
    "ConfirmationAnswer",
    "ConfirmationPolicy",
    "ConfirmationRequest",
    "Confirmer",
    "NoTTYError",
    "ScriptedConfirmer",
    "TerminalConfirmer",
]

__getattr__ = lazy_exports(
    __name__,
    {
        "Approval": ".confirmers",
        "CommandCheck": ".policy",
        "ConfirmationAnswer": ".confirmers",
        "ConfirmationPolicy": ".policy",
        "ConfirmationRequest": ".confirmers",
        "Confirmer": ".confirmers",
        "NoTTYError": ".policy",
        "ScriptedConfirmer": ".confirmers",
        "TerminalConfirmer": ".confirmers",
    },
)
