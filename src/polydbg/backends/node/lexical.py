"""Which ``let``, ``const`` and ``class`` bindings of a paused frame are still in their temporal dead zone.

V8 shows a binding in its TDZ as ``undefined``, in the scope objects and in an evaluation alike (checked
on Node 20.20: ``Debugger.evaluateOnCallFrame`` of such a name answers ``undefined``, not the
ReferenceError the program would get), so a ``const`` the program has not reached reads as if it held
``undefined``; in a loop's next iteration it even reads as the value the last iteration gave it (V8
leaves the slot as it was). What V8 does give is where each scope starts and ends in the script and where the frame
is paused: a binding of one of the frame's own scopes (not a closure's: how far its frame got is not
known here) is uninitialized while the pause comes before the end of its declaration. Block scopes are
created again on each entry (a loop's body, each iteration), so within one scope execution only moves
forward, and position is time.

The declarations are found by a small scanner over the generated script (the code V8 runs, so a
TypeScript loader's renamed bindings match the scope's names): strings, template literals, comments and
regular expression literals are skipped, brackets counted, and only declarations at the scope's own level
(not in a nested block or function) count. A script's ``#!`` line is not code.

The same scanner reads an expression given to evaluate for the names it takes from the frame's scopes
(``free_names``), so reading one of them in its TDZ can be said rather than computed on as ``undefined``.
"""

from __future__ import annotations

import itertools
import re
from typing import NamedTuple

_WORD = re.compile(r"[A-Za-z_$][\w$]*")
_DECLARING = ("let", "const", "class")
# after these a "/" starts a regular expression, not a division
_BEFORE_REGEX = set("(,=:[!&|?{};+-*%<>~^") | {""}
_KEYWORDS_BEFORE_REGEX = {"return", "typeof", "case", "do", "else", "in", "of", "new", "delete", "void", "throw",
                          "yield", "await"}
_CONTINUES = set("=,+-*/%&|^!?:<>.(")  # a line ending in one of these goes on on the next
_BINDS_ITS_OWN = frozenset({"function", "class", "let", "const", "var", "catch"})  # names an expression declares


class Declaration(NamedTuple):
    keyword: str  # let, const or class
    start: int  # offset of the keyword
    end: int  # offset where the declaration has been evaluated (its statement's end)


def offset(lines: list[int], line: int, column: int) -> int:
    """The offset of a 0-based (line, column), given each line's start offset."""
    return (lines[line] if line < len(lines) else lines[-1]) + column


def line_starts(source: str) -> list[int]:
    starts = [0]
    starts.extend(match.end() for match in re.finditer("\n", source))
    return starts


def declarations(source: str, start: int, end: int, own: int = 1) -> dict[str, Declaration]:
    """The ``let``/``const``/``class`` bindings declared at the own level of the scope spanning
    ``source[start:end]``: ``own`` brackets deep (a block, a function's parameters and body: 1; a
    module or script: 0)."""
    found: dict[str, Declaration] = {}
    tokens = list(_tokens(source, start, end))
    for index, (text, at, depth) in enumerate(tokens):
        if depth != own or text not in _DECLARING:
            continue
        names, stop = _bound_names(tokens, index, text, own)
        for name in names:
            found.setdefault(name, Declaration(text, at, stop))
    return found


