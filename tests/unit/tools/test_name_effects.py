"""name_effects: the names code run at module level binds, deletes or changes in place, and what hides it."""

from __future__ import annotations

import statistics
import time

import pytest

from architect_nb.tools.kernel.name_effects import MAX_CODE_CHARS, NameEffects, name_effects


def effects(code: str) -> NameEffects:
    found = name_effects(code)
    assert found.error is None, found.error
    return found


# ---------------------------------------------------------------------- bindings


@pytest.mark.parametrize(
    ("code", "bound"),
    [
        ("x = 1", {"x"}),
        ("a, (b, *c) = make()", {"a", "b", "c"}),
        ("[d, e] = 1, 2", {"d", "e"}),
        ("first = second = 0", {"first", "second"}),
        ("y: int = 1", {"y"}),
        ("z: int", set()),  # an annotation alone binds nothing
        ("for i, (j, k) in pairs:\n    pass", {"i", "j", "k"}),
        ("with ctx() as handle, other() as (p, q):\n    pass", {"handle", "p", "q"}),
        ("async def f():\n    async with ctx() as w:\n        pass", {"f"}),
        ("try:\n    pass\nexcept ValueError as err:\n    pass", {"err"}),
        ("import os.path, numpy as np", {"os", "np"}),
        ("from pandas import DataFrame, Series as S", {"DataFrame", "S"}),
        ("def f():\n    pass\nasync def g():\n    pass\nclass K:\n    pass", {"f", "g", "K"}),
        ("if (n := 10) > 5:\n    pass", {"n"}),
        ("print(m := 3)", {"m"}),
        ("values = [w := v * 2 for v in vs]", {"values", "w"}),  # a walrus in a comprehension binds outside
        ("total = sum(t for row in rows if (t := row))", {"total", "t"}),
        ("list = [1]\nprint = None", {"list", "print"}),  # builtins rebound are plain names
        ("def f():\n    global G\n    G = 1", {"f", "G"}),
        ("def f():\n    global G2\n    for G2 in range(3):\n        pass", {"f", "G2"}),
        ("class K:\n    global H\n    H = 1", {"K", "H"}),
        ("def f():\n    def g():\n        global deep\n        deep = 1", {"f", "deep"}),
        ("def f():\n    global imported\n    import imported", {"f", "imported"}),
        ("def f():\n    global walrus\n    [walrus := v for v in vs]", {"f", "walrus"}),
    ],
)
def test_bindings(code: str, bound: set[str]) -> None:
    assert effects(code).bound == bound


def test_match_captures_are_bound() -> None:
    code = (
        "match point:\n"
        "    case [a, *rest]:\n"
        "        pass\n"
        "    case {'k': v, **others}:\n"
        "        pass\n"
        "    case Point(x=px) as pt:\n"
        "        pass\n"
        "    case _:\n"
        "        pass\n"
    )
    assert effects(code).bound == {"a", "rest", "v", "others", "px", "pt"}


def test_augmented_assignment_to_a_name_binds_and_mutates() -> None:
    found = effects("items += [1]")
    assert found.bound == {"items"} and found.mutated == {"items"}


def test_comprehension_variables_do_not_leak() -> None:
    found = effects("squares = [x * x for x in xs]\nd = {k: v for k, v in pairs}\ng = (y for y in ys)")
    assert found.bound == {"squares", "d", "g"}
    assert not found.mutated & {"x", "k", "v", "y"}


@pytest.mark.parametrize(
    ("code", "deleted"),
    [
        ("del x", {"x"}),
        ("del a, (b, c)", {"a", "b", "c"}),
        ("del architect", {"architect"}),
        ("def f():\n    global H\n    del H", {"H"}),
        ("def f():\n    local = 1\n    del local", set()),
    ],
)
def test_deletions(code: str, deleted: set[str]) -> None:
    assert effects(code).deleted == deleted


def test_function_locals_are_not_counted() -> None:
    code = (
        "def clean(df, *rows, key=None, **options):\n"
        "    df['a'] = 1\n"
        "    rows[0].append(1)\n"
        "    options.update(a=1)\n"
        "    local = []\n"
        "    local.append(key)\n"
        "    total = 0\n"
        "    total += 1\n"
        "    annotated: list[int]\n"
        "    annotated.append(1)\n"
        "    for item in local:\n"
        "        item.x = 1\n"
    )
    found = effects(code)
    assert found.bound == {"clean"}
    assert found.mutated == set()


def test_a_function_changing_a_global_object_counts() -> None:
    found = effects("def add(row):\n    items.append(row)\n    cache[row] = 1\n    log(state)")
    assert found.mutated == {"items", "cache", "state"}


