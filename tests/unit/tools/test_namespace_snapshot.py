"""Namespace snapshots: what they keep within a budget, what `changes` reports, what `restore` puts back."""

from __future__ import annotations

import copy
import io
import random
import sys
import threading
import warnings
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from architect_nb.tools.kernel import namespace_snapshot
from architect_nb.tools.kernel.namespace_snapshot import (
    NameChange,
    brief,
    changes,
    default_budget_bytes,
    restore,
    take_snapshot,
)

BUDGET = 64 * 1024 * 1024


@pytest.fixture
def pd() -> ModuleType:
    module: ModuleType = pytest.importorskip("pandas")
    return module


@pytest.fixture
def np() -> ModuleType:
    module: ModuleType = pytest.importorskip("numpy")
    return module


def snapshot_of(namespace: dict[str, Any], *names: str, budget: int = BUDGET) -> Any:
    return take_snapshot(namespace, names or list(namespace), budget_bytes=budget)


def kinds(found: list[NameChange]) -> dict[str, str]:
    return {change.name: change.kind for change in found}


class Point:
    def __init__(self, x: int) -> None:
        self.x = x


class CopyFails:
    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        raise ValueError("no copies of this one " + "x" * 500)


class CopiesForever:
    def __deepcopy__(self, memo: dict[int, Any]) -> Any:
        return copy.deepcopy(self)


class EqualityFails:
    __slots__ = ("values",)  # no __dict__ to compare instead

    def __init__(self) -> None:
        self.values = [1]

    def __eq__(self, other: object) -> bool:
        raise TypeError("cannot compare")

    __hash__ = None  # type: ignore[assignment]


class BrokenRepr(int):
    def __repr__(self) -> str:
        raise RuntimeError("broken")


# ---------------------------------------------------------------------- restoring


def test_a_dataframe_changed_in_place_is_restored_by_binding_the_copy(pd: ModuleType) -> None:
    df = pd.DataFrame({"a": [1, 2, 3], "b": [4.0, 5.0, 6.0]})
    expected = df.copy()
    namespace: dict[str, Any] = {"df": df}
    snapshot = snapshot_of(namespace)
    df["x"] = df["a"] * 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # pandas 3.1 deprecates inplace=
        df.drop(columns="b", inplace=True)
    report = restore(namespace, snapshot)
    pd.testing.assert_frame_equal(namespace["df"], expected)
    assert report.rebound_only == ["df"]
    assert list(df.columns) == ["a", "x"]  # the original object keeps the change


def test_changes_describe_a_dataframe_before_and_after(pd: ModuleType) -> None:
    namespace: dict[str, Any] = {"df": pd.DataFrame({"a": [1, 2, 3], "b": [4.0, 5.0, 6.0]})}
    snapshot = snapshot_of(namespace)
    del namespace["df"]["b"]
    assert changes(namespace, snapshot) == [
        NameChange(
            "df", "mutated", "DataFrame 3×2 [a:int64, b:float64]", "DataFrame 3×1 [a:int64]", restorable=True
        )
    ]


@pytest.mark.parametrize(
    ("before", "change"),
    [
        ([1, 2, 3], lambda items: items.append(4)),
        ([[1], [2]], lambda items: items[0].append(9)),
        ({"a": 1, "b": [1]}, lambda d: d.update(c=3, a=0)),
        ({"a": [1]}, lambda d: d["a"].append(2)),
        ({1, 2}, lambda s: s.discard(1)),
        (bytearray(b"abc"), lambda data: data.extend(b"def")),
    ],
)
def test_builtin_containers_are_restored_in_place(before: Any, change: Any) -> None:
    obj = before
    expected = copy.deepcopy(before)
    namespace: dict[str, Any] = {"obj": obj}
    snapshot = snapshot_of(namespace)
    change(obj)
    assert kinds(changes(namespace, snapshot)) == {"obj": "mutated"}
    report = restore(namespace, snapshot)
    assert namespace["obj"] is obj  # another reference sees the restored contents
    assert obj == expected
    assert report.restored == ["obj"] and report.rebound_only == []


