"""Secrets never leave the machine: a real kernel, real-looking keys, and an agent that tries every way out.

The kernel starts with secrets of each shape in its environment (a provider key, a password with quotes, a
backslash and HTML specials, a PEM private key, a GitHub token) and the workspace holds sensitive files
(`.env`, `secrets/`) and a key-shaped string in ordinary code. A model behind a local OpenAI-compatible
server then: echoes keys in its streamed text and in tool arguments (values and names), prints the
environment as JSON and repr from a command and from run_python, breaks a key across two lines, pushes a key
over an output line's cut, reads a file that repeats a sensitive file's value, greps the workspace, calls
tools with malformed arguments quoting a key, runs a hook that returns the environment as JSON context,
asks for approval of a write that carries a key, and does a dry run. Debug logging is on.

Afterwards an oracle independent of the redactor looks for every secret, raw and in each common encoding,
as a whole and as any 12-character piece, in: the notebook as a front end would save it (every mime type
and the metadata), every live update the cell showed, the widgets' state, the log file, the whole state
folder (transcripts, threads, snapshots, git objects unpacked) and every request the model server received.
The controls show that a clean scan means something: the scenario reached each way out, and each scan reports
a secret put back where the redactor wrote its label (as a redactor that let it through would have left it).
"""

from __future__ import annotations

import html
import json
import random
import shlex
import shutil
import string
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote, quote_plus

import nbformat
import pytest

from architect_nb.testing.openai_server import OpenAIStubServer, Reply
from tests.support.agent import copy_sample_project
from tests.support.kernel import FrontEnd, available_kernels, front_end

pytestmark = pytest.mark.slow

_rng = random.Random(19)