def test_closures_and_nonlocal_stay_in_the_outer_function() -> None:
    code = (
        "def outer():\n"
        "    acc = []\n"
        "    count = 0\n"
        "    def inner():\n"
        "        nonlocal count\n"
        "        count += 1\n"
        "        acc.append(1)\n"
        "        shared.append(1)\n"
        "    return inner\n"
    )
    found = effects(code)
    assert found.bound == {"outer"}
    assert found.mutated == {"shared"}


def test_class_bodies_and_methods() -> None:
    code = (
        "class Model:\n"
        "    cache = {}\n"
        "    cache['a'] = 1\n"
        "    registry.append('Model')\n"
        "    def fit(self, data):\n"
        "        self.coef = 1\n"
        "        data.sort()\n"
        "        history.append(self)\n"
        "        cache.clear()\n"  # a method does not see the class body's names: this is a global
    )
    found = effects(code)
    assert found.bound == {"Model"}
    assert found.mutated == {"registry", "history", "cache"}


def test_lambdas_and_comprehensions_in_their_own_scopes() -> None:
    found = effects(
        "f = lambda rows: rows.append(1)\n"
        "g = lambda: log.append(1)\n"
        "[r.append(1) for r in rows]\n"
        "[buf.append(v) for v in vs]\n"
    )
    assert found.bound == {"f", "g"}
    assert found.mutated == {"log", "buf"}


def test_defaults_and_decorators_run_where_the_function_is_defined() -> None:
    found = effects("@registry.add\ndef f(x=config.pop('a')):\n    pass")
    assert found.mutated == {"registry", "config"}


# ---------------------------------------------------------------------- mutations


@pytest.mark.parametrize(
    ("code", "mutated"),
    [
        ("df['a'] = 1", {"df"}),
        ("obj.x = 1", {"obj"}),
        ("d[k] += 1", {"d"}),
        ("del df['a']", {"df"}),
        ("del obj.attr", {"obj"}),
        ("a.b.c[0] = 1", {"a"}),
        ("df.loc[df['a'] > 0, 'b'] = 0", {"df"}),
        ("for obj.x in range(3):\n    pass", {"obj"}),
        ("items.append(1)", {"items"}),
        ("arr.sort()", {"arr"}),
        ("a.b.c()", {"a"}),
        ("x[0].append(1)", {"x"}),
        ("cfg.get('section').update(a=1)", {"cfg"}),
        ("getattr(obj, 'items').append(1)", {"obj"}),
        ("df.insert(0, 'z', 1)", {"df"}),
        ("df.drop(columns='a', inplace=True)", {"df"}),
        ("df.dropna(inplace=flag)", {"df"}),  # not a false constant: may be in place
        ("next(it)", {"it"}),
        ("setattr(o, 'a', value)", {"o"}),
        ("delattr(o.inner, 'a')", {"o"}),
        ("f(df)", {"df"}),
        ("process(items=xs)", {"xs"}),
        ("f(*rows, **options)", {"rows", "options"}),
        ("f([a, b], {'k': c})", {"a", "b", "c"}),
        ("f(cfg.section, table[0])", {"cfg", "table"}),
        ("handlers['x'](payload)", {"payload"}),  # calling what a dict holds leaves the dict
        ("vars(obj)", {"obj"}),
        ("rows.append(df)", {"rows"}),  # stored, not changed
        ("seen.update(new)", {"seen"}),
    ],
)
def test_mutations(code: str, mutated: set[str]) -> None:
    assert effects(code).mutated == mutated


@pytest.mark.parametrize(
    "code",
    [
        "df.head()",
        "df.describe()",
        "df.groupby('a').agg('sum').reset_index()",
        "df['a'].value_counts().head(3)",
        "df.drop(columns='a')",
        "df.dropna(inplace=False)",
        "text.replace('a', 'b').strip().lower()",
        "'-'.join(parts)",
        "d.get('k')",
        "arr.reshape(2, 3).sum()",
        "print(df)",
        "len(xs), sorted(xs), isinstance(x, int), repr(obj), display(df)",
        "df.merge(other, on='id')",
        "pd.concat([a, b])",
        "for row in rows:\n    pass",
        "compile('x = 1', 'f', 'exec')",
    ],
)
def test_readers_change_nothing(code: str) -> None:
    found = effects(code)
    assert found.mutated == set()
    assert found.hidden == ()


def test_touched_is_everything() -> None:
    found = effects("a = 1\ndel b\nc.append(1)")
    assert found.touched == {"a", "b", "c"}


# ---------------------------------------------------------------------- hidden changes


