"""Layer 1 of run_command: the blocklist, refused in every confirmation mode.

It starts from the design document's patterns (rm -rf / and ~, sudo, su, chmod 777, curl|bash, wget|bash,
dd of=/dev/, > /dev/sd*, mkfs, the fork bomb, pkill -9 -f, killall -9). `blocked_reason` judges one simple
command after parsing and unwrapping; `RAW_BLOCKLIST` is the backstop on raw text.
"""

from __future__ import annotations

import itertools
import posixpath
import re
from collections.abc import Sequence

__all__ = ["RAW_BLOCKLIST", "blocked_reason", "blocked_redirect"]

Args = Sequence[str | None]

_PRIVILEGE = frozenset({"sudo", "su", "doas", "pkexec", "run0"})
#: Programs that destroy a disk when given its device.
_DEVICE_WRITERS = frozenset({"tee", "cp", "shred", "wipefs", "mv", "install", "truncate", "sfdisk", "fdisk"})
_ROOT_OR_HOME = re.compile(r"""^["']*(?:/|~|\$HOME|\$\{HOME\})[/.*"']*$""")
_RECURSIVE = re.compile(r"^-[a-zA-Z]*[rR][a-zA-Z]*$|^--recursive$")
_MODE_777 = re.compile(r"^(?:[0-7]?777|[ugoa]*[+=]rwx)$")
_DISK = r"/dev/(?:sd|hd|vd|xvd|nvme|mmcblk|disk|loop|md|dm-|mapper/|nbd)"
_DISK_DEVICE = re.compile(_DISK)
_DD_DEVICE = re.compile(r"^of=/dev/(?!(?:null|zero|stdout|stderr|tty)$)")
_KILL_SIGNAL = re.compile(r"^-s?(?:9|(?:SIG)?KILL)$|^--signal=(?:9|(?:SIG)?KILL)$")

# Anchors for the raw-string backstop: a program name starts a line, follows a separator or an opening quote
# or bracket (as in `eval "sudo id"` or `os.system('rm -rf /')`), optionally behind a path or backslash.
# Every quantifier is bounded, so a 64 KiB command is scanned in linear time (no catastrophic backtracking).
_AT_CMD = r"(?:^|[;&|({`\[,=!\n]|\$\()[ \t]{0,16}[\\\"']{0,4}(?:[\w./-]{0,100}/)?"
_LOOSE = r"(?:^|[\s;&|({`\[,=!\"']|\$\()[\\\"']{0,4}(?:[\w./-]{0,100}/)?"
_END = r"(?=$|[\s;&|)`'\"\\])"
_OPTS = r"(?:-[\w-]{0,40}[ \t]{1,16}){0,16}"
_REST = r"[^\n;&|]{0,400}"
_KILL = r"(?:9|(?:SIG)?KILL)"
#: Patterns matched against the raw text of every script, nested ones included: a backstop for what the
#: structural rules cannot see (code strings given to python -c, perl -e, ...).
RAW_BLOCKLIST: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(pattern, re.MULTILINE), reason)
    for pattern, reason in (
        (_AT_CMD + r"(?:sudo|su|doas|pkexec|run0)(?=[\\\"']{0,4}(?:$|[\s;&|)]))", "privilege escalation"),
        (
            _LOOSE
            + r"rm[ \t]{1,16}"
            + _OPTS
            + r"(?:-[a-zA-Z]{0,8}[rR][a-zA-Z]{0,8}|--recursive)[ \t]{1,16}"
            + _OPTS
            + r"[\"']{0,4}(?:/|~|\$HOME|\$\{HOME\})[/.*\"']{0,16}"
            + _END,
            "recursive delete of / or the home folder",
        ),
        (_LOOSE + r"rm\s" + _REST + r"--no-preserve-root", "rm --no-preserve-root"),
        (_LOOSE + r"chmod[ \t]{1,16}" + _OPTS + r"(?:0?777|[ugoa]{0,4}[+=]rwx)" + _END, "chmod 777"),
        (
            r"\b(?:curl|wget)\b" + _REST + r"\|[ \t]{0,16}(?:sudo[ \t]{1,16})?(?:[\w./-]{0,100}/)?"
            r"(?:ba|z|da|k|mk)?sh\b",
            "pipes a download into a shell",
        ),
        (_LOOSE + r"dd\s" + _REST + r"\bof=/dev/(?!(?:null|zero|stdout|stderr|tty)\b)", "dd onto a device"),
        (r">[ \t]{0,16}" + _DISK, "writes onto a disk device"),
        (r">[ \t]{0,16}/proc/sysrq-trigger", "writes to /proc/sysrq-trigger"),
        (_LOOSE + r"(?:mkfs(?:\.\w{1,16})?|mke2fs)" + _END, "formats a filesystem"),
        (
            r"(?<![\w:.-])([\w:.-]{1,64})[ \t]{0,16}\([ \t]{0,16}\)[ \t]{0,16}\{[^}]{0,200}?(?<![\w:.-])\1"
            r"[ \t]{0,16}\|[ \t]{0,16}\1(?![\w:.-])",
            "fork bomb",
        ),
        (
            _LOOSE + r"pkill(?=" + _REST + r"\s-" + _KILL + r"\b)(?=" + _REST + r"\s(?:-f|--full)\b)",
            "pkill -9 -f",
        ),
        (
            _LOOSE + r"killall(?=" + _REST + r"\s-(?:" + _KILL + r"|s[ \t]{0,16}" + _KILL + r")\b)",
            "killall -9",
        ),
    )
)


