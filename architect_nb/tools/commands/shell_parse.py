"""Parse a shell command with tree-sitter-bash into the simple commands bash would run.

The walk is an allowlist. Every node type it does not model (function definitions, arithmetic, `[[ ]]`,
ANSI-C quoting, declarations, parse errors, ...) is reported in `ParsedScript.problems`, which the classifier
treats as dangerous. Commands nested anywhere (lists, pipelines, subshells, `$(...)`, backticks, `<(...)`,
here-doc bodies, the bodies of unmodelled constructs) are still collected, so the blocklist sees them all.

tree-sitter is imported on first use: it costs tens of milliseconds, and `import architect_nb` stays cheap.
"""

from __future__ import annotations

import functools
import os
import re
from typing import TYPE_CHECKING

from architect_nb.tools.commands.shell_words import ParsedScript, Redirect, SimpleCommand, Word, ansi_c

if TYPE_CHECKING:
    from tree_sitter import Node, Parser

__all__ = [
    "MAX_NESTING",
    "ParsedScript",
    "Redirect",
    "SimpleCommand",
    "Word",
    "clear_parse_cache",
    "parse_command",
    "parse_script",
]

#: Deeper syntax trees than this are not walked; the script is reported as unmodelled instead.
MAX_NESTING = 200

_GLOB_CHARS = re.compile(r"(?<!\\)[*?\[]")
_BRACE_EXPANSION = re.compile(r"\{[^{}]*(?:,|\.\.)[^{}]*\}")
_BARE_BLANK = re.compile(r"(?<!\\)[ \t\n]")
_GAP = re.compile(rb"[ \t\n]+|\\\n")  # bash splits words on these only
_LOCAL_NAME = re.compile(r"^[a-z_][a-z0-9_]*$")
_DQ_ESCAPE = re.compile(r"\\([$`\"\\\n])")
_ESCAPE = re.compile(r"\\(.)", re.DOTALL)

# Punctuation and keywords that may appear between the statements of the structures we walk.
_STRUCTURAL_TOKENS = frozenset(
    {";", "&", "&&", "||", "|", "|&", "(", ")", "{", "}", "\n", ";;", ";&", ";;&", "!"}
    | {"if", "then", "fi", "elif", "else", "while", "until", "do", "done", "for", "in", "case", "esac"}
)
_STRUCTURAL = frozenset(
    {
        "program",
        "subshell",
        "compound_statement",
        "do_group",
        "if_statement",
        "elif_clause",
        "else_clause",
        "while_statement",
        "negated_command",
        "case_statement",
        "case_item",
        "for_statement",
    }
)
_UNMODELLED = {
    "function_definition": "defines a shell function",
    "declaration_command": "declares variables (export/local/declare/readonly)",
    "unset_command": "unsets variables",
    "test_command": "uses [[ ]] or (( )) (arithmetic is evaluated)",
    "c_style_for_statement": "uses a C-style for loop",
    "variable_assignment": "assigns a shell variable",
    "variable_assignments": "assigns shell variables",
    "arithmetic_expansion": "uses arithmetic expansion $((...))",
    "ansi_c_string": "uses ANSI-C quoting $'...'",
    "translated_string": 'uses locale quoting $"..."',
    "ERROR": "does not parse as shell",
}


@functools.cache
def _parser() -> Parser:
    import tree_sitter_bash
    from tree_sitter import Language, Parser

    return Parser(Language(tree_sitter_bash.language()))


def parse_command(command: str) -> ParsedScript:
    """`command` parsed as bash reads it: backslash-newline removed first, encoded as bash receives it.

    Raises `UnicodeEncodeError` when it cannot be passed to bash. The classifier and the guardrails judge the
    same command one after the other, so the parse is kept for the next caller: treat it as read-only.
    """
    return _parse_cached(os.fsencode(command.replace("\\\n", "")))


@functools.lru_cache(maxsize=64)
def _parse_cached(data: bytes) -> ParsedScript:
    return parse_script(data)


def clear_parse_cache() -> None:
    """Forget the kept parses (for measurements that must parse afresh)."""
    _parse_cached.cache_clear()