def test_an_array_is_restored_in_place(np: ModuleType) -> None:
    arr = np.array([1.0, np.nan, 3.0])
    alias = arr
    namespace: dict[str, Any] = {"arr": arr}
    snapshot = snapshot_of(namespace)
    arr[0] = 100.0
    arr.sort()
    report = restore(namespace, snapshot)
    assert alias is namespace["arr"]
    np.testing.assert_array_equal(alias, [1.0, np.nan, 3.0])
    assert report.restored == ["arr"]


def test_an_array_of_another_shape_gets_its_copy_bound(np: ModuleType) -> None:
    namespace: dict[str, Any] = {"arr": np.arange(4)}
    snapshot = snapshot_of(namespace)
    namespace["arr"].resize(6, refcheck=False)
    report = restore(namespace, snapshot)
    np.testing.assert_array_equal(namespace["arr"], [0, 1, 2, 3])
    assert report.rebound_only == ["arr"]


def test_a_rebound_name_gets_its_original_object_back() -> None:
    original = [1, 2]
    namespace: dict[str, Any] = {"items": original, "n": 5}
    snapshot = snapshot_of(namespace)
    namespace["items"] = "something else"
    namespace["n"] = 6
    assert kinds(changes(namespace, snapshot)) == {"items": "rebound", "n": "rebound"}
    report = restore(namespace, snapshot)
    assert namespace["items"] is original and namespace["n"] == 5
    assert report.restored == ["items", "n"]


def test_a_created_name_is_removed_and_a_deleted_one_comes_back() -> None:
    original = {"k": 1}
    namespace: dict[str, Any] = {"config": original}
    snapshot = snapshot_of(namespace, "config", "result")
    del namespace["config"]
    namespace["result"] = 42
    found = changes(namespace, snapshot)
    assert found == [
        NameChange("config", "deleted", "dict, len 1", "", restorable=True),
        NameChange("result", "added", "", "42", restorable=True),
    ]
    report = restore(namespace, snapshot)
    assert namespace == {"config": original} and namespace["config"] is original
    assert report.removed == ["result"] and report.restored == ["config"]


def test_a_rebuilt_name_is_restored_when_deleted_and_made_again() -> None:
    original = [1]
    namespace: dict[str, Any] = {"items": original}
    snapshot = snapshot_of(namespace)
    del namespace["items"]
    namespace["items"] = [1]  # equal, but another object
    restore(namespace, snapshot)
    assert namespace["items"] is original


def test_unchanged_names_are_not_reported_nor_touched(pd: ModuleType) -> None:
    df = pd.DataFrame({"a": [1]})
    point = Point(1)
    namespace: dict[str, Any] = {"df": df, "items": [df, {"p": point}], "point": point, "nan": float("nan")}
    snapshot = snapshot_of(namespace)
    assert changes(namespace, snapshot) == []
    report = restore(namespace, snapshot)
    assert report.restored == report.rebound_only == report.not_restored == []
    assert namespace["df"] is df and namespace["point"] is point


def test_a_user_object_changed_in_place_gets_its_copy_bound() -> None:
    point = Point(1)
    namespace: dict[str, Any] = {"point": point}
    snapshot = snapshot_of(namespace)
    point.x = 2
    assert kinds(changes(namespace, snapshot)) == {"point": "mutated"}
    report = restore(namespace, snapshot)
    assert namespace["point"].x == 1 and point.x == 2
    assert report.rebound_only == ["point"]


def test_contents_that_cannot_be_compared_may_have_changed() -> None:
    namespace: dict[str, Any] = {"odd": EqualityFails()}
    snapshot = snapshot_of(namespace)
    [change] = changes(namespace, snapshot)
    assert (change.kind, change.after, change.restorable) == ("mutated", "may have changed", True)


def test_restoring_twice_is_safe(pd: ModuleType) -> None:
    items = [1, 2]
    namespace: dict[str, Any] = {"items": items, "df": pd.DataFrame({"a": [1, 2]}), "gone": 1}
    snapshot = snapshot_of(namespace, "items", "df", "gone", "new")
    items.append(3)
    namespace["df"]["a"] = 0
    del namespace["gone"]
    namespace["new"] = 1
    restore(namespace, snapshot)
    first = dict(namespace)
    second = restore(namespace, snapshot)
    assert namespace.keys() == first.keys()
    assert all(namespace[name] is first[name] for name in first)
    assert namespace["items"] is items and items == [1, 2]
    assert namespace["df"]["a"].tolist() == [1, 2]
    assert second.removed == [] and second.not_restored == []