def _abbrev(arg: str, option: str) -> bool:
    """`arg` is `option` or a GNU abbreviation of it (`--recur` for `--recursive`)."""
    return len(arg) >= 3 and arg.startswith("--") and option.startswith(arg.split("=", 1)[0])


def _root_or_home(word: str) -> bool:
    """`/`, `~`, `$HOME` and their spellings (`/*`, `//`, `/usr/..`, `"$HOME"/`)."""
    text = word.strip("\"'")
    if _ROOT_OR_HOME.match(text):
        return True
    text = re.sub(r"^(?:\$HOME|\$\{HOME\})", "~", text).rstrip("*")
    if not text.startswith(("/", "~")):
        return False
    normal = posixpath.normpath(text)
    return normal in ("/", "~", "//") or normal.startswith("~/..")


def _signal_kill(words: Sequence[str]) -> bool:
    if any(_KILL_SIGNAL.match(w) for w in words):
        return True
    return any(
        a in ("-s", "--signal") and b in ("9", "KILL", "SIGKILL") for a, b in itertools.pairwise(words)
    )


def blocked_reason(program: str, args: Args, texts: Sequence[str]) -> str | None:
    """Why this simple command is always refused, or None. `texts` are the arguments as written."""
    words = [a if a is not None else t for a, t in zip(args, texts, strict=True)]
    if program in _PRIVILEGE:
        return f"`{program}` (privilege escalation) is never run"
    if program.startswith("mkfs") or program == "mke2fs":
        return f"`{program}` formats a filesystem"
    if program == "rm":
        if any(_abbrev(w, "--no-preserve-root") for w in words):
            return "rm --no-preserve-root is never run"
        options_done = recursive = False
        for w in words:
            if w == "--":
                options_done = True
            elif not options_done and (_RECURSIVE.match(w) or _abbrev(w, "--recursive")):
                recursive = True
            elif recursive and _root_or_home(w):
                return "recursive delete of / or the home folder"
    if program == "find" and "-delete" in words and any(_root_or_home(w) for w in words):
        return "find -delete over / or the home folder"
    if program == "chmod" and any(_MODE_777.match(w) for w in words):
        return "chmod 777 makes files writable by everyone"
    if program == "dd" and any(_DD_DEVICE.match(w) for w in words):
        return "dd onto a device"
    if program in _DEVICE_WRITERS and any(_DISK_DEVICE.match(w) for w in words):
        return f"{program} onto a disk device"
    if program == "pkill" and _signal_kill(words) and any(w in ("-f", "--full") for w in words):
        return "pkill -9 -f can kill unrelated processes"
    if program == "killall" and _signal_kill(words):
        return "killall -9"
    if program == "kill" and "-1" in words[1:]:
        return "kill -1 signals every process you own"
    return None


def blocked_redirect(target: str) -> str | None:
    if _DISK_DEVICE.match(target):
        return f"writes onto the disk device {target}"
    if target == "/proc/sysrq-trigger":
        return "writes to /proc/sysrq-trigger (can crash or reboot the machine)"
    return None
