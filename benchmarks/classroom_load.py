"""A class of 30 on one node: 30 students' kernels run one `%%architect` cell at once through a LiteLLM proxy.

Everything is real but the model: 30 IPython kernels (ipykernel, from this venv, with the warm-up after
`%load_ext` on, as users have it), each configured by environment variables as a hub configures a student
(`ARCHITECT_MODEL=litellm_proxy/gpt-4o-mini`, `LITELLM_PROXY_API_BASE`, `LITELLM_PROXY_API_KEY`), so each
calls the model through the gateway client; a real LiteLLM proxy (`litellm --config`, from `.venv-proxy`:
`make setup-proxy`) in front of the local OpenAI-compatible server. That server streams each turn over
0.5-1.5 s (random, seeded): first a call of `read_file` on the student's `notes.txt`, then, once the tool's
result comes back, the answer. So each run is two model turns and one tool call.

The proxy allows `--limit` requests in flight for the whole class (`global_max_parallel_requests`, 16 by
default). When more come at once (`--arrivals 0`, or a lower `--limit`), it answers part of the burst with
429 "Max parallel request limit reached": the cells say the class gateway is busy and try again. The proxy
runs without a database (as in tests/kernel/test_litellm_proxy.py), so the students share the master key
and the limit is the proxy-wide one, which this LiteLLM enforces with its older limiter
(`LEGACY_MULTI_INSTANCE_RATE_LIMITING=true`); per-key limits (`max_parallel_requests`, `rpm_limit` at
`/key/generate`) need the database.

First one student alone (`--solo` runs, each the first cell of a fresh kernel while the class's kernels
idle), then the whole class, its cells sent at random moments over `--arrivals` seconds (5 by default: a
class pressing Run when the teacher says so; 0 sends them all in the same millisecond, the worst case, which
the single-process proxy bounds). Side by side: runs finished
and errors; p50 and p95 of the run time (from sending the cell to its reply) for the class against one
student alone, and where that time goes (from the timestamps of the run's own record); the CPU the proxy,
the kernels and this script used during the class's burst; the memory a kernel that ran the cell adds over
a plain kernel that just started (RSS and USS, from psutil); the proxy's own memory; the 429s the proxy gave
(its access log) against the busy retries the cells reported. Goals: every run finishes, 0 errors, p95
within 2x one student's time.

Run: `.venv/bin/python benchmarks/classroom_load.py [--students 30] [--limit 16] [--solo 5] [--arrivals 5]`
(about two minutes on two cores; without `.venv-proxy` it says so and skips). Every kernel it starts and the
proxy are stopped when it ends, fails or is interrupted (Ctrl-C, SIGTERM).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import ExitStack, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import psutil  # type: ignore[import-untyped]
import zmq

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # run as a script: the tests' helpers are tests.support

from architect_nb.agent.events import RUN_MIME_TYPE  # noqa: E402
from architect_nb.testing.openai_server import OpenAIStubServer, Reply, StubHandler  # noqa: E402
from tests.support.kernel import VENVS, FrontEnd, kernel_env, write_kernelspecs  # noqa: E402

MASTER = "sk-teacher-0123456789"
MODEL = "gpt-4o-mini"
NOTES = "Bring a pencil on Friday; the quiz covers loops.\n"
ANSWER = "The notes say to bring a pencil on Friday: the quiz covers loops."
TASK = "%%architect --mode yolo --new\nWhat do my notes.txt say?"
BUSY = "The class gateway is busy"
JOIN_WARM_UP = (
    "import architect_nb.notebook.warm_up as _w\n_w.warm_up_thread() and _w.warm_up_thread().join(120)"
)
PROXY_START_S = 240.0  # the proxy imports its whole server stack: a minute or more on two busy cores
RUN_TIMEOUT_S = 300.0
START_ATTEMPTS = 3
GOAL_RATIO = 2.0
#: A run's parts, between the events its record holds (each stamped by the kernel's clock).
PHASES = (
    "cell sent -> run started",
    "run started -> request 1",
    "model turn 1 (request -> reply)",
    "the tool, then request 2",
    "model turn 2 (request -> reply)",
    "reply -> run finished",
    "run finished -> cell replied",
)


# --------------------------------------------------------------------------- the model


class ClassModel(OpenAIStubServer):
    """The class's model: a call of `read_file` on notes.txt, then (after the tool's result) the answer, each
    streamed over 0.5-1.5 s. Replies are chosen by the conversation, not queued, as requests of 30 kernels
    arrive in any order."""

    def __init__(self, seed: int) -> None:
        self._random = random.Random(seed)
        self._asking = threading.local()  # the request this handler thread answers
        self.served: list[tuple[float, float]] = []  # each answer's start and end (perf_counter)
        super().__init__()
        # socketserver listens with a backlog of 5: the proxy's burst of connections (a stream closes its
        # own) would overflow it, and each connection dropped there waits a second for TCP to try again.
        self._server.socket.listen(256)

    def respond(self, handler: StubHandler, body: dict[str, Any]) -> None:
        self._asking.body = body
        started = time.perf_counter()
        super().respond(handler, body)
        with self._lock:
            self.served.append((started, time.perf_counter()))

    def turns(self, since: float) -> list[tuple[float, float]]:
        with self._lock:
            return [(start, end) for start, end in self.served if start >= since]

    def next_reply(self) -> Reply | None:
        messages = self._asking.body.get("messages") or []
        if messages and messages[-1].get("role") == "tool":
            reply = Reply.text(ANSWER)
        else:
            reply = Reply.calls(("read_file", {"path": "notes.txt"}), content="Let me read your notes.")
        with self._lock:
            seconds = self._random.uniform(0.5, 1.5)
        return reply.with_(delay=seconds / (_parts(reply) - 1))


def _parts(reply: Reply) -> int:
    """How many pieces the server streams `reply` in (role, text, each call's head and fragments, finish,
    usage, [DONE]), so a turn's delay can be spread over them."""
    text = math.ceil(len(reply.content or "") / 5)
    calls = sum(1 + math.ceil(len(json.dumps(args)) / 4) for _, args in reply.tool_calls)
    return 4 + text + calls