def _bound_names(tokens: list[tuple[str, int, int]], index: int, keyword: str, own: int) -> tuple[list[str], int]:
    """The names a declaration at ``tokens[index]`` binds, and where its statement ends."""
    names: list[str] = []
    in_pattern = True  # before the declarator's "=" (names), after it (an initializer)
    stop = tokens[-1][1] + 1 if tokens else 0
    previous = ""
    for position in range(index + 1, len(tokens)):
        text, at, depth = tokens[position]
        if depth < own or (depth == own and text in (";", "\n") and not _goes_on(tokens, position, previous)):
            stop = at
            break
        if keyword == "class":
            if _WORD.fullmatch(text) and text != "extends":
                names.append(text)
            stop = at
            break
        if depth == own and text == "=":
            in_pattern = False
        elif depth == own and text == ",":
            in_pattern = True
        elif in_pattern and _WORD.fullmatch(text) and text not in ("of", "in"):
            following = tokens[position + 1][0] if position + 1 < len(tokens) else ""
            if following != ":":  # a property key in a destructuring pattern binds nothing
                names.append(text)
        elif in_pattern and text in ("of", "in") and depth == own:
            in_pattern = False
        if text != "\n":
            previous = text
    return names, stop


def _goes_on(tokens: list[tuple[str, int, int]], position: int, previous: str) -> bool:
    """Whether a newline at ``position`` does not end the statement (the line ends in an operator, or the
    next one starts with one)."""
    if tokens[position][0] != "\n":
        return False
    following = next((t for t, _, _ in tokens[position + 1:] if t != "\n"), "")
    return previous[-1:] in _CONTINUES or following[:1] in _CONTINUES - {"(", "!"}


def _tokens(source: str, start: int, end: int, substitutions: bool = False) -> list[tuple[str, int, int]]:
    """(text, offset, depth) of words, punctuation and newlines in ``source[start:end]``, skipping strings,
    templates (but, with ``substitutions``, the code in their ``${…}``), comments and regular expressions;
    depth counts the brackets open before the token."""
    out: list[tuple[str, int, int]] = []
    depth = 0
    i = _line_end(source, 0, end) if start == 0 and source.startswith("#!") else start
    previous = ""
    while i < end:
        char = source[i]
        if char == "\n":
            out.append(("\n", i, depth))
            i += 1
        elif char.isspace():
            i += 1
        elif source.startswith("//", i):
            i = _line_end(source, i, end)
        elif source.startswith("/*", i):
            close = source.find("*/", i + 2, end)
            i = end if close < 0 else close + 2
        elif char in "'\"":
            i = _string_end(source, i, end)
            previous = "string"
        elif char == "`":
            i, inside = _template(source, i, end)
            if substitutions:
                out.extend(token for first, last in inside for token in _tokens(source, first, last, substitutions))
            previous = "string"
        elif char == "/" and (previous in _BEFORE_REGEX or previous in _KEYWORDS_BEFORE_REGEX):
            i = _regex_end(source, i, end)
            previous = "regex"
        elif char in "([{":
            out.append((char, i, depth))
            depth += 1
            previous = char
            i += 1
        elif char in ")]}":
            depth -= 1
            out.append((char, i, depth))
            previous = char
            i += 1
        elif (word := _WORD.match(source, i)) is not None:
            out.append((word.group(), i, depth))
            previous = word.group()
            i = word.end()
        else:
            out.append((char, i, depth))
            previous = char
            i += 1
    return out


def tokens(source: str) -> list[tuple[str, int, int]]:
    """(text, offset, depth) of a whole script's words, punctuation and newlines (see ``_tokens``)."""
    return _tokens(source, 0, len(source))


def code_tokens(source: str, start: int, end: int) -> list[tuple[str, int, int]]:
    """(text, offset, depth) of ``source[start:end]``'s code, a template's ``${…}`` code included (its depths
    counted from the substitution)."""
    return _tokens(source, start, end, substitutions=True)


def free_names(expression: str) -> set[str]:
    """The names ``expression`` reads from the scopes it is evaluated in: its words, but for properties
    (``a.b``, ``a?.b``) and an object literal's keys. Empty when it declares names of its own (a function,
    an arrow, a declaration): which of its names are its own is not worked out here."""
    tokens = [text for text, _, _ in _tokens(expression, 0, len(expression), substitutions=True) if text != "\n"]
    if any(text in _BINDS_ITS_OWN for text in tokens) or any(a + b == "=>" for a, b in itertools.pairwise(tokens)):
        return set()
    names = set()
    for index, text in enumerate(tokens):
        previous = tokens[index - 1] if index else ""
        following = tokens[index + 1] if index + 1 < len(tokens) else ""
        if (_WORD.fullmatch(text) and previous != "."
                and not (following == ":" and previous in ("{", ","))):
            names.add(text)
    return names


