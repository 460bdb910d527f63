"""python_code: which paths inline Python code (`python -c CODE args`) only reads, and what it does with its
argv words. Errors must fall on the strict side: a literal stays visible, an argv word is "unknown"."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from architect_nb.tools.commands.programs.python_code import read_python

PROTECTED = "pyproject.toml"


def blanked(code: str, name: str = PROTECTED) -> bool:
    """The literal naming `name` was blanked out, and only blanked (same length, spaces instead)."""
    unproven = read_python(code).unproven
    assert len(unproven) == len(code)
    assert all(u in (c, " ") for u, c in zip(unproven, code, strict=True))
    return name not in unproven


@pytest.mark.parametrize(
    "code",
    [
        "import tomllib; print(tomllib.load(open('pyproject.toml','rb')))",
        "open('pyproject.toml').read()",
        "print(open('pyproject.toml', 'r', encoding='utf-8').read())",
        "open(file='pyproject.toml', mode='rt').read()",
        "with open('pyproject.toml') as f:\n    print(f.read())",
        "import io, codecs; io.open('pyproject.toml'); codecs.open('pyproject.toml', 'r', 'utf-8')",
        "from pathlib import Path; Path('pyproject.toml').read_text()",
        "from pathlib import Path; print(Path('pyproject.toml').is_file(), Path('pyproject.toml').stat())",
        "import pathlib; pathlib.Path('pyproject.toml').exists()",
        "import pathlib as pl; pl.Path('pyproject.toml').read_bytes()",
        "from pathlib import Path as P; P('pyproject.toml').open().read()",
        "from pathlib import Path; open(Path('pyproject.toml')).read()",
        "import os; os.path.getsize('pyproject.toml')",
        "import os.path; os.path.exists('pyproject.toml')",
        "import os.path as osp; osp.isfile('pyproject.toml')",
        "from os.path import getmtime; getmtime('pyproject.toml')",
        "import os; os.stat('pyproject.toml'); os.access('pyproject.toml', os.R_OK)",
        "import pandas as pd; pd.read_csv('pyproject.toml')",
        "from pandas import read_csv; read_csv('pyproject.toml')",
        "import shutil; shutil.copy('pyproject.toml', '/tmp/x')",
        "p = 'pyproject.toml'\nprint(open(p).read())",
        "x = 'é' + '€'\nprint(open('pyproject.toml').read())",  # byte columns are not string indexes
        "import sys\r\nprint(sys.version)\r\nopen('pyproject.toml').read()",
        "# -*- coding: utf-8 -*-\nopen('pyproject.toml').read()",
        "import sys\rprint(sys.version)\ropen('pyproject.toml').read()",
        "open(('pyproject'  # split\n '.toml')).read()",
    ],
)
def test_reads_are_blanked(code: str) -> None:
    assert blanked(code)


def test_blanking_keeps_other_text_and_line_breaks() -> None:
    code = "import shutil\nshutil.copy('pyproject.toml', '/tmp/x')\nopen(('pyproject'\n '.toml')).read()"
    unproven = read_python(code).unproven
    assert "'/tmp/x'" in unproven
    assert unproven.count("\n") == code.count("\n")
    assert "pyproject" not in unproven


@pytest.mark.parametrize(
    "code",
    [
        "open('pyproject.toml','w')",
        "open('pyproject.toml', 'a')",
        "open('pyproject.toml', 'r+')",
        "open('pyproject.toml', 'x')",
        "open('pyproject.toml', mode='wb')",
        "mode = 'r'; open('pyproject.toml', mode)",
        "open('pyproject.toml', *modes)",
        "open('pyproject.toml', **options)",
        "import os; open('pyproject.toml', 'r', opener=lambda p, f: os.open(p, os.O_WRONLY | os.O_TRUNC))",
        "from pathlib import Path; Path('pyproject.toml').write_text('x')",
        "from pathlib import Path; Path('pyproject.toml').open('w')",
        "from pathlib import Path; Path('pyproject.toml').unlink()",
        "from pathlib import Path; Path('pyproject.toml').parent",
        "from pathlib import Path; open(Path('pyproject.toml'), 'w')",
        "import os; os.remove('pyproject.toml')",
        "import os; os.rename('a', 'pyproject.toml')",
        "import os; os.chmod('pyproject.toml', 0o777)",
        "import os; os.open('pyproject.toml', os.O_RDONLY)",
        "import shutil; shutil.copy('/tmp/x', 'pyproject.toml')",
        "import shutil; shutil.move('pyproject.toml', '/tmp/x')",
        "import shutil; shutil.copytree('pyproject.toml', '/tmp/x', copy_function=print)",
        "print('pyproject.toml')",
        "import subprocess; subprocess.run(['rm', 'pyproject.toml'])",
        "import os; os.system('rm pyproject.toml')",
        "open(f'pyproject.toml').read()",
        "open(b'pyproject.toml').read()",
        "# pyproject.toml\nprint(1)",
        "x = {'pyproject.toml': 1}",
        "reader.read_csv('pyproject.toml')",  # not a function of an imported module
        "import pandas as pd; pd.read_hdf('pyproject.toml', mode='a')",
        "print(f\"{open('pyproject.toml').read()}\")",  # inside an f-string: never blanked
        "p = 'pyproject.toml'",  # bound, never used: nothing proven
        "import pandas as pd\npd = object()\npd.read_csv('pyproject.toml')",
        "open('pyproject.toml').read(); open('pyproject.toml', 'w')",  # one read, one write: both stay
        "p = 'pyproject.toml'\nopen(p).read()\nopen(p, 'w')",
        "p = 'pyproject.toml'\np = p\nopen(p).read()",
        "def f():\n    p = 'pyproject.toml'\n    open(p).read()\n    return p",
    ],
)
def test_other_uses_stay_visible(code: str) -> None:
    assert not blanked(code)


@pytest.mark.parametrize(
    "code",
    [
        "import builtins\nopen = lambda p, *a: builtins.open(p, 'w')\nopen('pyproject.toml')",
        "exec('x = 1'); open('pyproject.toml').read()",
        "eval('1'); open('pyproject.toml').read()",
        "__import__('os'); open('pyproject.toml').read()",
        "import importlib; open('pyproject.toml').read()",
        "from os import open\nopen('pyproject.toml', 0)",
        "import io as os\nos.path.exists('pyproject.toml')",
        "import os\nos.path.exists = print\nos.path.exists('pyproject.toml')",
        "def f(open):\n    return open\nopen('pyproject.toml').read()",
        "from pathlib import *\nPath('pyproject.toml').read_text()",
        "f = open('pyproject.toml')\nopen(f.name, 'w')",
        "f = open('pyproject.toml')\nopen('/proc/self/fd/3', 'w')",
        "import os\nf = open('pyproject.toml')\nos.fchmod(f.fileno(), 0o777)",
        "import sys; getattr(sys, 'argv'); open('pyproject.toml').read()",
        "import sys; sys.modules['os'] = None; open('pyproject.toml').read()",
        "import pathlib; pathlib.Path.read_text = print; pathlib.Path('pyproject.toml').read_text()",
        "print.__self__.open('pyproject.toml', 'w'); open('pyproject.toml').read()",
    ],
)
def test_rebinding_or_dynamic_code_proves_nothing(code: str) -> None:
    result = read_python(code)
    assert result.unproven == code
    assert result.argv_whole


@pytest.mark.parametrize(
    ("code", "argv"),
    [
        ("import sys; open(sys.argv[1],'w').write('x')", {1: "write"}),
        ("from sys import argv; from pathlib import Path; Path(argv[2]).unlink()", {2: "write"}),
        ("import sys; print(open(sys.argv[1]).read())", {1: "read"}),
        ("import sys; f = sys.argv[1]; open(f, 'w')", {1: "write"}),
        ("import sys; f = sys.argv[1]; print(open(f).read())", {1: "read"}),
        ("import sys; f = sys.argv[1]; f = 'x'; print(open(f).read())", {1: "unknown"}),
        ("import os, sys; os.system('rm ' + sys.argv[1])", {1: "unknown"}),
        ("import subprocess, sys; subprocess.run(['cat', sys.argv[1]])", {1: "unknown"}),
        ("import sys as s; print(len(s.argv[1]), s.argv[1], f'{s.argv[1]}!')", {1: "read"}),
        ("import sys; print('{}'.format(sys.argv[1]), str(sys.argv[2]))", {1: "read", 2: "read"}),
        ("import sys; open(str(sys.argv[1]), 'w')", {1: "write"}),
        ("import sys; open(f'{sys.argv[1]}').read()", {1: "unknown"}),
        ("import sys; print(sys.argv[1]); open(sys.argv[1], 'a')", {1: "write"}),
        ("import sys; open(sys.argv[1]).read(); len(sys.argv[1]) and foo(sys.argv[1])", {1: "unknown"}),
        ("import sys, shutil; shutil.copy(sys.argv[1], sys.argv[2])", {1: "read", 2: "write"}),
        ("import sys, shutil; shutil.move(sys.argv[1], sys.argv[2])", {1: "write", 2: "write"}),
        ("import sys, os; os.makedirs(sys.argv[1], exist_ok=True)", {1: "write"}),
        ("import sys; from os import remove as rm; rm(sys.argv[3])", {3: "write"}),
        ("from sys import argv as a; open(a[1], 'w')", {1: "write"}),
        ("import sys; f = sys.argv[1]", {1: "unknown"}),
        ("import sys; import pathlib; pathlib.Path(sys.argv[1]).exists()", {1: "read"}),
        ("import sys\nif len(sys.argv) > 1:\n    print(open(sys.argv[1]).read())", {1: "read"}),
    ],
)
def test_argv_words(code: str, argv: dict[int, str]) -> None:
    result = read_python(code)
    assert dict(result.argv) == argv
    assert not result.argv_whole


@pytest.mark.parametrize(
    "code",
    [
        "import sys; [open(a,'w') for a in sys.argv[1:]]",
        "import sys; open(sys.argv[-1], 'w')",
        "import sys; i = 1; open(sys.argv[i], 'w')",
        "import sys\nfor a in sys.argv:\n    open(a, 'w')",
        "import sys; _, a = sys.argv; open(a, 'w')",
        "import sys; foo(*sys.argv)",
        "import sys; foo(sys.argv)",
        "import sys; print(sys.argv)",
        "import sys; a = sys.argv; open(a[1], 'w')",
        "import sys; open(sys.argv.pop(), 'w')",
        "import os; open(os.sys.argv[1], 'w')",
        "import sys; open(sys.orig_argv[3], 'w')",
        "print(open('/proc/self/cmdline').read())",
        "import sys; x = 'argv'",
        # Run from stdin, this decodes to two lines: the second opens argv[1] for writing.
        "# coding: utf-7\nimport sys  # +AAo-open(sys.argv+AFs-1+AF0-, +ACI-w+ACI-)",
        "#!/usr/bin/env python\n# vim: set fileencoding=utf-7 :\nx = 1",
    ],
)
def test_argv_used_whole(code: str) -> None:
    assert read_python(code).argv_whole


def test_len_of_argv_is_harmless() -> None:
    result = read_python("import sys; print(len(sys.argv))")
    assert not result.argv_whole
    assert result.argv == {}


@pytest.mark.parametrize(
    "code",
    [
        "(" * 100_000,
        "1+" * 50_000 + "1",
        "-" * 99_999 + "1",
        "a" + ".a" * 49_999,
        "open('pyproject.toml')\x00",
        "print(open('pyproject.toml').read())  # " + "x" * 200_000,
        "print('\udcff'); open('pyproject.toml').read()",
        "open('pyproject.toml'",
    ],
)
def test_hostile_or_broken_code_proves_nothing(code: str) -> None:
    result = read_python(code)
    assert result.unproven == code
    assert result.argv == {}
    assert result.argv_whole


def test_empty_code() -> None:
    assert read_python("") == read_python("")
    assert read_python("").unproven == ""
    assert read_python("").argv == {}


def check_blanking_only(code: str) -> None:
    unproven = read_python(code).unproven
    assert len(unproven) == len(code)
    assert all(u in (c, " ") for u, c in zip(unproven, code, strict=True))


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_text_is_only_blanked(code: str) -> None:
    check_blanking_only(code)


FRAGMENTS = [
    "import sys",
    "import os",
    "from pathlib import Path",
    "import shutil",
    "open('pyproject.toml').read()",
    "open('pyproject.toml', 'w')",
    "Path('é.toml').read_text()",
    "print(open(sys.argv[1]).read())",
    "p = 'pyproject.toml'",
    "open(p)",
    "os.remove(sys.argv[2])",
    "shutil.copy('a', sys.argv[1])",
    "x = ('a'\n 'b')",
    "'\\u20ac'",
    "f'{sys.argv[1]}'",
    "# comment 'pyproject.toml'",
    "\r\n",
    "\n",
    "  ",
    "(",
    "exec",
]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=12), st.sampled_from(["\n", "; ", "\r\n", "\r"]))
def test_code_like_text_is_only_blanked(parts: list[str], separator: str) -> None:
    check_blanking_only(separator.join(parts))
