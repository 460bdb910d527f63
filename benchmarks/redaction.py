"""What redaction costs: a 1 MB tool result with 20 secrets configured (goal: under 5 ms).

The text is a realistic command output (log and code lines) with no secret in it, the common case, and the
same text with every secret planted raw, escaped and broken across a line end. Compared side by side with
one `re.sub` over an alternation of the raw values (the simplest correct approach for raw values alone) and
with the same redactor searching the whole text form by form (`prefilter=False`, what it did before its
Aho-Corasick pass). Also a text with non-ASCII characters, whose indexes cost more to map.
Run: `.venv/bin/python benchmarks/redaction.py`.
"""

from __future__ import annotations

import json
import random
import re
import statistics
import string
import time

from architect_nb.redaction import Redactor

GOAL_MS = 5.0


def secrets(n: int = 20) -> dict[str, str]:
    rng = random.Random(7)
    alphabet = string.ascii_letters + string.digits
    found = {f"SERVICE_{i}_API_KEY": "".join(rng.choices(alphabet, k=32 + i)) for i in range(n - 2)}
    found["DB_PASSWORD"] = 'p@ss"wo\\rd x&y'
    found["DEPLOY_PRIVATE_KEY"] = (
        "-----BEGIN RSA PRIVATE KEY-----\nMIIE" + "A" * 60 + "\n-----END RSA PRIVATE KEY-----"
    )
    return found


def output(size: int = 1_000_000) -> str:
    rng = random.Random(3)
    lines = [
        "2026-12-01 12:00:{:02d} INFO request /api/items/{} took {} ms",
        "    def handler_{}(request):  # line {}",
        "tests/test_module_{}.py::test_case_{} PASSED [{}%]",
        '{{"id": {}, "name": "item-{}", "price": {}.99}}',
    ]
    out: list[str] = []
    total = 0
    while total < size:
        line = rng.choice(lines).format(rng.randrange(60), rng.randrange(10**6), rng.randrange(100))
        out.append(line)
        total += len(line) + 1
    return "\n".join(out)[:size]


def median_ms(work, runs: int = 15) -> float:  # type: ignore[no-untyped-def]
    samples = []
    for _ in range(runs):
        started = time.perf_counter()
        work()
        samples.append((time.perf_counter() - started) * 1000)
    return statistics.median(samples)


def main() -> None:
    table = secrets()
    redactor, whole = Redactor(table), Redactor(table, prefilter=False)
    clean = output()
    planted = clean
    for n, value in enumerate(table.values()):
        at = len(planted) * n // len(table)
        variant = (value, json.dumps(value)[1:-1], value[:10] + "\n" + value[10:])[n % 3]
        planted = planted[:at] + " " + variant + " " + planted[at:]
    assert not any(v in redactor.redact(planted) for v in table.values())
    naive = re.compile("|".join(re.escape(v) for v in sorted(table.values(), key=len, reverse=True)))
    accented = clean.replace("item-", "itém-")
    cases = (("no secret in it", clean), ("20 secrets planted", planted), ("non-ASCII, no secret", accented))
    for label, text in cases:
        assert redactor.redact(text) == whole.redact(text)
        ours = median_ms(lambda text=text: redactor.redact(text))
        searched = median_ms(lambda text=text: whole.redact(text), runs=5)
        alternation = median_ms(lambda text=text: naive.sub("[REDACTED]", text), runs=5)
        print(
            f"1 MB, {label}: redact {ours:.2f} ms (goal under {GOAL_MS:g} ms); "
            f"whole-text search {searched:.2f} ms ({ours / searched:.2f}x); "
            f"one re.sub of the raw values {alternation:.2f} ms ({ours / alternation:.2f}x)"
        )


if __name__ == "__main__":
    main()