def _random(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    return "".join(_rng.choices(alphabet, k=n))


PEM_BODY = [_random(64, string.ascii_letters + string.digits + "+/") for _ in range(4)]
ENV_SECRETS = {
    "SERVICE_API_KEY": _random(40),
    "DB_PASSWORD": f"p@ss\"wo\\rd x&y<z>'{_random(6)}",
    "DEPLOY_PRIVATE_KEY": "-----BEGIN RSA PRIVATE KEY-----\n"
    + "\n".join(PEM_BODY)
    + "\n-----END RSA PRIVATE KEY-----",
    "GITHUB_TOKEN": "ghp_" + _random(36),
}
FILE_SECRETS = {"STRIPE_SECRET": "rk_live_" + _random(24), "FOLDER_TOKEN": "tok-" + _random(28)}
SHAPED_KEY = "sk-proj-" + _random(40)  # only in ordinary code: caught by its shape
SECRETS = [*ENV_SECRETS.values(), *FILE_SECRETS.values(), SHAPED_KEY]
KEY = ENV_SECRETS["SERVICE_API_KEY"]
PIECE = 12  # any run of this many characters of a secret counts as a leak
#: The label the redactor writes for each secret, and the secret ("[REDACTED]": the key known by its shape).
LABELS = {
    **{f"[REDACTED:{name}]": value for name, value in ENV_SECRETS.items()},
    "[REDACTED:.env:STRIPE_SECRET]": FILE_SECRETS["STRIPE_SECRET"],
    "[REDACTED]": SHAPED_KEY,
}


def _forms(value: str) -> set[str]:
    """The value raw and in each encoding the issue names, one level deep, each line of it on its own too."""
    forms = {
        value,
        json.dumps(value)[1:-1],
        json.dumps(value, ensure_ascii=False)[1:-1],
        repr(value)[1:-1],
        shlex.quote(value),
        quote(value, safe=""),
        quote_plus(value, safe=""),
        html.escape(value),
        html.escape(value, quote=False),
    }
    return forms | {line for form in list(forms) for line in form.split("\n")}


PIECES = sorted(
    {form[i : i + PIECE] for value in SECRETS for form in _forms(value) for i in range(len(form) - PIECE + 1)}
    - {"-----BEGIN R", "-----END RSA", "BEGIN RSA PR", "END RSA PRIV"}  # the PEM's frame is no secret
    - {"RSA PRIVATE KEY-----"[i : i + PIECE] for i in range(9)}
)


def _found(text: str) -> list[str]:
    squeezed = text.replace("\\\n", "").replace("\r\n", "").replace("\n", "")
    hits = [p for p in PIECES if p in text]
    hits += [s for s in SECRETS if "\n" not in s and s in squeezed and s not in text]  # broken at a line end
    return hits


def _strings(value: Any) -> Iterator[str]:
    """Every string in parsed JSON, keys too: each is scanned decoded as well as in the raw file."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, item in value.items():
            yield str(key)
            yield from _strings(item)
    elif isinstance(value, list):
        for item in value:
            yield from _strings(item)


def _scan_text(where: str, text: str, leaks: list[str]) -> None:
    leaks += [f"{where}: {hit!r}" for hit in _found(text)]
    for line in text.splitlines() or [text]:
        stripped = line.strip()
        if not stripped.startswith(("{", "[")):
            continue
        try:
            parsed = json.loads(stripped)
        except ValueError:
            continue
        for inner in _strings(parsed):
            leaks += [f"{where} (decoded): {hit!r}" for hit in _found(inner)]
    try:
        whole = json.loads(text)
    except ValueError:
        return
    for inner in _strings(whole):
        leaks += [f"{where} (decoded): {hit!r}" for hit in _found(inner)]


def _leaks(texts: list[tuple[str, str]]) -> list[str]:
    leaks: list[str] = []
    for where, text in texts:
        _scan_text(where, text, leaks)
    return leaks


def _scan_folder(folder: Path, leaks: list[str], workspace_copies: set[bytes]) -> int:
    """Every file of the state folder; in the snapshots' git repositories, every object. A snapshot blob is a
    byte-for-byte copy of a workspace file (undo restores it), so a blob may hold a secret only when it is
    the content of a workspace file that holds one (`workspace_copies`); sensitive files never enter."""
    scanned = 0
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        if any(part.endswith(".git") for part in path.parts) and "objects" in path.parts:
            continue  # read below, object by object
        _scan_text(str(path.relative_to(folder)), path.read_bytes().decode("utf-8", "replace"), leaks)
        scanned += 1
    for repo in folder.rglob("*.git"):
        if not (repo / "objects").is_dir():
            continue
        listing = subprocess.run(
            ["git", "--git-dir", str(repo), "cat-file", "--batch-all-objects", "--batch-check"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        for name, kind in zip(listing[0::3], listing[1::3], strict=True):
            data = subprocess.run(
                ["git", "--git-dir", str(repo), "cat-file", kind, name], capture_output=True, check=True
            ).stdout
            if kind == "blob" and data in workspace_copies:
                continue
            _scan_text(f"{repo.name} {kind} {name[:10]}", data.decode("utf-8", "replace"), leaks)
            scanned += 1
    return scanned


# ---------------------------------------------------------------- the run


def _workspace(root: Path) -> Path:
    ws = copy_sample_project(root / "ws")
    (ws / ".env").write_text(f"STRIPE_SECRET={FILE_SECRETS['STRIPE_SECRET']}\nDEBUG=1\n")
    (ws / "secrets").mkdir()
    (ws / "secrets" / "token.txt").write_text(FILE_SECRETS["FOLDER_TOKEN"] + "\n")
    (ws / "settings.py").write_text(f'OPENAI_KEY = "{SHAPED_KEY}"\nTIMEOUT = 30\n')
    (ws / "notes.txt").write_text(f"copied by hand: {FILE_SECRETS['STRIPE_SECRET']}\n")
    return ws


def _config(tmp: Path, ws: Path, server: OpenAIStubServer) -> Path:
    hook = (
        "python3 -c 'import os, json; "
        'print(json.dumps({"additionalContext": json.dumps(dict(os.environ))}))\''
    )
    config = {
        "workspace": {"root": str(ws)},
        "llm": {"api_base": server.url, "api_key_env": "STUB_API_KEY", "retries": 0},
        "guardrails": {"sensitive_files": [".env", "secrets/"]},
        "hooks": {"post_tool_use": [{"name": "env-context", "command": hook, "matcher": "run_command"}]},
    }
    path = tmp / "architect.yaml"
    path.write_text(json.dumps(config))
    return path


def _print_env_command() -> str:
    cut = 2000 - len(KEY) // 2  # an output line is cut at 2,000 bytes: the cut goes through the key
    script = (
        "import os, json; e = os.environ; "
        "print(json.dumps({k: e[k] for k in ['DB_PASSWORD', 'DEPLOY_PRIVATE_KEY', 'SERVICE_API_KEY']})); "
        "print(repr(e['DB_PASSWORD'])); print(repr(e['DEPLOY_PRIVATE_KEY'])); "
        "k = e['SERVICE_API_KEY']; print('key: ' + k[:17]); print(k[17:] + ' end'); "
        f"[print('x' * n + k) for n in range({cut - 30}, {cut + 1}, 6)]"
    )
    return f"python3 -c {shlex.quote(script)}"


def _main_replies() -> list[Reply]:
    pem = ENV_SECRETS["DEPLOY_PRIVATE_KEY"]
    return [
        Reply(
            content="Looking around the project. " * 12
            + f"For the record the key is {KEY} and the token {ENV_SECRETS['GITHUB_TOKEN']}."
            + " More words follow the keys." * 12,
            tool_calls=(("run_command", {"command": _print_env_command()}),),
            delay=0.02,
        ),
        Reply.calls(
            (
                "run_python",
                {
                    "code": "import os, json\nprint(json.dumps(dict(os.environ)))\n"
                    "held = {'token': os.environ['GITHUB_TOKEN'], 'pem': os.environ['DEPLOY_PRIVATE_KEY']}\n"
                    "held"
                },
            ),
            ("list_variables", {}),
        ),
        Reply.calls(
            ("read_file", {"path": "settings.py"}),
            ("read_file", {"path": "notes.txt"}),
            ("read_file", {"path": ".env"}),
            ("grep", {"pattern": "rk_live|tok-"}),
        ),
        Reply.calls(
            ("run_command", {"command": "grep -r -h -a rk_live ."}),
            ("run_command", {"command": f"echo {shlex.quote(ENV_SECRETS['DB_PASSWORD'])}"}),
            ("read_file", {"path": "settings.py", KEY: "an argument named by a key"}),
            ("read_file", f'{{"path": "{ENV_SECRETS["GITHUB_TOKEN"]}'),  # malformed JSON quoting a key
        ),
        Reply.text(f"Done. The password is {ENV_SECRETS['DB_PASSWORD']} and the key:\n{pem}"),
    ]


def _kernel() -> str:
    if "ipk7" not in available_kernels():
        pytest.skip("no ipk7 kernel")
    return "ipk7"


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    tmp = tmp_path_factory.mktemp("secrets")
    state = tmp / "state"
    ws = _workspace(tmp)
    with OpenAIStubServer() as server:
        config = _config(tmp, ws, server)
        env = {**ENV_SECRETS, "STUB_API_KEY": "stub-not-secret", "XDG_STATE_HOME": str(state)}
        env["ARCHITECT_LOG_LEVEL"] = "debug"
        with front_end(_kernel(), tmp, tmp, extra_env=env) as fe:
            assert fe.run("%load_ext architect_nb").status == "ok", fe.describe()
            server.queue(*_main_replies())
            main = fe.run(f"%%architect --model openai/stub --mode yolo --config {config}\nTidy up.", 180)
            assert main.status == "ok", fe.describe()

            # The approval prompt: a write whose content and diff carry a key, approved by a click.
            pem = ENV_SECRETS["DEPLOY_PRIVATE_KEY"]
            write = {
                "path": "keys.txt",
                "content": f"key={KEY}\n{pem}\npassword={ENV_SECRETS['DB_PASSWORD']}\n",
            }
            server.queue(Reply.calls(("write_file", write)), Reply.text("Written."))
            asked = fe.execute(
                f"%%architect --model openai/stub --mode confirm-all --config {config} --new\nSave the keys."
            )
            fe.click(fe.wait_for_button("Approve", 60).comm_id)
            fe.wait(lambda: asked.finished, 120, "the approved run")

            # A dry run shows the arguments it would have used.
            server.queue(Reply.calls(("write_file", write)), Reply.text("Would write."))
            dry = fe.run(f"%%architect --model openai/stub --dry-run --config {config} --new\nAgain.", 120)
            assert dry.status == "ok", fe.describe()
            fe.run("%architect threads")
            fe.run("%architect review")
        requests = list(server.requests)
    yield {"fe": fe, "tmp": tmp, "state": state, "ws": ws, "requests": requests}


def _saved_notebook(fe: FrontEnd, path: Path) -> str:
    cells = []
    for cell in fe.order:
        code = nbformat.v4.new_code_cell(cell.code)
        code.outputs = [
            nbformat.from_dict(
                {k: v for k, v in o.items() if k != "display_id"}
                | ({"execution_count": None} if o["output_type"] == "execute_result" else {})
            )
            for o in cell.outputs
        ]
        cells.append(code)
    nb = nbformat.v4.new_notebook(
        cells=cells, metadata={"kernelspec": {"name": "python3", "display_name": "Python 3"}}
    )
    nbformat.write(nb, path)
    return path.read_text()


def _view_texts(fe: FrontEnd, saved: Path) -> list[tuple[str, str]]:
    """What a person sees, by where: the saved notebook, each live update, the widgets, stray output."""
    texts = [("saved notebook", _saved_notebook(fe, saved))]
    texts += [(f"live update {display} at {at:.2f}", shown) for at, display, shown in fe.updates]
    texts += [(f"widget {c.state.get('_model_name')}", json.dumps(c.state)) for c in fe.comms.values()]
    texts += [("output outside a cell", json.dumps(msg["content"])) for msg in fe.stray]
    return texts


def _request_texts(requests: list[dict[str, Any]]) -> list[tuple[str, str]]:
    return [(f"request {number}", json.dumps(request)) for number, request in enumerate(requests)]


def _workspace_copies(ws: Path) -> set[bytes]:
    """The workspace files that hold a secret and that a snapshot may copy byte for byte."""
    return {(ws / name).read_bytes() for name in ("settings.py", "notes.txt", "keys.txt")}


def _tool_results(requests: list[dict[str, Any]]) -> set[str]:
    return {
        m["content"]
        for r in requests
        for m in r["messages"]
        if m.get("role") == "tool" and isinstance(m.get("content"), str)
    }


def test_the_agent_really_tried(run: dict[str, Any]) -> None:
    """The control: the scenario reached each way out (so a clean scan below means something)."""
    fe: FrontEnd = run["fe"]
    sent = [json.dumps(r["messages"]) for r in run["requests"]]
    assert len(sent) >= 9
    everything = "\n".join(sent)
    for name in ENV_SECRETS:  # the command's output, run_python's, the hook's: redacted
        assert f"[REDACTED:{name}]" in everything, name
    results = _tool_results(run["requests"])
    assert 'OPENAI_KEY = "[REDACTED]"\nTIMEOUT = 30\n' in results  # a key known by its shape only
    assert "copied by hand: [REDACTED:.env:STRIPE_SECRET]\n" in results  # notes.txt repeats .env's value
    assert any("'.env' is a sensitive file" in r for r in results)  # read_file .env refused
    hooked = [r.split("[Hook env-context]\n", 1)[1] for r in results if "[Hook env-context]\n" in r]
    assert hooked and all('"SERVICE_API_KEY": "[REDACTED:SERVICE_API_KEY]"' in h for h in hooked)
    shown = "\n".join(cell.text() for cell in fe.order) + "\n".join(html for _, _, html in fe.updates)
    assert "REDACTED" in shown
    # The live view showed the text while it streamed, part by part.
    streamed = [h.count("Looking around the project.") for _, _, h in fe.updates]
    assert 0 < min(n for n in streamed if n) < 12 <= max(streamed)


def test_the_scans_see_a_secret_the_redactor_let_through(run: dict[str, Any]) -> None:
    """The control for the oracle: each secret put back in place of its label, in each text that shows the
    label, is reported by the scan of the notebook, the live view, the widgets and the model's requests."""
    view = _view_texts(run["fe"], run["tmp"] / "control.ipynb")
    requests = _request_texts(run["requests"])
    for label, secret in LABELS.items():
        for where, text in view + requests:
            if label in text:
                assert _leaks([(where, text.replace(label, secret))]), f"{label} put back in {where}"
    labelled = [where for where, text in view + requests if any(label in text for label in LABELS)]
    assert "saved notebook" in labelled and any(w.startswith("live update") for w in labelled), labelled
    assert sum(w.startswith("request") for w in labelled) >= 5, labelled
    reached = {label for label in LABELS for _, text in requests if label in text}
    assert reached == set(LABELS)  # every secret planted, but the folder's, reached the model (redacted)


def test_the_folder_scan_sees_a_secret_the_redactor_let_through(run: dict[str, Any], tmp_path: Path) -> None:
    """The control for the state folder: in a copy, each label put back as its secret in every file, and a
    blob holding a key in every snapshot repository, are each reported."""
    state = tmp_path / "state"
    shutil.copytree(run["state"], state, symlinks=True)
    planted = []
    for path in sorted(p for p in state.rglob("*") if p.is_file() and "objects" not in p.parts):
        text = path.read_text(errors="replace")
        for label, secret in LABELS.items():
            text = text.replace(label, secret)
        if text != path.read_text(errors="replace"):
            path.write_text(text)
            planted.append(str(path.relative_to(state)))
    repos = [repo for repo in state.rglob("*.git") if (repo / "objects").is_dir()]
    for repo in repos:
        subprocess.run(
            ["git", "--git-dir", str(repo), "hash-object", "-w", "--stdin"],
            input=f"leaked: {KEY}\n".encode(),
            check=True,
            capture_output=True,
        )
    assert len(planted) >= 3 and repos, (planted, repos)  # the log and transcripts; a snapshot repository
    leaks: list[str] = []
    _scan_folder(state, leaks, _workspace_copies(run["ws"]))
    for where in planted + [f"{repo.name} blob" for repo in repos]:
        assert any(leak.startswith(where) for leak in leaks), where


def test_no_secret_in_the_saved_notebook_the_live_view_or_the_widgets(run: dict[str, Any]) -> None:
    leaks = _leaks(_view_texts(run["fe"], run["tmp"] / "saved.ipynb"))
    assert not leaks, "\n".join(leaks[:20])


def test_no_secret_in_the_log_or_the_state_folder(run: dict[str, Any]) -> None:
    state: Path = run["state"]
    log = state / "architect-nb" / "architect-nb.log"
    assert log.is_file() and '"event": "tool_call"' in log.read_text()  # the audit trail went to the file
    leaks: list[str] = []
    scanned = _scan_folder(state, leaks, _workspace_copies(run["ws"]))
    assert scanned > 10  # transcripts, threads, snapshots
    assert not leaks, "\n".join(leaks[:20])


def test_no_secret_reached_the_model(run: dict[str, Any]) -> None:
    leaks = _leaks(_request_texts(run["requests"]))
    assert not leaks, "\n".join(leaks[:20])


def test_no_log_line_reached_a_cell(run: dict[str, Any]) -> None:
    fe: FrontEnd = run["fe"]
    stderr = [o["text"] for c in fe.order for o in c.outputs if o.get("name") == "stderr"]
    assert not [t for t in stderr if "architect" in t.lower() or "debug" in t.lower()], stderr