def test_a_failure_for_one_name_leaves_the_others_restored() -> None:
    class Refusing(dict[str, Any]):
        def __delitem__(self, name: str) -> None:
            raise PermissionError(f"{name} is protected")

    items = [1]
    namespace = Refusing(items=items)
    snapshot = take_snapshot(namespace, ["made", "items"], budget_bytes=BUDGET)
    namespace["made"] = 1
    items.append(2)
    report = restore(namespace, snapshot)
    assert report.not_restored == ["made: restoring it failed (PermissionError: made is protected)"]
    assert items == [1] and report.restored == ["items"]


def test_random_states_are_restored(np: ModuleType) -> None:
    snapshot = take_snapshot({}, [], budget_bytes=BUDGET)
    drawn = (random.random(), np.random.rand())
    restore({}, snapshot)
    assert (random.random(), np.random.rand()) == drawn


# ---------------------------------------------------------------------- what cannot be restored


def unrestorable_objects(handle: io.TextIOBase) -> list[tuple[str, Any, str]]:
    return [
        ("gen", (n for n in range(3)), "a generator cannot be copied"),
        ("handle", handle, "an open file cannot be copied"),
        ("buffer", io.StringIO("x"), "an open file cannot be copied"),
        ("lock", threading.Lock(), "a lock (_thread.lock) cannot be copied"),
        ("event", threading.Event(), "a lock (threading.Event) cannot be copied"),
        ("module", sys, "a module cannot be copied"),
        ("frame", sys._getframe(), "a frame cannot be copied"),
    ]


def test_objects_that_cannot_be_copied_are_known_before_the_code_runs(tmp_path: Path) -> None:
    with (tmp_path / "f.txt").open("w") as handle:
        cases = unrestorable_objects(handle)
        namespace: dict[str, Any] = {name: obj for name, obj, _ in cases} | {"items": [1]}
        snapshot = snapshot_of(namespace)
        assert snapshot.unrestorable == {name: why for name, _, why in cases}
        assert snapshot.coverage() == "undo covers items; not " + ", ".join(
            f"{name} ({why})" for name, _, why in cases
        )
        namespace["items"].append(2)
        next(namespace["gen"])
        report = restore(namespace, snapshot)
    assert namespace["items"] == [1]
    assert report.not_restored == [f"{name}: {why}" for name, _, why in cases]


def test_a_name_that_cannot_be_copied_is_reported_with_what_identity_shows() -> None:
    gen = (n for n in range(3))
    namespace: dict[str, Any] = {"gen": gen, "other": (n for n in range(3))}
    snapshot = snapshot_of(namespace)
    namespace["gen"] = "rebound"
    assert changes(namespace, snapshot) == [
        NameChange("gen", "rebound", "generator", "'rebound'", False, "a generator cannot be copied"),
        NameChange(
            "other", "mutated", "generator", "may have changed", False, "a generator cannot be copied"
        ),
    ]
    report = restore(namespace, snapshot)
    assert namespace["gen"] is gen  # its original object is back, whatever happened inside it
    assert report.not_restored[0] == (
        "gen: a generator cannot be copied; its original object is back under the name, "
        "but not what changed inside it"
    )


def test_copies_that_fail_are_reported_and_the_others_kept() -> None:
    namespace: dict[str, Any] = {"fails": CopyFails(), "forever": CopiesForever(), "items": [1]}
    snapshot = snapshot_of(namespace)
    reasons = snapshot.unrestorable
    assert reasons["fails"].startswith("copying it failed: ValueError: no copies of this one xxx")
    assert len(reasons["fails"]) <= len("copying it failed: ") + 200
    assert reasons["forever"] == "it is nested too deeply to copy (RecursionError)"
    assert "items" not in reasons
    namespace["items"].append(2)
    restore(namespace, snapshot)
    assert namespace["items"] == [1]


def test_an_object_over_the_budget_is_known_before_and_not_restored() -> None:
    big = list(range(200_000))  # several MB of int objects
    namespace: dict[str, Any] = {"big": big, "small": [1]}
    snapshot = snapshot_of(namespace, budget=1024 * 1024)
    assert list(snapshot.unrestorable) == ["big"]
    assert snapshot.unrestorable["big"] == "more than 1.5 MB, over the 1 MB undo budget"  # counted until over
    assert snapshot.coverage() == "undo covers small; not big (more than 1.5 MB, over the 1 MB undo budget)"
    big.append(-1)
    report = restore(namespace, snapshot)
    assert big[-1] == -1
    assert report.not_restored == [f"big: {snapshot.unrestorable['big']}"]


