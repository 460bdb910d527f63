"""The read-only programs: printers, file readers, searchers and listers, each `safe` unless the check says
an option writes or runs something (`sort -o`, `find -delete`, `rg --pre`)."""

from __future__ import annotations

from dataclasses import replace

from architect_nb.tools.commands import checks, wrappers
from architect_nb.tools.commands.programs import walks, writes
from architect_nb.tools.commands.programs.model import ProgramModel, Spec, alike, frozen

__all__ = ["GREP_LONG", "MODELS"]


GREP_LONG = frozen("--regexp", "--file", "--max-count", "--after-context", "--before-context")
_RG_LONG = frozen(
    "--regexp", "--file", "--glob", "--iglob", "--type", "--type-not", "--max-count", "--context",
    "--after-context", "--before-context", "--threads", "--max-depth", "--encoding", "--replace", "--sort",
    "--sortr", "--max-columns", "--max-filesize", "--pre", "--pre-glob", "--ignore-file", "--type-add",
    "--engine", "--color", "--colors", "--path-separator", "--context-separator", "--field-match-separator",
)  # fmt: skip
_LESS_OK = frozen("-N", "-S", "-R", "-r", "-i", "-I", "-F", "-X", "-n", "--no-init", "--quit-if-one-screen")


def _safe(*names: str) -> list[ProgramModel]:
    """Programs that read and print, whatever their arguments."""
    return [ProgramModel(name=n, kind="safe") for n in names]


def _no_files(*names: str) -> list[ProgramModel]:
    """Safe programs that open no file named in their arguments (`which`, `sleep`, `uname`)."""
    return [ProgramModel(name=n, kind="safe", opens_no_files=True) for n in names]


def _printers(*names: str) -> list[ProgramModel]:
    """Safe programs that only print their arguments (and show no file's contents)."""
    return [
        ProgramModel(name=n, kind="safe", printer=True, names_only=True, opens_no_files=True) for n in names
    ]


_GREP = ProgramModel(
    name="grep",
    kind="safe",
    options=Spec("efmABCdD", GREP_LONG | frozen("--directories", "--devices", "--label")),
    searches_trees=True,
    reads=walks.grep_reads,
    lists=walks.grep_lists,
    pattern_first=True,
    value_options=frozen("-e", "--regexp"),
)

