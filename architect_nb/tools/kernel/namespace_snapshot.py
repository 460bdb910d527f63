"""Snapshots of some of a namespace's names, taken before code runs, so that what the code did can be undone.

`take_snapshot` keeps, for each name, a reference to the object it names and a copy of its contents (the
type's own copy for pandas and numpy, `copy.deepcopy` otherwise), within a memory budget; the states of
`random` and of numpy's global generator are kept too. `changes` says what the code did to those names.
`restore` puts the original objects back under their names (identity kept) and their contents back in place
where the type has a public way to do it (list, dict, set, bytearray, ndarray); for other types (DataFrame,
Series, user objects) whose contents changed, it binds the saved copy under the name instead.

Limits:
- objects that cannot be copied (generators, files, sockets, locks, modules, frames, anything whose copy
  fails) and objects over the budget are known before the code runs (`unrestorable`); undo puts the original
  object back under its name, but what changed inside it stays changed;
- a pandas copy does not copy the Python objects of object columns, nor an ndarray copy those of an object
  array: changes inside those objects stay;
- when the saved copy is bound instead, other references to the object keep seeing the change;
- the size estimate counts what `sys.getsizeof`, pandas' shallow `memory_usage` and `nbytes` report; memory
  held elsewhere (a GPU, a C library's buffers) is not counted;
- restore hands the saved copies over to the namespace: restoring twice in a row is safe, but the snapshot
  does not survive later changes to the restored objects.

pandas and numpy are never imported here: an object of their types can only exist if they were.
"""

from __future__ import annotations

import copy
import io
import os
import random
import sys
import threading
import types
from collections.abc import Collection, Iterable, Mapping, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from architect_nb.tools.kernel.describe import short_size, type_name

__all__ = [
    "NameChange",
    "NamespaceSnapshot",
    "RestoreReport",
    "brief",
    "changes",
    "default_budget_bytes",
    "restore",
    "take_snapshot",
]

_MiB = 1024 * 1024
_MIN_BUDGET, _MAX_BUDGET, _FALLBACK_BUDGET = 64 * _MiB, 4096 * _MiB, 512 * _MiB
_ABSENT: Final = object()
_MAX_COMPARE_DEPTH = 50
_OBJECT_EQ: Any = object.__eq__  # the identity comparison every class inherits
_LOCKS = (
    type(threading.Lock()),
    type(threading.RLock()),
    threading.Condition,
    threading.Event,
    threading.Semaphore,
    threading.Barrier,
)


@dataclass(frozen=True, slots=True)
class NameChange:
    """What the code did to one name: `kind` is "added", "rebound", "mutated" or "deleted"."""

    name: str
    kind: str
    before: str  # brief() before; "" for added
    after: str  # brief() after; "" for deleted, "may have changed" when contents could not be compared
    restorable: bool  # False when the snapshot could not keep it; then `why` says why
    why: str = ""


@dataclass(slots=True)
class RestoreReport:
    """What `restore` did: names put back, names removed, names whose saved copy was bound instead of the
    original object, and names it could not restore ("name: why")."""

    restored: list[str] = field(default_factory=list)
    removed: list[str] = field(default_factory=list)
    rebound_only: list[str] = field(default_factory=list)
    not_restored: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(slots=True, eq=False)
class _Entry:
    present: bool
    original: Any = None
    saved: Any = None  # the copy of the contents; only when `why` is empty
    why: str = ""  # why the contents cannot be restored
    before: str = ""


@dataclass(slots=True, eq=False)
class _RandomStates:
    python: tuple[Any, ...]
    numpy: object = None  # None when numpy was not imported

    @classmethod
    def save(cls) -> _RandomStates:
        numpy = sys.modules.get("numpy")
        try:
            numpy_state = numpy.random.get_state() if numpy is not None else None
        except Exception:  # a half-imported numpy
            numpy_state = None
        return cls(random.getstate(), numpy_state)

    def restore(self) -> list[str]:
        """Put both states back; what failed, as notes."""
        problems = []
        try:
            random.setstate(self.python)
        except Exception as exc:
            problems.append(f"the random module's state was not restored ({_error(exc)})")
        numpy = sys.modules.get("numpy")
        if self.numpy is not None and numpy is not None:
            try:
                numpy.random.set_state(self.numpy)
            except Exception as exc:
                problems.append(f"numpy's random state was not restored ({_error(exc)})")
        return problems