def test_an_array_over_the_whole_budget_says_its_size(np: ModuleType) -> None:
    namespace: dict[str, Any] = {"arr": np.zeros(3 * 1024 * 1024 // 8)}
    snapshot = snapshot_of(namespace, budget=2 * 1024 * 1024)
    assert snapshot.unrestorable == {"arr": "3 MB, over the 2 MB undo budget"}
    assert snapshot.kept_bytes == 0


def test_the_budget_is_never_exceeded(np: ModuleType) -> None:
    budget = 2 * 1024 * 1024
    namespace: dict[str, Any] = {f"a{n}": np.zeros(100_000) for n in range(4)}  # 800 KB each
    snapshot = snapshot_of(namespace, budget=budget)
    assert snapshot.kept_bytes == 1_600_000 <= budget
    assert list(snapshot.unrestorable) == ["a2", "a3"]
    assert "over what is left of the 2 MB undo budget" in snapshot.unrestorable["a2"]


def test_hidden_and_private_names_are_left_out() -> None:
    namespace: dict[str, Any] = {"architect": [1], "_": [2], "_private": [3], "mine": [4]}
    snapshot = take_snapshot(namespace, list(namespace), budget_bytes=BUDGET, hidden={"architect"})
    assert snapshot.names == ("mine",)
    namespace["architect"].append(9)
    restore(namespace, snapshot)
    assert namespace["architect"] == [1, 9]


def test_release_drops_everything() -> None:
    namespace: dict[str, Any] = {"items": [1, 2, 3]}
    snapshot = snapshot_of(namespace)
    assert snapshot.kept_bytes > 0
    snapshot.release()
    namespace["items"].append(4)
    report = restore(namespace, snapshot)
    assert namespace["items"] == [1, 2, 3, 4]
    assert snapshot.kept_bytes == 0 and snapshot.names == ()
    assert report.notes == ["the snapshot was released; nothing was restored"]
    assert changes(namespace, snapshot) == []


def test_coverage_without_names() -> None:
    assert take_snapshot({}, [], budget_bytes=BUDGET).coverage() == (
        "undo covers no variables (the code touches none)"
    )


# ---------------------------------------------------------------------- budget and descriptions


def test_the_default_budget_is_a_quarter_of_free_memory_within_bounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    mib = 1024 * 1024
    assert 64 * mib <= default_budget_bytes() <= 4096 * mib
    for available, budget in [(8192 * mib, 2048 * mib), (64 * 1024 * mib, 4096 * mib), (100 * mib, 64 * mib)]:
        monkeypatch.setattr(namespace_snapshot, "_available_memory", lambda available=available: available)
        assert default_budget_bytes() == budget
    monkeypatch.setattr(namespace_snapshot, "_available_memory", lambda: 0)
    assert default_budget_bytes() == 512 * mib


def test_brief_of_pandas_and_numpy(pd: ModuleType, np: ModuleType) -> None:
    wide = pd.DataFrame({f"c{n}": [1] * 1000 for n in range(10)})
    columns = ", ".join(f"c{n}:int64" for n in range(8))
    assert brief(wide) == f"DataFrame 1,000×10 [{columns}, …]"
    assert brief(pd.Series([1.5, 2.5], name="price")) == "Series 'price' 2 float64"
    assert brief(np.zeros((1000, 3))) == "ndarray 1,000×3 float64"


def test_brief_of_plain_objects() -> None:
    assert brief([1, 2, 3]) == "list, len 3"
    assert brief({"a": 1}) == "dict, len 1"
    assert brief(3.5) == "3.5"
    assert brief(None) == "None"
    assert brief("x" * 100) == "'" + "x" * 58 + "…"  # 60 characters
    assert brief(len) == "builtin_function_or_method"
    assert brief(Point(1)) == "tests.Point"  # describe.type_name: a notebook's own class is just "Point"
    assert brief(BrokenRepr(3)) == "tests.BrokenRepr"  # its repr raises: the type name instead