MODELS: list[ProgramModel] = [
    *_safe("cat", "head", "tail", "df", "nl", "tac", "cmp", "comm", "md5sum", "sha1sum", "sha256sum"),
    *_safe("sha512sum", "cksum", "b2sum", "fold", "expand", "unexpand", "join", "od", "hexdump", "strings"),
    ProgramModel(name="cd", kind="safe", moves_shell=True),
    ProgramModel(name="pushd", moves_shell=True),  # not called safe: only its move is modelled
    *_no_files("pwd", "which", "whereis", "type", "uname", "whoami", "id", "nproc", "uptime", "free", "seq"),
    *_no_files("sleep", "locale", "arch", "tty", "groups"),
    ProgramModel(name="cut", kind="safe", value_options=frozen("-d", "--delimiter")),
    ProgramModel(name="paste", kind="safe", value_options=frozen("-d", "--delimiters")),
    ProgramModel(
        name="column", kind="safe", value_options=frozen("-s", "-o", "--separator", "--output-separator")
    ),
    *(replace(model, echoes=True) for model in _printers("echo")),
    *(replace(model, echoes=True, check=checks.check_printf) for model in _printers("printf")),
    *_printers("test", "[", "basename", "dirname"),
    ProgramModel(name="true", kind="safe", printer=True, opens_no_files=True),
    ProgramModel(name="false", kind="safe", printer=True, opens_no_files=True),
    ProgramModel(
        name="ls",
        kind="safe",
        names_only=True,
        options=Spec("IwT", frozen("--ignore", "--hide", "--width")),
        lists=walks.ls_lists,
    ),
    *(
        ProgramModel(name=n, kind="safe", names_only=True)
        for n in ("stat", "du", "realpath", "readlink", "wc")
    ),
    ProgramModel(
        name="diff",
        kind="safe",
        options=Spec("xXIUCWSFLD", frozen("--exclude", "--exclude-from", "--label", "--from-file")),
        searches_trees=True,
        reads=walks.diff_reads,
    ),
    ProgramModel(name="base64", kind="safe", decodes=frozen("-d", "--decode", "-D", "-di", "-id")),
    ProgramModel(name="rev", kind="safe", decodes=True),
    ProgramModel(name="tr", kind="safe", decodes=True, opens_no_files=True),
    ProgramModel(name="tree", kind="safe", check=checks.forbid("-o", reason="tree -o writes a file")),
    ProgramModel(
        name="file",
        kind="safe",
        check=checks.forbid("-C", "--compile", reason="file -C writes a compiled magic file"),
    ),
    ProgramModel(
        name="date",
        kind="safe",
        check=checks.forbid("-s", "--set", reason="date -s sets the system clock"),
        opens_no_files=True,
    ),
    ProgramModel(
        name="hostname",
        kind="safe",
        check=checks.only(frozen("-I", "-i", "-f", "-s", "-d", "-A", "--fqdn", "--short"), "hostname"),
        opens_no_files=True,
    ),
    ProgramModel(name="less", kind="safe", check=checks.options_only(_LESS_OK)),
    ProgramModel(name="more", kind="safe", check=checks.options_only(frozenset())),
    ProgramModel(
        name="man",
        kind="safe",
        check=checks.options_only(frozen("-k", "-f", "-w")),
        opens_no_files=True,
    ),
    ProgramModel(name="ps", kind="safe", check=checks.check_ps, opens_no_files=True),
    ProgramModel(
        name="jq",
        kind="safe",
        check=checks.check_jq,
        pattern_first=True,
        value_options=frozen("--arg", "--argjson"),
    ),
    ProgramModel(name="yq", options=Spec("", frozen("--indent", "--arg", "--argjson"))),
    ProgramModel(
        name="sort",
        kind="safe",
        check=checks.check_sort,
        options=Spec(
            "kotTS",
            frozen("--key", "--output", "--field-separator", "--temporary-directory", "--buffer-size"),
        ),
        writes=writes.option_targets("writes", ("-o", "--output")),
        value_options=frozen("-t", "--field-separator"),
    ),
    ProgramModel(
        name="shuf",
        options=Spec("ion", frozen("--input-range", "--output", "--head-count", "--random-source")),
        writes=writes.option_targets("writes", ("-o", "--output")),
    ),
    ProgramModel(
        name="iconv",
        options=Spec("oft", frozen("--output", "--from-code", "--to-code")),
        writes=writes.option_targets("writes", ("-o", "--output")),
    ),
    ProgramModel(
        name="uniq",
        kind="safe",
        check=checks.at_most_one_operand("uniq"),
        writes=writes.second_operand,
    ),
    ProgramModel(
        name="xxd",
        kind="safe",
        check=checks.at_most_one_operand("xxd"),
        options=Spec("cglosC"),
        writes=writes.second_operand,
        decodes=frozen("-r", "-revert", "-rp", "-pr"),
    ),
    ProgramModel(name="tee", kind="safe", check=checks.check_tee, writes=writes.operands("writes")),
    *alike(_GREP, "egrep", "fgrep"),
    ProgramModel(name="zgrep", options=_GREP.options, reads=walks.grep_reads, lists=walks.grep_lists),
    ProgramModel(name="git-grep", options=Spec("efABCm", GREP_LONG)),  # `git grep`'s options, for its walk
    ProgramModel(
        name="rg",
        kind="safe",
        check=checks.check_rg,
        options=Spec("efgtTmABCjMdErs", _RG_LONG),
        searches_trees=True,
        reads=walks.rg_reads,
        lists=walks.rg_lists,
        pattern_first=True,
        value_options=frozen("-e", "--regexp", "-g", "--glob", "--iglob", "-t", "--type", "-r", "--replace"),
    ),
    *alike(ProgramModel(name="ag", options=Spec("Gg", _RG_LONG), reads=walks.rg_reads), "ack"),
    *alike(
        ProgramModel(
            name="fd",
            options=Spec(
                "etdExX",
                frozen("--extension", "--type", "--max-depth", "--exclude", "--exec", "--exec-batch"),
            ),
            lists=walks.fd_lists,
            reads=walks.fd_reads,
        ),
        "fdfind",
    ),
    ProgramModel(
        name="find",
        kind="safe",
        check=checks.check_find,
        unwraps=wrappers.find_exec,
        writes=writes.find,
        reads=walks.find_reads,
        lists=walks.find_lists,
    ),
]