def _line_end(source: str, i: int, end: int) -> int:
    newline = source.find("\n", i, end)
    return end if newline < 0 else newline


def _string_end(source: str, i: int, end: int) -> int:
    quote = source[i]
    i += 1
    while i < end and source[i] != quote and source[i] != "\n":
        i += 2 if source[i] == "\\" else 1
    return i + 1


def _template_end(source: str, i: int, end: int) -> int:
    return _template(source, i, end)[0]


def _template(source: str, i: int, end: int) -> tuple[int, list[tuple[int, int]]]:
    """Past the end of the template starting at ``source[i]`` (a backtick), and where the code of each of
    its ``${…}`` lies."""
    substitutions = []
    i += 1
    while i < end and source[i] != "`":
        if source[i] == "\\":
            i += 2
        elif source.startswith("${", i):
            closed = _substitution_end(source, i + 2, end)
            substitutions.append((i + 2, closed - 1))
            i = closed
        else:
            i += 1
    return i + 1, substitutions


def _substitution_end(source: str, i: int, end: int) -> int:
    """Past the ``}`` that closes a template's ``${``."""
    depth = 1
    while i < end and depth:
        char = source[i]
        if char in "'\"":
            i = _string_end(source, i, end)
            continue
        if char == "`":
            i = _template_end(source, i, end)
            continue
        depth += {"{": 1, "}": -1}.get(char, 0)
        i += 1
    return i


def _regex_end(source: str, i: int, end: int) -> int:
    i += 1
    in_class = False
    while i < end and source[i] != "\n":
        char = source[i]
        if char == "\\":
            i += 2
            continue
        if char == "[":
            in_class = True
        elif char == "]":
            in_class = False
        elif char == "/" and not in_class:
            i += 1
            break
        i += 1
    while i < end and (source[i].isalnum() or source[i] == "_"):
        i += 1  # flags
    return i


class Source:
    """A script's source, with the declarations of each scope asked about kept (a scope is scanned once,
    however often the program stops in it)."""

    LIMIT = 512 * 1024  # characters of one scope scanned at most (≈0.3 s); a larger one is not judged

    def __init__(self, text: str) -> None:
        self.text = text
        self._starts = line_starts(text)
        self._scopes: dict[tuple[int, int, int], dict[str, Declaration]] = {}
        self._blocks: list[tuple[int, int, str]] | None = None

    def offset(self, line: int, column: int) -> int:
        return min(offset(self._starts, line, column), len(self.text))

    def in_try(self, here: int) -> bool:
        """``in_try`` of this script, its blocks found once (a test's failures are judged at every caught
        exception, through the same libraries' frames)."""
        if self._blocks is None:
            self._blocks = catching_blocks(self.text)
        return in_try(self.text, here, self._blocks)

    def declarations(self, first: int, last: int, own: int) -> dict[str, Declaration]:
        key = (first, last, own)
        if key not in self._scopes:
            self._scopes[key] = declarations(self.text, first, last, own) if last - first <= self.LIMIT else {}
        return self._scopes[key]

    def is_whole(self, scope: tuple[tuple[int, int], tuple[int, int]]) -> bool:
        """Whether a scope spans the whole script: a CommonJS module's top level, which V8 gives as the
        local scope of the function Node wraps the file in (its parameters are not in the source)."""
        return self.offset(*scope[0]) == 0 and self.offset(*scope[1]) >= len(self.text)

    def uninitialized(self, scope: tuple[tuple[int, int], tuple[int, int]], pause: tuple[int, int],
                      names: set[str], top_level: bool = False) -> dict[str, str]:
        """Of ``names`` (the bindings of one of the paused frame's own scopes), those still in their TDZ at
        ``pause``, each with its keyword. Positions are 0-based (line, column); ``top_level``: the scope is
        a module's or script's, not opened by a bracket."""
        found = self.declarations(self.offset(*scope[0]), self.offset(*scope[1]), 0 if top_level else 1)
        here = self.offset(*pause)
        return {name: found[name].keyword for name in names if name in found and here < found[name].end}