class NamespaceSnapshot:
    """Some names of a namespace as they were before code ran; made by `take_snapshot`."""

    def __init__(
        self, entries: dict[str, _Entry], randoms: _RandomStates, kept_bytes: int, budget_bytes: int
    ) -> None:
        self._entries = entries
        self._randoms = randoms
        self._kept_bytes = kept_bytes
        self.budget_bytes = budget_bytes
        self.released = False

    @property
    def names(self) -> tuple[str, ...]:
        """The names snapshotted (absent ones included: undo deletes them if the code makes them)."""
        return tuple(self._entries)

    @property
    def unrestorable(self) -> dict[str, str]:
        """Names whose contents undo cannot restore, with the reason; known before the code runs."""
        return {name: entry.why for name, entry in self._entries.items() if entry.why}

    @property
    def kept_bytes(self) -> int:
        """The estimated size of the copies kept."""
        return self._kept_bytes

    def coverage(self) -> str:
        """One line for an approval: `undo covers df, items; not gen (a generator cannot be copied)`."""
        if self.released:
            return "undo is no longer available (its snapshot was released)"
        if not self._entries:
            return "undo covers no variables (the code touches none)"
        covered = [name for name, entry in self._entries.items() if not entry.why]
        text = "undo covers " + (_listing(covered) if covered else "none of them")
        missing = [f"{name} ({why})" for name, why in self.unrestorable.items()]
        return f"{text}; not {_listing(missing)}" if missing else text

    def release(self) -> None:
        """Drop the copies and the references to the original objects."""
        self._entries = {}
        self._kept_bytes = 0
        self.released = True

    def __repr__(self) -> str:
        return f"<NamespaceSnapshot {len(self._entries)} names, {_size(self._kept_bytes)}: {self.coverage()}>"


# ---------------------------------------------------------------------- taking, comparing, restoring


def default_budget_bytes() -> int:
    """A quarter of the memory available now (within the process's cgroup limit, if any), from 64 MiB to
    4 GiB; 512 MiB when it cannot be read."""
    available = _available_memory()
    budget = available // 4 if available else _FALLBACK_BUDGET
    return max(_MIN_BUDGET, min(_MAX_BUDGET, budget))


def take_snapshot(
    namespace: Mapping[str, Any], names: Iterable[str], *, budget_bytes: int, hidden: Collection[str] = ()
) -> NamespaceSnapshot:
    """A snapshot of `names` in `namespace`, its copies within `budget_bytes`. Names starting with "_" and
    names in `hidden` (the agent's own objects) are left out. Never raises: what cannot be kept is recorded
    in `unrestorable`."""
    entries: dict[str, _Entry] = {}
    kept = 0
    for name in names:
        if name in entries or name.startswith("_") or name in hidden:
            continue
        obj = _lookup(namespace, name)
        if obj is _ABSENT:
            entries[name] = _Entry(present=False)
            continue
        entry = entries[name] = _Entry(present=True, original=obj, before=brief(obj))
        try:
            kept += _keep_copy(entry, budget_bytes, budget_bytes - kept)
        except RecursionError:
            entry.why = "it is nested too deeply to copy (RecursionError)"
        except MemoryError:
            entry.why = "there was not enough memory to copy it"
        except Exception as exc:
            entry.why = f"copying it failed: {_error(exc)}"
    return NamespaceSnapshot(entries, _RandomStates.save(), kept, budget_bytes)


def _keep_copy(entry: _Entry, budget: int, left: int) -> int:
    """Copy the entry's object into it if it can be copied within `left` bytes; the bytes kept. Otherwise
    say why in `entry.why`."""
    entry.why = _uncopyable(entry.original)
    if entry.why:
        return 0
    estimate, complete = _estimate(entry.original, left)
    if estimate > left:
        entry.why = _over_budget(estimate, complete, budget, left)
        return 0
    entry.saved = _copy(entry.original)
    return estimate


def changes(namespace: Mapping[str, Any], snapshot: NamespaceSnapshot) -> list[NameChange]:
    """What happened to the snapshot's names since it was taken; unchanged names are left out."""
    found = []
    for name, entry in snapshot._entries.items():
        now = _lookup(namespace, name)
        if not entry.present:
            if now is not _ABSENT:
                found.append(NameChange(name, "added", "", brief(now), restorable=True))
            continue
        if now is _ABSENT:
            kind, after = "deleted", ""
        elif now is not entry.original:
            kind, after = "rebound", brief(now)
        else:
            same = None if entry.why else _same(entry.original, entry.saved)
            if same is True:
                continue
            kind, after = "mutated", brief(now) if same is False else "may have changed"
        found.append(NameChange(name, kind, entry.before, after, restorable=not entry.why, why=entry.why))
    return found