# --------------------------------------------------------------------------- the proxy


@dataclass
class Proxy:
    proc: subprocess.Popen[bytes]
    url: str
    log: Path

    def statuses(self, since: int = 0) -> list[int]:
        """The HTTP status of each chat completion in the proxy's access log, from byte `since`."""
        with self.log.open("rb") as f:
            f.seek(since)
            text = f.read().decode(errors="replace")
        return [int(s) for s in re.findall(r'"POST /chat/completions HTTP/1\.1" (\d{3})', text)]

    def log_size(self) -> int:
        return self.log.stat().st_size


def litellm_binary() -> Path | None:
    for root in dict.fromkeys((ROOT, VENVS)):
        if (found := root / ".venv-proxy" / "bin" / "litellm").exists():
            return found
    return None


@contextmanager
def litellm_proxy(litellm: Path, model_url: str, folder: Path, limit: int) -> Iterator[Proxy]:
    """The proxy, serving the class model with `limit` requests in flight at most; stopped on leaving."""
    upstream = f'model: openai/{MODEL}, api_base: "{model_url}", api_key: sk-upstream'
    config = folder / "litellm_config.yaml"
    config.write_text(
        f"model_list:\n  - model_name: {MODEL}\n    litellm_params: {{{upstream}}}\n"
        f"general_settings: {{master_key: {MASTER}, global_max_parallel_requests: {limit}}}\n"
    )
    port = quiet_port()
    env = {
        **os.environ,
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # no download of the price list
        "LITELLM_TELEMETRY": "False",
        "LEGACY_MULTI_INSTANCE_RATE_LIMITING": "true",  # the limiter that enforces the proxy-wide limit
    }
    env.pop("DATABASE_URL", None)
    log = folder / "litellm.log"
    with log.open("wb") as out:
        proc = subprocess.Popen(
            [str(litellm), "--config", str(config), "--host", "127.0.0.1", "--port", str(port)],
            stdout=out,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=folder,
        )
    try:
        yield Proxy(proc, f"http://127.0.0.1:{port}", log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def quiet_port() -> int:
    """A free port below the ephemeral range: the proxy binds it only after its long import, while the
    kernels' ports and every client connection are drawn from the ephemeral range (and could take it)."""
    for port in random.sample(range(20000, 32000), 200):
        with socket.socket() as sock:
            try:
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError("no free port between 20000 and 32000")


def proxy_failure(log: Path) -> str:
    """What the proxy's log says went wrong: its first error lines, then its end."""
    lines = log.read_text(errors="replace").splitlines()
    errors = [line for line in lines if "rror" in line][:10]
    return "\n".join([*errors, "...", *lines[-25:]])


def wait_until_up(proxy: Proxy) -> float:
    """Seconds until the proxy answers; raises with its log's tail if it exits or does not answer."""
    started = time.monotonic()
    while True:
        if proxy.proc.poll() is not None:
            raise RuntimeError(f"the LiteLLM proxy exited:\n{proxy_failure(proxy.log)}")
        try:
            with urllib.request.urlopen(f"{proxy.url}/health/liveliness", timeout=2):
                return time.monotonic() - started
        except OSError:
            if time.monotonic() - started > PROXY_START_S:
                said = proxy_failure(proxy.log)
                raise RuntimeError(
                    f"the LiteLLM proxy did not start in {PROXY_START_S:g} s:\n{said}"
                ) from None
            time.sleep(0.5)


# --------------------------------------------------------------------------- the kernels


@dataclass
class Student:
    name: str
    folder: Path
    fe: FrontEnd | None = None
    sent: float = 0.0
    took: float | None = None  # the run's time, once its cell replied
    status: str = ""  # the run's status, from its record (or the cell's failure)
    busy: int = 0  # busy notices its cell showed
    problem: str = ""
    phases: dict[str, float] = field(default_factory=dict)  # where the run's time went (PHASES)


@dataclass
class Kernels:
    """Every kernel started, so each is shut down however the benchmark ends."""

    kernel_dirs: Path
    started: list[FrontEnd] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    restarts: int = 0  # kernels that died at start and were started again

    def start(self, folder: Path, env: dict[str, str]) -> FrontEnd:
        for attempt in range(START_ATTEMPTS):
            try:
                fe = FrontEnd("ipk7", self.kernel_dirs, folder, env)
            except RuntimeError as exc:  # "Kernel died before replying to kernel_info"
                # jupyter_client picks a kernel's five ports and the kernel binds them later, so with many
                # kernels starting at once one of them may already be taken ("Address already in use").
                if "died" not in str(exc) or attempt == START_ATTEMPTS - 1:
                    raise
                with self.lock:
                    self.restarts += 1
                continue
            with self.lock:
                self.started.append(fe)
            return fe
        raise AssertionError("unreachable")

    def stop(self, fe: FrontEnd) -> None:
        with self.lock:
            if fe in self.started:
                self.started.remove(fe)
        with suppress(Exception):
            fe.close()

    def stop_all(self) -> None:
        while self.started:
            self.stop(self.started[-1])


def quiet_kernelspecs(folder: Path) -> Path:
    """The tests' kernel specs, each kernel logging errors only (not 34 times its warning about TCP)."""
    kernel_dirs = write_kernelspecs(folder)
    spec = kernel_dirs / "architect-ipk7" / "kernel.json"
    data = json.loads(spec.read_text())
    data["argv"].append("--IPKernelApp.log_level=ERROR")
    spec.write_text(json.dumps(data))
    return kernel_dirs


def student_env(proxy_url: str, folder: Path) -> dict[str, str]:
    """What a hub's `c.Spawner.environment` gives a student; the warm-up is left on, as users have it."""
    env = kernel_env(
        {
            "ARCHITECT_MODEL": f"litellm_proxy/{MODEL}",
            "LITELLM_PROXY_API_BASE": proxy_url,
            "LITELLM_PROXY_API_KEY": MASTER,
            "XDG_STATE_HOME": str(folder / "state"),  # each student's own checkpoints and threads
        }
    )
    env.pop("ARCHITECT_WARMUP", None)
    return env


def make_student(root: Path, name: str) -> Student:
    folder = root / name
    folder.mkdir()
    (folder / "notes.txt").write_text(NOTES)
    return Student(name, folder)


def start_kernels(kernels: Kernels, students: list[Student], proxy_url: str) -> None:
    """Start the students' kernels, a few at a time (each start is a second of CPU)."""

    def start(student: Student) -> None:
        student.fe = kernels.start(student.folder, student_env(proxy_url, student.folder))

    pool = ThreadPoolExecutor(max_workers=4)
    try:
        for done in [pool.submit(start, s) for s in students]:
            done.result()
    finally:  # interrupted: the kernels not started yet never start, those starting are stopped after
        pool.shutdown(wait=True, cancel_futures=True)


def run_everywhere(fes: list[FrontEnd], code: str, timeout: float) -> None:
    """Run `code` in every kernel at once and wait for all of them."""
    cells = [fe.execute(code) for fe in fes]
    pump_until(fes, lambda: all(c.finished for c in cells), timeout)
    failed = [c for c in cells if c.status != "ok"]
    if failed:
        raise RuntimeError(f"{len(failed)} kernel(s) failed {code!r}: {failed[0].text()[-1500:]}")


def pump_until(fes: list[FrontEnd], done: Any, timeout: float) -> bool:
    """Handle every kernel's messages as they come (one poll over all their sockets) until `done()`."""
    poller = zmq.Poller()
    owner: dict[Any, FrontEnd] = {}
    for fe in fes:
        for channel in (fe.kc.iopub_channel, fe.kc.shell_channel):
            sock = channel.socket
            poller.register(sock, zmq.POLLIN)
            owner[sock] = fe
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            return False
        for sock, _ in poller.poll(100):
            owner[sock].pump(wait=0)
    return True


def settle(most_busy: float = 15.0, seconds: float = 20.0) -> None:
    """Wait until the machine is nearly idle (the warm-ups and starts done), at most `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and psutil.cpu_percent(interval=1.0) > most_busy:
        pass


def run_class(students: list[Student], timeout: float, arrivals: float = 0.0, seed: int = 0) -> float:
    """Send every student's cell, all at once or at random moments over `arrivals` seconds (a class does not
    press Run within one instant); wait for all. Returns the wall time of the whole burst."""
    fes = [s.fe for s in students if s.fe is not None]
    started = time.perf_counter()
    moments = random.Random(seed)  # one generator: a new one per student gave every student the same moment
    offsets = sorted(moments.uniform(0, arrivals) for _ in students) if arrivals > 0 else []
    cells = []
    for n, student in enumerate(students):
        assert student.fe is not None
        if offsets:  # keep the front ends answered while the next student is not there yet
            due = started + offsets[n]
            pump_until(fes, lambda due=due: time.perf_counter() >= due, arrivals + 1)
        student.sent = time.perf_counter()
        cells.append(student.fe.execute(TASK))
    pump_until(fes, lambda: all(c.finished for c in cells), timeout)
    for student, cell in zip(students, cells, strict=True):
        read_run(student, cell)
    return time.perf_counter() - started


def read_run(student: Student, cell: Any) -> None:
    """The run's time, its status and its busy notices, from the cell's reply and run record."""
    if cell.reply_at is None:
        student.status, student.problem = "unfinished", f"no reply in {RUN_TIMEOUT_S:g} s"
        return
    student.took = cell.reply_at - student.sent
    records = cell.data(RUN_MIME_TYPE)
    events = records[-1].get("events", []) if records else []
    student.phases = phases(events, student.sent + WALL, cell.reply_at + WALL)
    finished = [e for e in events if e.get("kind") == "run_finished"]
    student.busy = sum(1 for e in events if e.get("kind") == "warning" and BUSY in str(e.get("message")))
    student.status = str(finished[-1].get("status")) if finished else f"cell {cell.status}"
    if cell.status != "ok" or student.status != "success" or ANSWER not in str(finished[-1:]):
        student.problem = (str(finished[-1].get("message")) if finished else cell.text())[-400:]


WALL = time.time() - time.perf_counter()  # from this process's perf_counter to the kernels' clock


def phases(events: list[dict[str, Any]], sent: float, replied: float) -> dict[str, float]:
    """The seconds of each of PHASES in a run of two model turns (empty for another run)."""
    at: dict[str, list[float]] = {}
    for event in events:
        at.setdefault(str(event.get("kind")), []).append(float(event.get("at") or 0.0))
    requests, replies = at.get("model_request", []), at.get("cost", [])  # `cost` follows each model reply
    if len(requests) != 2 or len(replies) != 2 or "run_started" not in at or "run_finished" not in at:
        return {}
    marks = [sent, at["run_started"][0], requests[0], replies[0], requests[1], replies[1]]
    marks += [at["run_finished"][-1], replied]
    return {name: end - start for name, start, end in zip(PHASES, marks, marks[1:], strict=False)}


# --------------------------------------------------------------------------- memory


def kernel_pid(fe: FrontEnd) -> int:
    return int(fe.km.provisioner.process.pid)  # type: ignore[union-attr]


def memory_mb(pid: int, children: bool = False) -> tuple[float, float]:
    """RSS and USS in MB of process `pid` (and its children)."""
    root = psutil.Process(pid)
    procs = [root, *root.children(recursive=True)] if children else [root]
    rss = uss = 0.0
    for proc in procs:
        with suppress(psutil.Error):
            info = proc.memory_full_info()
            rss, uss = rss + info.rss, uss + info.uss
    return rss / 2**20, uss / 2**20


def cpu_seconds(pids: list[int]) -> float:
    """User and system CPU seconds these processes used (not children: the kernels are this script's)."""
    total = 0.0
    for pid in pids:
        with suppress(psutil.Error):
            times = psutil.Process(pid).cpu_times()
            total += times.user + times.system
    return total


# --------------------------------------------------------------------------- the report


def restarted(count: int) -> str:
    return f" ({count} started again: a port taken between choosing it and binding it)" if count else ""


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, math.ceil(share * len(ordered)) - 1))]