_NOT_A_FUNCTION = frozenset({"if", "for", "while", "switch", "catch", "with"})  # (…) { opens no function's body


def in_try(source: str, here: int, blocks: list[tuple[int, int, str]] | None = None) -> bool:
    """Whether offset ``here`` lies in a ``try`` block with a ``catch`` (not in the ``catch`` or ``finally``) of the
    function that contains it: a throw there is caught in that function. ``blocks``: the script's, when kept."""
    found = [(start, kind) for start, end, kind in (catching_blocks(source) if blocks is None else blocks)
             if start < here < end]
    return bool(found) and max(found)[1] == "try"


def catching_blocks(source: str) -> list[tuple[int, int, str]]:
    """Each function body and each ``try`` block with a ``catch`` of a script, as (start, end, "function" or
    "try") offsets of its braces. A block's kind is told by what opens it (``try {``, ``=> {``, ``name(…) {``, not
    ``if (…) {``)."""
    tokens = _tokens(source, 0, len(source))
    found: list[tuple[int, int, str]] = []
    open_: list[tuple[str, int]] = []  # each open bracket's kind ("try", "function", "block") and token index
    for index, (text, at, _) in enumerate(tokens):
        if text in ("(", "[", "{"):
            open_.append((_kind(tokens, index) if text == "{" else "block", index))
        elif text in (")", "]", "}") and open_:
            kind, opened = open_.pop()
            if kind == "function" or (kind == "try" and _followed_by(tokens, index, "catch")):
                found.append((tokens[opened][1], at, kind))
    return found


def _followed_by(tokens: list[tuple[str, int, int]], index: int, word: str) -> bool:
    return next((t for t, _, _ in tokens[index + 1:index + 4] if t != "\n"), "") == word


def _kind(tokens: list[tuple[str, int, int]], index: int) -> str:
    before = [t for t, _, _ in tokens[max(0, index - 3):index] if t != "\n"]
    previous = before[-1] if before else ""
    if previous == "try":
        return "try"
    if previous == ">" and len(before) >= 2 and before[-2] == "=":
        return "function"
    if previous == ")":
        depth = tokens[index - 1][2] if tokens[index - 1][0] == ")" else None
        for back in range(index - 2, -1, -1):
            if tokens[back][0] == "(" and tokens[back][2] == depth:
                callee = next((t for t, _, _ in reversed(tokens[:back]) if t != "\n"), "")
                return "block" if callee in _NOT_A_FUNCTION else "function"
    return "block"


_ASYNC_BEFORE = re.compile(r"\basync\s+(?:function\b\s*)?\*?\s*(?:[\w$#]+\s*)?$")
_AWAITED_CALL = re.compile(r"\bawait\s+(?:[\w$]+\s*\??\.\s*)*$")


def is_async_function(source: str, start: int) -> bool:
    """Whether the function V8 says starts at ``start`` (its parameters, or an arrow's ``async``) is async."""
    line = source.rfind("\n", 0, start) + 1
    return source.startswith("async", start) or bool(_ASYNC_BEFORE.search(source, line, start))


def awaits_call(source: str, at: int) -> bool:
    """Whether the call V8 places at ``at`` (its callee's last name) is awaited right there: ``await f(…)``,
    ``await this.store.load(…)``."""
    line = source.rfind("\n", 0, at) + 1
    return bool(_AWAITED_CALL.search(source[line:at]))
