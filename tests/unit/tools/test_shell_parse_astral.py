"""Characters outside the Basic Multilingual Plane after a `{` crashed tree-sitter-bash 0.25.1 (an
out-of-bounds read that killed the process: the person's kernel). The parse now sees stand-ins of the same
byte length, and the words keep the script's own characters."""

from __future__ import annotations

import subprocess
import sys

from architect_nb.tools.commands.classifier import classify_command
from architect_nb.tools.commands.shell_parse import parse_command

CRASHERS = ["{\U000e0000", "{\U0010ffff}", "{\U00080000 x", "echo {\U000d6963", "a{\U0001f600,b}"]


def test_commands_that_crashed_the_grammar_are_classified_in_a_process_that_lives() -> None:
    # A fresh process: a crash here fails this test instead of killing the test worker. Each is parsed
    # afresh many times, since the out-of-bounds read crashed only some of the time.
    code = (
        "import sys\n"
        "from architect_nb.tools.commands.shell_parse import clear_parse_cache, parse_command\n"
        "from architect_nb.tools.commands.classifier import classify_command\n"
        f"for command in {CRASHERS!r}:\n"
        "    for _ in range(300):\n"
        "        clear_parse_cache()\n"
        "        parse_command(command)\n"
        "    print(classify_command(command).sensitivity)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    # Unknown programs are never "safe"; echo is.
    assert done.stdout.split() == ["dangerous", "dangerous", "dangerous", "safe", "dangerous"]


def test_words_keep_the_characters_outside_the_bmp_as_written() -> None:
    [command] = parse_command("cat 'n\U0001f600tes.md' {\U0001d400,b}.txt").commands
    assert [w.text for w in command.words] == ["cat", "'n\U0001f600tes.md'", "{\U0001d400,b}.txt"]
    assert command.words[1].value == "n\U0001f600tes.md"
    assert classify_command("cat 'n\U0001f600tes.md'").sensitivity == "safe"