def own_time(turns: list[tuple[float, float]]) -> float:
    return statistics.median(end - start for start, end in turns) if turns else math.nan


def at_once(turns: list[tuple[float, float]]) -> int:
    """The most answers the model was streaming at one time."""
    edges = sorted([(start, 1) for start, _ in turns] + [(end, -1) for _, end in turns])
    most = now = 0
    for _, step in edges:
        now += step
        most = max(most, now)
    return most


def row(label: str, alone: object, together: object) -> None:
    print(f"{label:36}{alone!s:>18}{together!s:>18}")


def report(
    args: argparse.Namespace, facts: dict[str, Any], solo: list[Student], pupils: list[Student]
) -> None:
    solo_times = [s.took for s in solo if s.took is not None]
    times = [s.took for s in pupils if s.took is not None]
    done = [s for s in pupils if s.status == "success" and not s.problem]
    errors = [s for s in pupils if s.problem]
    alone = statistics.median(solo_times)
    p50, p95 = percentile(times, 0.5), percentile(times, 0.95)
    limited = sum(1 for s in facts["class_statuses"] if s == 429)
    busy = sum(s.busy for s in pupils)
    plain_rss, plain_uss = facts["plain"]
    rss = statistics.median(r for r, _ in facts["kernels"])
    uss = statistics.median(u for _, u in facts["kernels"])
    idle, after = facts["proxy_idle"], facts["proxy_after"]
    print(
        f"A class of {len(pupils)} on one node ({os.cpu_count()} cores): one %%architect cell each (2 model "
        f"turns, 1 tool call) through a LiteLLM proxy allowing {args.limit} requests in flight"
        + (
            f"; the cells sent at random moments over {args.arrivals:g} s"
            if args.arrivals > 0
            else "; every cell sent at the same moment"
        )
    )
    print(
        f"setup: {len(pupils) + len(solo) + 1} kernels started in {facts['kernels_up']:.0f} s"
        f"{restarted(facts['restarts'])}, the proxy up "
        f"after {facts['proxy_up']:.0f} s, %load_ext and warm-up in {facts['loaded']:.0f} s; "
        f"the class's burst took {facts['burst']:.1f} s"
    )
    print()
    row("", f"alone (x{len(solo)})", "the class")
    row("runs finished / errors", f"{len(solo_times)} / 0", f"{len(done)} / {len(errors)}")
    row("run time p50 (s)", f"{alone:.2f}", f"{p50:.2f}")
    row("run time p95 (s)", f"{max(solo_times):.2f}", f"{p95:.2f}")
    row("run time max (s)", f"{max(solo_times):.2f}", f"{max(times, default=math.nan):.2f}")
    row("p95 / one student alone (p50)", "", f"{p95 / alone:.2f}x")
    row("429s the proxy gave", facts["solo_429"], limited)
    row("busy retries the cells reported", sum(s.busy for s in solo), busy)
    row("cells that waited for the gateway", "", sum(1 for s in pupils if s.busy))
    print()
    row("where a run's time goes (median s)", "alone", "the class")
    for name in PHASES:
        mine = [s.phases[name] for s in solo if s.phases]
        theirs = [s.phases[name] for s in pupils if s.phases]
        if mine and theirs:
            row(f"  {name}", f"{statistics.median(mine):.2f}", f"{statistics.median(theirs):.2f}")
    mine, theirs = facts["model_solo"], facts["model_class"]
    row("  of a turn, at the model itself", f"{own_time(mine):.2f}", f"{own_time(theirs):.2f}")
    row("most requests at the model at once", at_once(mine), at_once(theirs))
    print()
    cores = os.cpu_count() or 1
    used = sum(facts["cpu"].values())
    burst = facts["burst"]
    print(f"CPU during the class's burst ({burst:.1f} s on {cores} cores, {cores * burst:.0f} s of CPU):")
    for who, seconds in facts["cpu"].items():
        print(f"  {who:34}{seconds:>6.1f} s")
    print(f"  {'all of them':34}{used:>6.1f} s ({used / (cores * facts['burst']):.0%} of the cores)")
    print()
    row("memory (MB)", "RSS", "USS")
    row("plain kernel, just started", f"{plain_rss:.0f}", f"{plain_uss:.0f}")
    row("kernel that ran the cell (median)", f"{rss:.0f}", f"{uss:.0f}")
    row("  added per student", f"{rss - plain_rss:+.0f}", f"{uss - plain_uss:+.0f}")
    n = len(pupils)
    row(f"  added for {n} students", f"{n * (rss - plain_rss):+.0f}", f"{n * (uss - plain_uss):+.0f}")
    row("the proxy, idle", f"{idle[0]:.0f}", f"{idle[1]:.0f}")
    row("the proxy, after the class", f"{after[0]:.0f}", f"{after[1]:.0f}")
    print()
    every = len(done) == len(pupils)
    print(f"goal: every run finishes: {'met' if every else 'NOT met'} ({len(done)} of {len(pupils)})")
    print(f"goal: 0 errors: {'met' if not errors else 'NOT met'} ({len(errors)})")
    ok = p95 <= GOAL_RATIO * alone
    print(f"goal: p95 within {GOAL_RATIO:g}x one student: {'met' if ok else 'NOT met'} ({p95 / alone:.2f}x)")
    if not limited:
        print("note: the proxy gave no 429, so the busy path was not exercised; lower --limit")
    if limited != busy:
        print(f"note: {limited} 429s against {busy} busy notices: each 429 should have had its notice")
    for student in errors[:3]:
        print(f"error in {student.name} ({student.status}): {student.problem}")


