"""A workspace with protected files, and the shell forms that change them or leave them alone (issue 30).

`PROTECTED` guards `pyproject.toml`, `setup.cfg` and `.github/**`. The workspace is a git repository whose
branch `other` changes `pyproject.toml`, with archives, patches, links and a backup folder that would land on
the protected files. `WRITES` are commands that really change a protected file when run with bash (each with
the programs it needs and, where the form needs one, a setup step: a local edit, an untracked file);
`ORDINARY` are everyday commands in that workspace that must not be refused.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import os
import shutil
import stat
import subprocess
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

PROTECTED = ["pyproject.toml", "setup.cfg", ".github/**"]

PYPROJECT = '[project]\nname = "demo"\nversion = "1.0"\n\n[tool.pytest.ini_options]\npythonpath = ["src"]\n'
SETUP_CFG = "[metadata]\nname = demo\n"
CI = "on: push\njobs: {}\n"
EVIL = '[project]\nname = "evil"\n'
FIX = """\
--- a/pyproject.toml
+++ b/pyproject.toml
@@ -1,3 +1,3 @@
 [project]
-name = "demo"
+name = "evil"
 version = "1.1"
"""


@dataclass(frozen=True)
class Form:
    command: str
    needs: tuple[str, ...] = ()  # programs that must be installed
    setup: str = ""  # run first, unguarded: a local edit, an untracked file
    sandbox_gap: str = ""  # why bubblewrap does not hold this one (the guardrail must, sandbox or not)

    def __str__(self) -> str:
        return self.command


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=root, check=True, capture_output=True, env=_GIT_ENV)


_GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
    "GIT_CONFIG_GLOBAL": "/dev/null",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def build_workspace(root: Path) -> Path:
    """The workspace every form runs in (copy it for each run: the forms change it)."""
    files = {
        "pyproject.toml": PYPROJECT,
        "setup.cfg": SETUP_CFG,
        ".github/workflows/ci.yml": CI,
        "README.md": "# demo\nname = demo\n",
        "src/app.py": "def main():\n    return 1\n",
        "src/util.py": "X = 1\n",
        "tests/test_app.py": "from app import main\n\n\ndef test_main():\n    assert main() == 1\n",
        "notes.txt": "a\nb\n",
        "Makefile": "check:\n\t@echo checked\n",
        "backup/pyproject.toml": EVIL,
        "backup/.github/workflows/ci.yml": "on: evil\n",
        "fix.diff": FIX,
        "fix0.diff": FIX.replace("a/pyproject.toml", "pyproject.toml").replace(
            "b/pyproject.toml", "pyproject.toml"
        ),
    }
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "start")
    (root / "pyproject.toml").write_text(PYPROJECT.replace("1.0", "1.1"))
    _git(root, "commit", "-q", "-am", "bump")
    _git(root, "checkout", "-q", "-b", "other")
    (root / "pyproject.toml").write_text(EVIL)
    _git(root, "commit", "-q", "-am", "other")
    _git(root, "checkout", "-q", "main")
    _archives(root)
    with tarfile.open(root / "src.tgz", "w:gz") as archive:
        archive.add(root / "src", "src")
    with gzip.open(root / "pyproject.toml.gz", "wb") as handle:
        handle.write(EVIL.encode())
    (root / "link.toml").symlink_to("pyproject.toml")
    os.link(root / "setup.cfg", root / "hard.cfg")
    return root


def _archives(root: Path) -> None:
    members = {"pyproject.toml": EVIL, ".github/workflows/ci.yml": "on: evil\n"}
    for name, mode in (("evil.tar", "w"), ("evil.tgz", "w:gz")):
        with tarfile.open(root / name, mode) as archive:
            for member, text in members.items():
                data = text.encode()
                info = tarfile.TarInfo(member)
                info.size = len(data)
                archive.addfile(info, io.BytesIO(data))
    with zipfile.ZipFile(root / "evil.zip", "w") as archive:
        for member, text in members.items():
            archive.writestr(member, text)


def protected_state(root: Path) -> dict[str, tuple[object, ...]]:
    """Every protected path (files, folders, links) with what it holds and its mode: compare two of them."""
    state: dict[str, tuple[object, ...]] = {}
    for rel in ("pyproject.toml", "setup.cfg", ".github"):
        path = root / rel
        if not os.path.lexists(path):
            continue
        walked = [(str(path), [], [])] if not path.is_dir() else list(os.walk(path))
        for folder, dirs, names in walked:
            for name in [""] if not path.is_dir() else ["", *dirs, *names]:
                one = Path(folder) / name if name else Path(folder)
                info = os.lstat(one)
                body: object = None
                if stat.S_ISREG(info.st_mode):
                    body = hashlib.sha256(one.read_bytes()).hexdigest()
                elif stat.S_ISLNK(info.st_mode):
                    body = os.readlink(one)
                state[os.path.relpath(one, root)] = (
                    stat.S_IFMT(info.st_mode),
                    stat.S_IMODE(info.st_mode),
                    body,
                )
    return state


def fresh_copy(template: Path, target: Path) -> Path:
    shutil.copytree(template, target, symlinks=True)
    os.link(target / "setup.cfg", target / "hard.cfg.tmp")  # copytree breaks hard links: make it again
    os.replace(target / "hard.cfg.tmp", target / "hard.cfg")
    return target


LOCAL_EDIT = "echo '# a local edit' >> pyproject.toml"
UNTRACKED = "echo 'on: pull' > .github/workflows/extra.yml"

WRITES: list[Form] = [
    # named plainly
    Form("echo x > pyproject.toml"),
    Form("echo x >> setup.cfg"),
    Form("printf x | tee pyproject.toml >/dev/null"),
    Form("sed -i 's/demo/evil/' pyproject.toml"),
    Form("rm setup.cfg"),
    Form("mv setup.cfg setup.old"),
    Form("cp README.md pyproject.toml"),
    Form("truncate -s 0 pyproject.toml"),
    Form("chmod 600 pyproject.toml"),
    Form("rm -rf .github"),
    Form("touch .github/workflows/new.yml"),
    Form("mkdir .github/new"),
    Form("dd if=README.md of=pyproject.toml status=none"),
    Form("ln -sf README.md pyproject.toml"),
    Form("install -m 644 README.md setup.cfg"),
    Form("sort -o pyproject.toml README.md"),
    Form("uniq README.md setup.cfg"),
    Form("tar czf pyproject.toml src"),
    Form("curl -so setup.cfg file:///etc/hostname", needs=("curl",)),
    Form("timeout 5 rm setup.cfg"),
    # behind programs no model describes, which run the command after them
    Form("ionice -c3 rm setup.cfg", needs=("ionice",)),
    Form("flock pyproject.lock sed -i s/demo/evil/ pyproject.toml", needs=("flock",)),
    Form("script -qc 'rm setup.cfg' /dev/null", needs=("script",)),
    Form("exec 3>pyproject.toml; echo x >&3"),
    Form("python3 -m zipfile -c setup.cfg README.md"),
    # quotes, escapes and paths the shell resolves
    Form('echo x > "pyproject.toml"'),
    Form("echo x > 'pyproject'.toml"),
    Form("echo x > pyproject\\.toml"),
    Form('rm "set"up.cfg'),
    Form("sed -i s/demo/evil/ ./src/../pyproject.toml"),
    Form("cd src && echo x > ../pyproject.toml"),
    Form("cd .github && rm -r workflows"),
    Form("env -C .github rm -r workflows"),
    # globs and bracket patterns
    Form("echo x > pyproject.t*ml"),
    Form("rm *.cfg"),
    Form("sed -i s/demo/evil/ *.toml"),
    Form("rm -f set?p.cfg"),
    Form("rm [s]etup.cfg"),
    Form("chmod 600 {pyproject,setup}.*"),
    Form("rm .github/*/*.yml"),
    Form('for f in *.cfg; do rm "$f"; done'),
    # variables and command substitution
    Form('F=pyproject.toml; echo x > "$F"'),
    Form('export T=pyproject.toml && truncate -s0 "$T"'),
    Form('f=setup; rm "$f.cfg"'),
    Form('echo x > "$(ls p*.toml)"'),
    Form('rm "$(echo setup.cfg)"'),
    Form("rm $(find . -name setup.cfg)"),
    # in-place editors other than sed
    Form("perl -pi -e 's/demo/evil/' pyproject.toml", needs=("perl",)),
    Form("perl -i -pe 's/demo/evil/' setup.cfg", needs=("perl",)),
    Form("ed -s pyproject.toml <<'EOF'\n,s/demo/evil/\nw\nq\nEOF", needs=("ed",)),
    Form("vim -es -c '%s/demo/evil/' -c 'wq' pyproject.toml", needs=("vim",)),
    Form("ex -s -c '%s/demo/evil/|x' setup.cfg", needs=("ex",)),
    # interpreters given inline code
    Form("python3 -c \"open('pyproject.toml', 'w').write('x')\""),
    Form("python3 -c \"import os; os.remove('setup.cfg')\""),
    Form("python3 -c \"import glob, os; [os.remove(f) for f in glob.glob('*.cfg')]\""),
    Form("python3 -c \"import os; [os.remove(f) for f in os.listdir('.') if f.endswith('.cfg')]\""),
    Form("python3 -c \"import shutil; shutil.rmtree('.github')\""),
    Form("python3 - <<'EOF'\nfrom pathlib import Path\nPath('pyproject.toml').write_text('x')\nEOF"),
    # the file's name passed as an argument that the code opens for writing (issue 50)
    Form("python3 -c \"import sys; open(sys.argv[1], 'a').write('# x')\" pyproject.toml"),
    Form("python3 - setup.cfg <<'EOF'\nimport sys, os\nname = sys.argv[1]\nos.remove(name)\nEOF"),
    Form("python3 <<< \"open('setup.cfg', 'a').write('x')\""),
    Form("node -e \"require('fs').writeFileSync('pyproject.toml', 'x')\"", needs=("node",)),
    Form("perl -e 'unlink \"setup.cfg\"'", needs=("perl",)),
    Form('awk \'BEGIN { print "x" > "pyproject.toml" }\''),
    Form("sed -n 'w setup.cfg' README.md"),
    Form("bash -c 'rm setup.cfg'"),
    Form("echo 'rm setup.cfg' | bash"),
    Form("bash <(echo rm setup.cfg)"),
    Form("source <(echo rm setup.cfg)"),
    Form("echo \"open('setup.cfg', 'w')\" | python3"),
    Form("node <<'EOF'\nrequire('fs').writeFileSync('setup.cfg', 'x')\nEOF", needs=("node",)),
    Form("perl <<'EOF'\nunlink 'setup.cfg';\nEOF", needs=("perl",)),
    Form('sh -c "echo x > pyproject.toml"'),
    Form("eval 'rm setup.cfg'"),
    # find -delete, find -exec, xargs
    Form("find . -name setup.cfg -delete"),
    Form("find . -maxdepth 1 -name '*.toml' -exec sed -i s/demo/evil/ {} +"),
    Form("find .github -type f -exec rm {} \\;"),
    Form("find . -maxdepth 1 -name pyproject.toml -exec cp README.md {} \\;"),
    Form("find . -maxdepth 1 -type f -name 'pyproject*' -exec truncate -s0 {} +"),
    Form("find . -maxdepth 1 -name '*.cfg' | xargs rm"),
    Form("find . -maxdepth 1 -name '*.toml' -print0 | xargs -0 sed -i s/demo/evil/"),
    Form("echo setup.cfg | xargs rm"),
    # archive extraction, and compressors that replace a file
    Form("tar xf evil.tar"),
    Form("tar -xzf evil.tgz"),
    Form("tar --extract --file=evil.tar"),
    Form("tar xf - < evil.tar"),
    Form("cat evil.tar | tar x"),
    Form("unzip -oq evil.zip", needs=("unzip",)),
    Form("python3 -m zipfile -e evil.zip ."),
    Form("gunzip -f pyproject.toml.gz"),
    Form("gzip -f setup.cfg"),
    Form("zip -qm out.zip setup.cfg", needs=("zip",)),
    Form("tar cf out.tar --remove-files setup.cfg"),
    # recursive copies and moves whose source holds a file of the same name
    Form("cp -r backup/. ."),
    Form("cp -a backup/.github ."),
    Form("cp -rT backup ."),
    Form("mv -f backup/* ."),
    Form("rsync -a backup/ ./", needs=("rsync",)),
    # links: another name of a protected file
    Form("echo x >> link.toml"),
    Form("echo x >> hard.cfg"),  # the sandbox makes every name of a protected file read-only
    Form("ln -s pyproject.toml p && echo x >> p"),
    Form("ln setup.cfg h && echo x >> h"),
    # patch
    Form("patch -sp1 < fix.diff", needs=("patch",)),
    Form("patch -s -p0 -i fix0.diff", needs=("patch",)),
    Form("patch -sp1 <<'EOF'\n" + FIX + "EOF", needs=("patch",)),
    Form("cat fix.diff | patch -sp1", needs=("patch",)),
    Form("git apply fix.diff"),
    # git commands that rewrite tracked protected files
    Form("git checkout -q other"),
    Form("git switch -q other"),
    Form("git -C src checkout -q other"),
    Form("git checkout -q other -- pyproject.toml"),
    Form("git checkout -q HEAD~1 -- ."),
    Form("git restore --source other pyproject.toml"),
    Form("git merge -q other"),
    Form("git cherry-pick other"),
    Form("git revert --no-edit HEAD"),
    Form("git stash -q", setup=LOCAL_EDIT),
    Form("git reset -q --hard", setup=LOCAL_EDIT),
    Form("git checkout -- .", setup=LOCAL_EDIT),
    Form("git restore .", setup=LOCAL_EDIT),
    Form("git stash -q -u", setup=UNTRACKED),
    Form("git stash pop -q", setup=f"{LOCAL_EDIT} && git stash -q"),
    Form("git clean -fdq", setup=UNTRACKED),
    Form("git mv setup.cfg setup2.cfg"),
    Form("git rm -q setup.cfg"),
]

ORDINARY: list[str] = [
    # the tests, and the project's linters and formatters
    "python3 -m pytest -q tests",
    "ruff check --fix .",
    "ruff format .",
    "ruff check --fix src && ruff format src",
    "make check",
    "python3 src/app.py",
    # git that reads or records
    "git status",
    "git diff",
    "git diff --stat HEAD~1",
    "git add -A",
    "echo '# more' >> src/app.py && git add src/app.py && git commit -qm 'change app'",
    "git log --oneline -5",
    "git show --stat HEAD",
    "git branch feature",
    "git checkout -q -b feature",
    "git switch -q -c feature",
    "git stash list",
    "git fetch --dry-run 2>/dev/null || true",
    "git checkout -- src/app.py",
    "git restore src/app.py",
    "git stash -q",
    # reading protected files
    "cat pyproject.toml",
    "grep -n name pyproject.toml setup.cfg",
    "cp pyproject.toml /tmp/pyproject-copy.toml",
    'python3 -c "print(1 + 1)"',
    # a one-liner that only reads a protected file (issue 50)
    "python3 -c \"import tomllib; print(tomllib.load(open('pyproject.toml', 'rb'))['project']['name'])\"",
    'python3 -c "import sys; print(open(sys.argv[1]).read())" setup.cfg',
    "sed -n '1,3p' setup.cfg",
    # cp, mv and sed -i on other files
    "cp notes.txt notes.bak",
    "mv notes.txt notes.md",
    "cp src/app.py src/app_copy.py && rm src/app_copy.py",
    "sed -i 's/a/A/' notes.txt",
    "sed -i 's/X = 1/X = 2/' src/*.py",
    "perl -pi -e 's/a/A/' notes.txt",
    "echo hello > out.txt",
    "echo more >> notes.txt",
    "printf 'x\\n' | tee log.txt",
    "touch src/new.py",
    "chmod +x src/app.py",
    "rm -f notes.txt",
    "ln -s src/app.py app-link.py",
    # archives and builds
    "tar czf src.tgz src",
    "tar cf - src | gzip > src.tar.gz",
    "mkdir -p build && cp -r src build/",
    "mkdir -p dist && cp -r src dist",
    "rm -rf build dist",
    "find . -name '*.pyc' -delete",
    "find . -name __pycache__ -prune -exec rm -rf {} +",
    "find src -name '*.py' -exec sed -i 's/X = 1/X = 3/' {} +",
    "find src -name '*.py' | xargs sed -i 's/X = 1/X = 4/'",
    'for f in src/*.py; do cp "$f" "$f.bak"; done',
    "mkdir -p out && tar xzf src.tgz -C out",
    "mkdir -p unpacked && tar xf evil.tar -C unpacked --exclude pyproject.toml --exclude .github",
    "gzip -k notes.txt",
    "python3 - <<'EOF'\nprint('hello')\nEOF",
    "cd src && ls && cat app.py",
]