# tree-sitter-bash 0.25.1 reads out of bounds on `{` followed by a character outside the Basic Multilingual
# Plane, and the whole process (the person's kernel) dies (found by Hypothesis; `{\U000e0000` crashes it
# often). To bash such a character is a word character like any other non-ASCII one, so the grammar is given
# two 2-byte characters in its place: every byte offset stays the same, and words are read from the script.
_ASTRAL = re.compile(rb"[\xf0-\xf4][\x80-\xbf]{3}")
_ASTRAL_STAND_IN = "¤¤".encode()


def parse_script(script: bytes) -> ParsedScript:
    """Parse `script` (already encoded as bash will receive it) and collect its simple commands."""
    tree = _parser().parse(_ASTRAL.sub(_ASTRAL_STAND_IN, script))
    walker = _Walker(script)
    root = tree.root_node
    if root.has_error:
        walker.problem(_UNMODELLED["ERROR"])
    if _GAP.sub(b"", script[: root.start_byte]) or _GAP.sub(b"", script[root.end_byte :]):
        walker.problem("has text the shell grammar skipped")
    walker.statement(tree.root_node, 0)
    return walker.out


class _Walker:
    def __init__(self, source: bytes) -> None:
        self.source = source
        self.out = ParsedScript()
        self._pipelines = 0

    def _text(self, node: Node) -> str:
        """The node's text in the script as written (the parse may have seen stand-ins, `_ASTRAL`)."""
        return self.source[node.start_byte : node.end_byte].decode("utf-8", "surrogateescape")

    def problem(self, reason: str) -> None:
        if reason not in self.out.problems:
            self.out.problems.append(reason)

    # ------------------------------------------------------------------ statements

    def gaps(self, node: Node, *, dash_after: Node | None = None) -> None:
        """Bytes between a node's children that are not blanks: text the grammar skipped but bash will read.

        (tree-sitter-bash drops a leading `\\ `, for instance, where bash makes it part of the word.) A lone
        `-` right after `dash_after` is allowed: the grammar drops it before a here-doc (`python3 - <<EOF`),
        and `redirected` gives it back as a word.
        """
        position = node.start_byte
        for child in [*node.children, None]:
            end = node.end_byte if child is None else child.start_byte
            gap = _GAP.sub(b"", self.source[position:end]) if end > position else b""
            after_body = dash_after is not None and position == dash_after.end_byte
            if gap and not (after_body and gap == b"-"):
                self.problem("has text the shell grammar skipped")
                return
            if child is not None:
                position = max(position, child.end_byte)

    def statement(self, node: Node, depth: int) -> None:
        if depth > MAX_NESTING:
            self.problem("is nested too deeply to analyse")
            return
        kind = node.type
        if kind != "redirected_statement":
            self.gaps(node)
        if kind == "command":
            self.command(node, depth)
        elif kind == "list":
            # Lists nest to the left (`a && b && c`); walk the chain without recursing per element.
            chain: list[Node] = []
            while node.type == "list":
                chain.extend(reversed(node.children[1:]))
                node = node.children[0]
            chain.append(node)
            for child in reversed(chain):
                self._child(child, depth + 1)
        elif kind == "pipeline":
            self._pipelines += 1
            pipeline_id = self._pipelines
            stage = 0
            for child in node.children:
                if child.is_named and child.type != "comment":
                    start = len(self.out.commands)
                    self.statement(child, depth + 1)
                    for cmd in self.out.commands[start:]:
                        cmd.pipes.append((pipeline_id, stage))
                    stage += 1
                elif not child.is_named and child.type not in _STRUCTURAL_TOKENS:
                    self.problem(f"uses unexpected syntax '{child.type}'")
        elif kind == "redirected_statement":
            self.redirected(node, depth)
        elif kind in _STRUCTURAL:
            if kind == "compound_statement" and (
                not node.named_child_count
                or self.source[node.start_byte + 1 : node.start_byte + 2] not in b" \t\n"
            ):
                self.problem("has text the shell grammar misread")  # `{}` and `{ls;}` are words to bash
            for child in node.children:
                if kind == "for_statement" and child.type == "variable_name":
                    name = self._text(child)
                    if _LOCAL_NAME.match(name):
                        self.out.loop_variables.add(name)
                    else:  # `for PATH in ...` changes where programs are found
                        self.problem(f"assigns ${name} in a loop")
                    continue
                if kind in ("for_statement", "case_statement", "case_item") and child.type in _WORD_TYPES:
                    # Loop values and case words: judged like arguments (secrets, variables, substitutions).
                    self.out.loose_words.append(self.word(child, depth + 1))
                    continue
                self._child(child, depth + 1)
        elif kind == "comment":
            return
        elif kind == "test_command" and node.child_count and node.children[0].type == "[":
            self.bracket_test(node, depth)
        else:
            self.problem(_UNMODELLED.get(kind, f"uses unmodelled shell syntax ({kind})"))
            if kind == "function_definition":
                self.function(node, depth)
            elif kind == "variable_assignment":
                self.assignment(node, depth + 1)
            else:
                self.scavenge(node, depth + 1)

    def _child(self, child: Node, depth: int) -> None:
        if child.is_named:
            self.statement(child, depth)
        elif child.type not in _STRUCTURAL_TOKENS:
            self.problem(f"uses unexpected syntax '{child.type}'")

    def bracket_test(self, node: Node, depth: int) -> None:
        """`[ ... ]` is the `[` command; the grammar parses its expression, so flatten it back to words."""
        words = [Word(text="[", value="[", skeleton="[")]
        stack = list(reversed(node.children[1:]))
        while stack:
            child = stack.pop()
            if child.type in _WORD_TYPES:
                words.append(self.word(child, depth + 1))
            elif child.type == "test_operator" or not child.is_named:
                text = self._text(child)
                words.append(Word(text=text, value=text, skeleton=text))
            elif child.type in ("unary_expression", "binary_expression", "parenthesized_expression"):
                stack.extend(reversed(child.children))
            else:
                self.problem(f"uses unmodelled shell syntax ({child.type})")
                self.scavenge(child, depth + 1)
        self.out.commands.append(SimpleCommand(words=words))

    def function(self, node: Node, depth: int) -> None:
        name_node = node.child_by_field_name("name")
        start = len(self.out.commands)
        self.scavenge(node, depth + 1)
        called = {cmd.words[0].skeleton for cmd in self.out.commands[start:] if cmd.words}
        self.out.functions.append((self._text(name_node) if name_node else "", called))

    def scavenge(self, node: Node, depth: int) -> None:
        """Collect the commands inside syntax we do not model, so the blocklist still sees them."""
        if depth > MAX_NESTING:
            self.problem("is nested too deeply to analyse")
            return
        for child in node.children:
            if child.type in ("command", "pipeline", "list", "redirected_statement", "subshell"):
                self.statement(child, depth + 1)
            elif child.type in ("command_substitution", "process_substitution"):
                self.word(child, depth + 1)
            elif child.type == "variable_assignment":  # `export F=.env`, `F=.env; G=x`
                self.assignment(child, depth + 1)
            else:
                self.scavenge(child, depth + 1)

    def assignment(self, node: Node, depth: int) -> None:
        """`NAME=value`: the value is a word like an argument (a name in it is still mentioned)."""
        for part in node.children[1:]:
            if part.is_named:
                self.out.assigned.append(self.word(part, depth))

    def redirected(self, node: Node, depth: int) -> None:
        body = node.child_by_field_name("body")
        dropped_dash = body is not None and body.type == "command" and self._dash_after(body)
        self.gaps(node, dash_after=body if dropped_dash else None)
        start = len(self.out.commands)
        redirects: list[Redirect] = []
        stdin_text: str | None = None
        for child in node.children:
            if child == body:
                self.statement(child, depth + 1)
            elif child.type in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                red, text = self.redirect(child, depth + 1)
                redirects.extend(red)
                stdin_text = text if text is not None else stdin_text
            elif child.is_named:
                self.statement(child, depth + 1)
            elif child.type not in _STRUCTURAL_TOKENS:
                self.problem(f"uses unexpected syntax '{child.type}'")
        if body is None:
            self.out.commands.append(SimpleCommand(words=[], redirects=redirects))
            return
        if dropped_dash and start < len(self.out.commands):
            self.out.commands[start].words.append(Word(text="-", value="-", skeleton="-"))
        for cmd in self.out.commands[start:]:
            cmd.redirects.extend(redirects)
            if stdin_text is not None and cmd.stdin_text is None:
                cmd.stdin_text = stdin_text

    def _dash_after(self, body: Node) -> bool:
        """Whether a lone `-` follows the command `body` before its redirections (the grammar dropped it)."""
        rest = self.source[body.end_byte : body.end_byte + 3]
        return rest[:1] in (b" ", b"\t") and rest[1:2] == b"-" and rest[2:3] in (b" ", b"\t")

    def redirect(self, node: Node, depth: int) -> tuple[list[Redirect], str | None]:
        """The redirections in `node` and, for here-docs and here-strings, the static text they feed."""
        if node.type == "heredoc_redirect":
            out: list[Redirect] = []
            body: Word | None = None
            quoted = False
            for child in node.children:
                if child.type == "heredoc_start":
                    quoted = any(q in self._text(child) for q in "'\"\\")
                elif child.type == "heredoc_body":
                    if quoted or all(part.type == "heredoc_content" for part in child.named_children):
                        body = Word(
                            text=self._text(child), value=self._text(child), skeleton=self._text(child)
                        )
                    else:  # unquoted here-docs expand $(...) and $VAR
                        body = self._compound_word(child, self._text(child), depth + 1)
                elif child.type in ("file_redirect", "herestring_redirect"):
                    out.extend(self.redirect(child, depth + 1)[0])
            out.append(Redirect(op="<<", target=body))
            return out, body.value if body is not None else None
        self.gaps(node)
        op = ""
        fd: str | None = None
        target: Word | None = None
        for child in node.children:
            if child.type == "file_descriptor":
                fd = self._text(child)
            elif not child.is_named:
                op += child.type
            elif child.type == "ERROR":
                self.problem(_UNMODELLED["ERROR"])
            else:
                if target is not None:  # `2>&1 /dev/null`: bash runs the second word as a command
                    self.problem("has text the shell grammar misread")
                target = self.word(child, depth + 1)
        if node.type == "herestring_redirect":
            return [Redirect(op="<<<", target=target)], target.value if target else None
        return [Redirect(op=op, target=target, fd=fd)], None

    # ------------------------------------------------------------------ simple commands

    def command(self, node: Node, depth: int) -> None:
        self.gaps(node)
        cmd = SimpleCommand(words=[])
        nested_start = len(self.out.commands)
        for child in node.children:
            kind = child.type
            if kind == "variable_assignment":
                name = child.child_by_field_name("name")
                cmd.assignments.append(self._text(name) if name else self._text(child))
                self.assignment(child, depth + 1)
            elif kind in ("file_redirect", "herestring_redirect", "heredoc_redirect"):
                red, text = self.redirect(child, depth + 1)
                cmd.redirects.extend(red)
                cmd.stdin_text = text if text is not None else cmd.stdin_text
            elif kind == "command_name":
                if child.named_child_count != 1:
                    self.problem("has a command name it cannot read")
                    continue
                cmd.words.append(self.word(child.named_children[0], depth + 1))
            elif child.is_named and kind in _WORD_TYPES:
                cmd.words.append(self.word(child, depth + 1))
            elif kind == "comment":
                continue
            else:
                self.problem(_UNMODELLED.get(kind, f"uses unexpected syntax '{kind}' in a command"))
                if child.is_named:
                    self.scavenge(child, depth + 1)
        # The command itself runs after the commands of its substitutions; keep it first for clearer reasons.
        self.out.commands.insert(nested_start, cmd)

    # ------------------------------------------------------------------ words

    def word(self, node: Node, depth: int) -> Word:
        if depth > MAX_NESTING:
            self.problem("is nested too deeply to analyse")
            return Word(text=self._text(node), value=None, skeleton="", substituted=True)
        kind = node.type
        text = self._text(node)
        if node.child_count and kind not in ("heredoc_body", "string", "concatenation"):
            self.gaps(node)  # (compound words check their own gaps)
        if kind == "word":
            if _BARE_BLANK.search(text):  # the grammar glued words together (`<<< { {`)
                self.problem("has text the shell grammar misread")
            value = _ESCAPE.sub(r"\1", text)
            globbed = bool(_GLOB_CHARS.search(text) or _BRACE_EXPANSION.search(text))
            return Word(text=text, value=value, skeleton=value, globbed=globbed)
        if kind == "number":
            return Word(text=text, value=text, skeleton=text)
        if kind == "raw_string":
            return Word(text=text, value=text[1:-1], skeleton=text[1:-1])
        if kind in ("simple_expansion", "expansion"):
            names = [c for c in node.named_children if c.type in ("variable_name", "special_variable_name")]
            plain = len(node.named_children) == 1 and len(names) == 1 and node.child_count <= 3
            if not plain:
                for child in node.named_children:
                    if child.type not in ("variable_name", "special_variable_name"):
                        self._nested(child, depth + 1)
            var = self._text(names[0]) if plain else "${...}"
            return Word(
                text=text,
                value=None,
                skeleton="",
                variables=(var,),
                template=f"${{{var}}}" if plain else None,
            )
        if kind in ("command_substitution", "process_substitution"):
            start = len(self.out.commands)
            for child in node.children:
                if child.is_named:
                    self.statement(child, depth + 1)
            inner = self.out.commands[start:]
            programs = tuple(c.words[0].skeleton for c in inner if c.words)
            # `$(echo sudo)` is a plain disguise: its output is known, so the blocklist can see through it.
            echoed = ""
            if kind == "command_substitution" and len(inner) == 1 and programs == ("echo",):
                parts = [w.value for w in inner[0].words[1:]]
                if all(p is not None and not p.startswith("-") for p in parts):
                    echoed = " ".join(p or "" for p in parts)
            return Word(text=text, value=None, skeleton=echoed, substituted=True, inner_programs=programs)
        if kind == "ansi_c_string":
            self.problem(_UNMODELLED[kind])
            decoded = ansi_c(text[2:-1])
            return Word(text=text, value=decoded, skeleton=decoded)
        if kind in ("string", "concatenation", "heredoc_body"):
            return self._compound_word(node, text, depth)
        if kind == "brace_expression":
            return Word(text=text, value=text, skeleton=text, globbed=True)
        self.problem(_UNMODELLED.get(kind, f"uses unmodelled shell syntax ({kind})"))
        self._nested(node, depth + 1)
        return Word(text=text, value=None, skeleton="", substituted=True)

    def _nested(self, node: Node, depth: int) -> None:
        """Walk an unmodelled part of a word for the substitutions it may hide."""
        if node.type in ("command_substitution", "process_substitution"):
            self.word(node, depth)
        else:
            self.scavenge(node, depth)

    def _compound_word(self, node: Node, text: str, depth: int) -> Word:
        if node.type != "heredoc_body":
            self.gaps(node)
        is_string = node.type == "string"
        value: str | None = ""
        template: str | None = ""
        skeleton = ""
        substituted = globbed = False
        variables: list[str] = []
        programs: list[str] = []
        for child in node.children:
            if not child.is_named:
                if not (is_string and child.type == '"'):
                    self.problem(f"uses unexpected syntax '{child.type}'")
                    value = template = None
                continue
            if child.type in ("string_content", "heredoc_content"):
                part = self._text(child)
                literal = _DQ_ESCAPE.sub(r"\1", part) if is_string else part
                value = None if value is None else value + literal
                template = None if template is None else template + literal
                skeleton += literal
                continue
            sub = self.word(child, depth + 1)
            value = None if value is None or sub.value is None else value + sub.value
            template = None if template is None or sub.template is None else template + sub.template
            skeleton += sub.skeleton
            substituted |= sub.substituted
            globbed |= sub.globbed and not is_string
            variables.extend(sub.variables)
            programs.extend(sub.inner_programs)
        if node.type == "concatenation" and not globbed:
            # `{a,b}` is split into several words by the grammar; look at the unquoted text as a whole.
            unquoted = "".join(self._text(c) if c.type == "word" else "x" for c in node.children)
            globbed = bool(_BRACE_EXPANSION.search(unquoted))
        return Word(
            text=text,
            value=value,
            skeleton=skeleton,
            substituted=substituted,
            globbed=globbed,
            variables=tuple(variables),
            inner_programs=tuple(programs),
            template=template,
        )


_WORD_TYPES = frozenset(
    {
        "word",
        "number",
        "raw_string",
        "string",
        "concatenation",
        "simple_expansion",
        "expansion",
        "command_substitution",
        "process_substitution",
        "brace_expression",
        "arithmetic_expansion",
        "ansi_c_string",
        "translated_string",
    }
)