@pytest.mark.parametrize(
    ("code", "phrase"),
    [
        ("exec('x = 1')", "exec()"),
        ("eval('x')", "eval()"),
        ("run = exec", "exec()"),
        ("globals()['x'] = 1", "globals()"),
        ("def f():\n    globals()['x'] = 1", "globals()"),
        ("locals()['x'] = 1", "locals()"),
        ("vars()['x'] = 1", "vars()"),
        ("m = __import__('os')", "__import__()"),
        ("importlib.reload(m)", "importlib.reload()"),
        ("from importlib import reload", "importlib.reload()"),
        ("get_ipython().run_cell('x = 1')", "get_ipython()"),
        ("setattr(get_module(), 'x', 1)", "setattr() on a computed object"),
        ("delattr(objects()[0], 'x')", "delattr() on a computed object"),
        ("sys.modules['__main__'].x = 1", "sys.modules"),
        ("from sys import modules", "sys.modules"),
        ("import builtins\nbuiltins.print = None", "builtins"),
        ("__builtins__.len = None", "builtins"),
        ("from os import *", "a star import (from os import *)"),
        ("import __main__\n__main__.x = 1", "the __main__ module"),
        ("f.__globals__['x'] = 1", "a function's __globals__"),
        ("sys._getframe().f_globals['x'] = 1", "a frame's f_globals"),
    ],
)
def test_hidden_changes(code: str, phrase: str) -> None:
    assert phrase in effects(code).hidden


def test_setattr_on_sys_modules_is_hidden() -> None:
    found = effects("setattr(sys.modules[__name__], 'x', 1)")
    assert "sys.modules" in found.hidden


def test_each_hidden_kind_once_in_the_order_found() -> None:
    found = effects("globals()\nexec('a')\nglobals()\nexec('b')\nfrom os import *\nfrom sys import *")
    assert found.hidden == ("globals()", "exec()", "a star import (from os import *)")


@pytest.mark.parametrize(
    "code",
    [
        "def f():\n    return locals()",  # a function's own locals
        "def f():\n    return vars()",
        "vars(obj)",
        "print(obj)",
    ],
)
def test_not_hidden(code: str) -> None:
    assert effects(code).hidden == ()


# ---------------------------------------------------------------------- code that cannot be read


def test_syntax_error() -> None:
    found = name_effects("x = 1\ny = (")
    assert found.error is not None
    assert found.error.startswith("SyntaxError: ") and found.error.endswith("(line 2)")
    assert found == NameEffects(error=found.error)  # nothing else is claimed


@pytest.mark.parametrize(
    "code",
    [
        "(" * 5000 + ")" * 5000,  # the tokenizer's limit: a SyntaxError
        "x = " + "+".join(["1"] * 50_000),  # the AST's depth limit: a RecursionError
        "x = " + "-" * 100_000 + "1",  # the parser's stack: a MemoryError
        "x = 1\n" * (MAX_CODE_CHARS // 6 + 1),  # too long
        "x = 1\0",
        "x = '\ud800'",
    ],
)
def test_code_that_cannot_be_parsed_gives_an_error(code: str) -> None:
    found = name_effects(code)
    assert found.error
    assert not found.touched and found.hidden == ()


def test_a_recursion_error_is_reported_as_too_deeply_nested() -> None:
    found = name_effects("x = " + "+".join(["1"] * 50_000))
    assert found.error == "the code is too deeply nested to analyse"


def test_deep_but_parseable_code_is_read_without_recursion() -> None:
    chain = "+".join(["1"] * 2500)  # far deeper than a recursive visitor's ~500 levels
    found = name_effects(f"total = {chain}\nitems.append(total)\nx = a" + ".b" * 2500 + ".c()")
    assert found.error is None
    assert found.bound == {"total", "x"} and found.mutated == {"items", "a"}


def test_a_megabyte_of_code_is_refused_quickly() -> None:
    line = "df2 = df.groupby('a')['b'].sum().reset_index()\n"
    code = line * (1_000_000 // len(line) + 1)
    assert len(code) > MAX_CODE_CHARS
    started = time.perf_counter()
    found = name_effects(code)
    assert time.perf_counter() - started < 0.5
    assert found.error is not None and "too long" in found.error


def test_code_that_touches_nothing_costs_well_under_5_ms() -> None:
    code = (
        "print(sum(x * x for x in range(1000)))\n"
        "print(len('a b c'.split()), {k: k**2 for k in range(5)})\n"
        "print([w.upper() for w in ('north', 'south') if w.startswith('n')])\n"
    )
    assert name_effects(code).touched == set()
    samples = []
    for _ in range(30):
        started = time.perf_counter()
        name_effects(code)
        samples.append(time.perf_counter() - started)
    assert statistics.median(samples) < 0.005