def restore(namespace: MutableMapping[str, Any], snapshot: NamespaceSnapshot) -> RestoreReport:
    """Put the snapshot's names back as they were, and the random states. Never raises: a name that fails
    goes to `not_restored` and the others are still restored."""
    report = RestoreReport()
    if snapshot.released:
        report.notes.append("the snapshot was released; nothing was restored")
        return report
    for name, entry in snapshot._entries.items():
        try:
            _restore_name(namespace, name, entry, report)
        except Exception as exc:
            report.not_restored.append(f"{name}: restoring it failed ({_error(exc)})")
    report.notes.extend(snapshot._randoms.restore())
    return report


def _restore_name(
    namespace: MutableMapping[str, Any], name: str, entry: _Entry, report: RestoreReport
) -> None:
    now = _lookup(namespace, name)
    if not entry.present:
        if now is not _ABSENT:
            del namespace[name]
            report.removed.append(name)
        return
    put_back = now is not entry.original
    if put_back:
        namespace[name] = entry.original
    if entry.why:
        back = (
            "; its original object is back under the name, but not what changed inside it" if put_back else ""
        )
        report.not_restored.append(f"{name}: {entry.why}{back}")
        return
    same = _same(entry.original, entry.saved)
    if same is True or (same is None and put_back):  # rebound or deleted: its own object is back
        if put_back:
            report.restored.append(name)
        return
    if _restore_in_place(entry.original, entry.saved) and _same(entry.original, entry.saved) is True:
        report.restored.append(name)
        return
    namespace[name] = entry.saved  # no public way to put the contents back into the original object
    report.rebound_only.append(name)  # other references to the object still see the change


def _restore_in_place(obj: Any, saved: Any) -> bool:
    """Put `saved`'s contents into `obj` where its type has a public way; False where it has none."""
    if isinstance(obj, list | bytearray) and isinstance(saved, list | bytearray):
        obj[:] = saved
    elif isinstance(obj, dict | set) and isinstance(saved, dict | set):
        obj.clear()
        obj.update(saved)
    elif _is_ndarray(obj) and obj.shape == saved.shape and obj.dtype == saved.dtype and obj.flags.writeable:
        obj[...] = saved
    else:
        return False
    return True


# ---------------------------------------------------------------------- copies and their cost


def _copy(obj: Any) -> Any:
    if _pandas_kind(obj):
        return obj.copy(deep=True)
    if _is_ndarray(obj):
        return obj.copy()
    return copy.deepcopy(obj)


def _uncopyable(obj: Any) -> str:
    """Why `obj` cannot be copied, or ""."""
    if isinstance(obj, types.GeneratorType):
        return "a generator cannot be copied"
    if isinstance(obj, types.CoroutineType | types.AsyncGeneratorType):
        return "a coroutine cannot be copied"
    if isinstance(obj, io.IOBase):
        return "an open file cannot be copied"
    if isinstance(obj, types.ModuleType):
        return "a module cannot be copied"
    if isinstance(obj, types.FrameType | types.TracebackType):
        return "a frame cannot be copied"
    if isinstance(obj, _LOCKS):
        return f"a lock ({type_name(obj)}) cannot be copied"
    socket = sys.modules.get("socket")
    if socket is not None and isinstance(obj, socket.socket):
        return "a socket cannot be copied"
    return ""


def _estimate(obj: Any, limit: int) -> tuple[int, bool]:
    """What a copy of `obj` would take, counted until it passes `limit`; and whether it was counted whole."""
    total, seen, todo = 0, set(), [obj]
    while todo:
        if total > limit:
            return total, False
        item = todo.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        try:
            total += _own_size(item, todo)
        except Exception:  # an odd __sizeof__ or memory_usage: count it as small
            total += 64
    return total, True


