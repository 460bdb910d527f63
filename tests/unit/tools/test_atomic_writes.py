"""A file being rewritten shows a reader the old content or the new one, never a torn mix, and a writer killed
at any moment leaves one of the two."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

SIZE = 4_000_000
STATES = {b"A" * SIZE: "A", b"B" * SIZE: "B"}

# Writes the letters it is sent, one write each, saying when each is done; after "run" it writes A and B in
# turn until it is killed.
WRITER = """
import sys
from pathlib import Path
import pytest

from architect_nb.tools.filesystem.file_tools import WriteFileTool

# Slow, left out of `make test-unit`: writers are killed mid-write in real processes while readers watch.
pytestmark = pytest.mark.slow

tool = WriteFileTool(Path(sys.argv[1]))
size = int(sys.argv[2])
print("ready", flush=True)
for line in sys.stdin:
    order = line.strip()
    if order == "run":
        break
    tool.execute(path="data.txt", content=order * size)
    print(order, flush=True)
i = 0
while True:
    tool.execute(path="data.txt", content="AB"[i % 2] * size)
    i += 1
"""


class Reader(threading.Thread):
    """Reads the file over and over; keeps the states it saw and anything else it read."""

    def __init__(self, target: Path) -> None:
        super().__init__(daemon=True)
        self.target = target
        self.done = threading.Event()
        self.seen: set[str] = set()
        self.last = ""
        self.reads = 0
        self.torn: list[str] = []

    def run(self) -> None:
        while not self.done.is_set():
            try:
                data = self.target.read_bytes()
            except OSError as exc:
                self.torn.append(f"unreadable: {exc}")
                continue
            self.reads += 1
            state = STATES.get(data)
            if state is None:
                self.torn.append(f"{len(data)} bytes, starting {data[:1]!r}, ending {data[-1:]!r}")
            else:
                self.seen.add(state)
                self.last = state

    def wait_to_see(self, state: str, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while self.last != state:
            assert time.monotonic() < deadline, f"the reader never saw {state}: {self.torn[:3]}"
            time.sleep(0.005)


def test_readers_and_killed_writers_never_see_a_torn_file(workspace: Path) -> None:
    target = workspace / "data.txt"
    target.write_bytes(b"A" * SIZE)
    for delay in (0.05, 0.11, 0.17, 0.23, 0.31, 0.43):
        reader = Reader(target)
        reader.start()
        proc = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(workspace), str(SIZE)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert proc.stdin is not None and proc.stdout is not None
        try:
            assert proc.stdout.readline() == "ready\n"
            # Both states certainly happen while the reader reads: each write is ordered, changes the
            # content, and the next one waits until the reader has seen it.
            for letter in "BA" if target.read_bytes()[:1] == b"A" else "AB":
                proc.stdin.write(f"{letter}\n")
                proc.stdin.flush()
                assert proc.stdout.readline() == f"{letter}\n"
                reader.wait_to_see(letter)
            proc.stdin.write("run\n")
            proc.stdin.flush()
            time.sleep(delay)
        finally:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
            proc.stdin.close()
            proc.stdout.close()
            reader.done.set()
            reader.join()
        assert reader.torn == [], f"the reader saw torn content after a kill at {delay}s: {reader.torn[:3]}"
        assert reader.seen == {"A", "B"} and reader.reads > 2
        assert target.read_bytes() in STATES
    leftovers = [p.name for p in workspace.iterdir() if p.name != "data.txt"]
    # A kill between mkstemp and os.replace can leave a hidden temp file, but never touches data.txt.
    assert all(name.startswith(".data.txt.") and name.endswith(".architect-tmp") for name in leftovers)