# --------------------------------------------------------------------------- main


def stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # the same clean-up as Ctrl-C


def arguments() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n", 1)[0])
    parser.add_argument("--students", type=int, default=30)
    parser.add_argument("--limit", type=int, default=16, help="requests in flight the proxy allows")
    parser.add_argument("--solo", type=int, default=5, help="runs of one student alone (fresh kernels)")
    parser.add_argument("--seed", type=int, default=48)
    parser.add_argument(
        "--arrivals",
        type=float,
        default=5.0,
        help="send the class's cells at random moments over this many seconds (0: all at once)",
    )
    return parser.parse_args()


def start_everything(
    args: argparse.Namespace, kernels: Kernels, proxy: Proxy, root: Path, facts: dict[str, Any]
) -> tuple[list[Student], list[Student]]:
    """The plain kernel (measured, then stopped), the students' kernels with the extension loaded and warmed
    up, and the proxy. Returns the students alone and the class."""
    started = time.monotonic()
    plain = make_student(root, "plain")
    solo = [make_student(root, f"alone-{n}") for n in range(args.solo)]
    pupils = [make_student(root, f"student-{n:02}") for n in range(args.students)]
    # The kernels start while the proxy imports (both take a while); the plain one has no gateway.
    plain.fe = kernels.start(plain.folder, kernel_env())
    start_kernels(kernels, [*solo, *pupils], proxy.url)
    facts["kernels_up"] = time.monotonic() - started
    facts["restarts"] = kernels.restarts
    wait_until_up(proxy)
    facts["proxy_up"] = time.monotonic() - started
    plain.fe.run("1 + 1")
    facts["plain"] = memory_mb(kernel_pid(plain.fe))
    kernels.stop(plain.fe)
    started = time.monotonic()
    learners = [s.fe for s in (*solo, *pupils) if s.fe is not None]
    run_everywhere(learners, "%load_ext architect_nb", 180)
    run_everywhere(learners, JOIN_WARM_UP, 180)
    facts["loaded"] = time.monotonic() - started
    settle()
    facts["proxy_idle"] = memory_mb(proxy.proc.pid, children=True)
    return solo, pupils