def _own_size(obj: Any, todo: list[Any]) -> int:
    """The bytes `obj` itself takes in a copy; what it holds that a deep copy copies goes on `todo`."""
    kind = _pandas_kind(obj)
    # Not deep=True: a pandas copy shares the Python objects of object columns, and counting 1M strings
    # takes ~0.5 s (benchmarks/kernel_undo.py)
    if kind == "DataFrame":
        return int(obj.memory_usage(deep=False).sum())
    if kind:
        return int(obj.memory_usage(deep=False))
    if _is_ndarray(obj):
        return int(obj.nbytes)
    if isinstance(obj, type | types.FunctionType | types.BuiltinFunctionType | types.ModuleType):
        return 0  # a deep copy keeps these as they are
    size = sys.getsizeof(obj)
    if isinstance(obj, str | bytes | int | float | complex):
        return size
    if isinstance(obj, dict):
        todo.extend(obj.keys())
        todo.extend(obj.values())
    elif isinstance(obj, list | tuple | set | frozenset):
        todo.extend(obj)
    else:
        nbytes = getattr(type(obj), "nbytes", None)  # a property on the type, as array libraries have
        if nbytes is not None and isinstance(value := getattr(obj, "nbytes", None), int):
            size = max(size, value)
        if isinstance(getattr(obj, "__dict__", None), dict):
            todo.append(obj.__dict__)
        for slot in getattr(type(obj), "__slots__", ()):
            if isinstance(slot, str) and hasattr(obj, slot):
                todo.append(getattr(obj, slot))
    return size


def _over_budget(estimate: int, complete: bool, budget: int, left: int) -> str:
    size = _size(estimate) if complete else f"more than {_size(estimate)}"
    if estimate > budget:
        return f"{size}, over the {_size(budget)} undo budget"
    return f"{size}, over what is left of the {_size(budget)} undo budget ({_size(left)} left)"


def _available_memory() -> int:
    """Bytes of memory available now, or 0 when unknown."""
    available = 0
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                available = int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    if not available:
        try:
            available = os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
        except (ValueError, OSError, AttributeError):
            available = 0
    limit = _cgroup_room()  # a container's limit, which MemAvailable (the host's) does not show
    return min(available, limit) if available and limit else available or limit


def _cgroup_room() -> int:
    for limit_file, usage_file in (
        ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
        ("/sys/fs/cgroup/memory/memory.limit_in_bytes", "/sys/fs/cgroup/memory/memory.usage_in_bytes"),
    ):
        try:
            limit, usage = (Path(limit_file).read_text().strip(), Path(usage_file).read_text().strip())
            if limit != "max" and int(limit) < 1 << 60:
                return max(int(limit) - int(usage), 1)
        except (OSError, ValueError):
            continue
    return 0


# ---------------------------------------------------------------------- comparing


def _same(obj: Any, saved: Any, depth: int = 0) -> bool | None:
    """Whether `obj`'s contents still equal the copy `saved`; None when that cannot be told."""
    if obj is saved:  # a deep copy returns immutable objects themselves
        return True
    if depth > _MAX_COMPARE_DEPTH:
        return None
    try:
        kind = _pandas_kind(obj)
        if kind:
            return _same_pandas(obj, saved, kind)
        if _is_ndarray(obj):
            return _same_array(obj, saved)
        if type(obj) is not type(saved):
            return False
        if type(obj).__eq__ is not _OBJECT_EQ:
            try:
                equal = obj == saved
            except Exception:  # `[df] == [copy]`: a DataFrame's truth is ambiguous; compare item by item
                equal = None
            if type(equal) is bool and (equal or not isinstance(obj, list | tuple | dict)):
                return equal
        # containers of objects compared by identity, and objects without __eq__: compare what they hold
        if isinstance(obj, list | tuple):
            if len(obj) != len(saved):
                return False
            return _all_same(zip(obj, saved, strict=True), depth)
        if isinstance(obj, dict):
            if obj.keys() != saved.keys():
                return False
            return _all_same(((obj[key], saved[key]) for key in obj), depth)
        state = getattr(obj, "__dict__", None)
        if isinstance(state, dict) and not getattr(type(obj), "__slots__", ()):
            return _same(state, saved.__dict__, depth + 1)
    except RecursionError:
        return None
    except Exception:  # a comparison that raises: nothing can be told
        return None
    return None


def _all_same(pairs: Iterable[tuple[Any, Any]], depth: int) -> bool | None:
    unknown = False
    for one, other in pairs:
        same = _same(one, other, depth + 1)
        if same is False:
            return False
        unknown = unknown or same is None
    return None if unknown else True


def _same_pandas(obj: Any, saved: Any, kind: str) -> bool:
    if type(obj) is not type(saved) or obj.shape != saved.shape:
        return False
    if kind == "Index":
        return bool(obj.dtype == saved.dtype and obj.names == saved.names and obj.equals(saved))
    if not (obj.index.equals(saved.index) and obj.index.names == saved.index.names):
        return False
    if kind == "DataFrame":
        if not (obj.columns.equals(saved.columns) and obj.columns.names == saved.columns.names):
            return False
        if not obj.dtypes.equals(saved.dtypes):
            return False
    elif not (obj.dtype == saved.dtype and _same_label(obj.name, saved.name)):
        return False
    return bool(obj.equals(saved))


def _same_label(one: Any, other: Any) -> bool:
    return one is other or (type(one) is type(other) and bool(one == other))


def _same_array(obj: Any, saved: Any) -> bool:
    if type(obj) is not type(saved) or obj.shape != saved.shape or obj.dtype != saved.dtype:
        return False
    numpy = sys.modules["numpy"]
    try:
        return bool(numpy.array_equal(obj, saved, equal_nan=True))
    except TypeError:  # equal_nan on a dtype without NaN (strings, objects)
        return bool(numpy.array_equal(obj, saved))


# ---------------------------------------------------------------------- descriptions


def brief(obj: Any) -> str:
    """A compact one-line description: `DataFrame 1,000×3 [a:int64, b:float64, c:object]`. Never raises."""
    try:
        return _brief(obj)
    except Exception:
        try:
            return type_name(obj)
        except Exception:
            return "object"


def _brief(obj: Any) -> str:
    kind = _pandas_kind(obj)
    if kind == "DataFrame":
        rows, width = obj.shape
        columns = [f"{_cut(str(label), 30)}:{dtype}" for label, dtype in list(obj.dtypes.items())[:8]]
        more = ", …" if width > 8 else ""
        return f"DataFrame {rows:,}×{width} [{', '.join(columns)}{more}]"
    if kind == "Series":
        name = f" {_cut(repr(obj.name), 30)}" if obj.name is not None else ""
        return f"Series{name} {len(obj):,} {obj.dtype}"
    if kind == "Index":
        return f"{type(obj).__name__} {len(obj):,} {obj.dtype}"
    if _is_ndarray(obj):
        shape = "×".join(f"{n:,}" for n in obj.shape) or "0-d"
        return f"{type(obj).__name__} {shape} {obj.dtype}"
    if isinstance(obj, str | bytes):
        return _cut(repr(obj[:61]), 60)
    if obj is None or isinstance(obj, int | float | complex) or _is_numpy_scalar(obj):
        return _cut(repr(obj), 60)
    if isinstance(obj, Mapping | list | tuple | set | frozenset | bytearray):
        return f"{type_name(obj)}, {short_size(obj)}"
    if isinstance(obj, types.FunctionType | type | types.ModuleType):
        return f"{type_name(obj)} {getattr(obj, '__qualname__', obj.__name__)}"
    return type_name(obj)


def _cut(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


# ---------------------------------------------------------------------- helpers


def _pandas_kind(obj: Any) -> str:
    """ "DataFrame", "Series", "Index" (subclasses included), or "" (also when pandas was not imported)."""
    pandas = sys.modules.get("pandas")
    if pandas is None:
        return ""
    for kind in ("DataFrame", "Series", "Index"):
        cls = getattr(pandas, kind, None)
        if isinstance(cls, type) and isinstance(obj, cls):
            return kind
    return ""


def _is_ndarray(obj: Any) -> bool:
    numpy = sys.modules.get("numpy")
    cls = getattr(numpy, "ndarray", None)
    return isinstance(cls, type) and isinstance(obj, cls)


def _is_numpy_scalar(obj: Any) -> bool:
    numpy = sys.modules.get("numpy")
    cls = getattr(numpy, "generic", None)
    return isinstance(cls, type) and isinstance(obj, cls)


def _lookup(namespace: Mapping[str, Any], name: str) -> Any:
    return namespace.get(name, _ABSENT)


def _listing(items: list[str], most: int = 20) -> str:
    shown = ", ".join(items[:most])
    return f"{shown} and {len(items) - most} more" if len(items) > most else shown


def _size(n: int) -> str:
    value = float(n)
    for unit in ("B", "KB", "MB", "GB"):
        if value < 1024 or unit == "GB":
            text = f"{value:.1f}" if value < 10 and unit != "B" else f"{value:.0f}"
            return f"{text.removesuffix('.0')} {unit}"
        value /= 1024
    raise AssertionError("unreachable")  # pragma: no cover


def _error(exc: BaseException) -> str:
    text = f"{type(exc).__name__}: {str(exc).strip()}" if str(exc).strip() else type(exc).__name__
    return _cut(text.splitlines()[0], 200)