def one_student_alone(
    solo: list[Student], kernels: Kernels, proxy: Proxy, model: ClassModel, facts: dict[str, Any]
) -> None:
    """Each student alone runs the cell (the class's kernels idle), then their kernel stops."""
    before, since = proxy.log_size(), time.perf_counter()
    for student in solo:
        assert student.fe is not None
        student.sent = time.perf_counter()
        cell = student.fe.execute(TASK)
        pump_until([student.fe], lambda c=cell: bool(c.finished), RUN_TIMEOUT_S)
        read_run(student, cell)
        kernels.stop(student.fe)
    facts["solo_429"] = sum(1 for s in proxy.statuses(before) if s == 429)
    facts["model_solo"] = model.turns(since)
    if bad := next((s for s in solo if s.problem), None):
        raise RuntimeError(f"one student alone failed ({bad.status}): {bad.problem}")


def the_class(pupils: list[Student], proxy: Proxy, model: ClassModel, facts: dict[str, Any]) -> None:
    """The whole class's cells at once: times, the CPU each part used, what the proxy said, memory."""
    settle()
    before, since = proxy.log_size(), time.perf_counter()
    whose = {"the proxy": [proxy.proc.pid], "the kernels": [kernel_pid(s.fe) for s in pupils if s.fe]}
    whose["this script (model, front ends)"] = [os.getpid()]
    cpu_before = {who: cpu_seconds(pids) for who, pids in whose.items()}
    facts["burst"] = run_class(pupils, RUN_TIMEOUT_S, facts["arrivals"], facts["seed"])
    facts["cpu"] = {who: cpu_seconds(pids) - cpu_before[who] for who, pids in whose.items()}
    time.sleep(0.5)  # the proxy's access log lines of the last requests
    facts["class_statuses"] = proxy.statuses(before)
    facts["model_class"] = model.turns(since)
    facts["kernels"] = [memory_mb(kernel_pid(s.fe)) for s in pupils if s.fe is not None]
    facts["proxy_after"] = memory_mb(proxy.proc.pid, children=True)


def main() -> int:
    args = arguments()
    litellm = litellm_binary()
    if litellm is None:
        print("skipped: the classroom benchmark needs the LiteLLM proxy's venv: run `make setup-proxy`")
        return 0
    signal.signal(signal.SIGTERM, stop_on_sigterm)
    facts: dict[str, Any] = {"arrivals": args.arrivals, "seed": args.seed}
    # Left in reverse order however it ends: the kernels, then the proxy, the model, the folder.
    with tempfile.TemporaryDirectory() as folder, ClassModel(args.seed) as model, ExitStack() as stack:
        root = Path(folder)
        proxy = stack.enter_context(litellm_proxy(litellm, model.url, root, args.limit))
        kernels = Kernels(quiet_kernelspecs(root / "jupyter"))
        stack.callback(kernels.stop_all)
        solo, pupils = start_everything(args, kernels, proxy, root, facts)
        one_student_alone(solo, kernels, proxy, model, facts)
        the_class(pupils, proxy, model, facts)
    report(args, facts, solo, pupils)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except KeyboardInterrupt:
        print("interrupted: every kernel and the proxy were stopped", file=sys.stderr)
        sys.exit(130)
