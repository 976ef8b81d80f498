"""Where a JavaScript function the agent names is defined: ``fib``, ``Parser.parse``, ``lib/date.js:parse``.

A call trace names functions as people write them, not as V8 locates them, so each user script's source is
scanned once (``lexical.tokens``: strings, comments and regular expressions skipped, brackets counted) for
the forms that define a named function — ``function name(…)``, ``name = function (…)``, ``name: (…) =>``,
``name = async x =>``, a method ``name(…) {`` in a class or an object literal, ``Owner.prototype.name =
function`` — each with the owner it belongs to (the class, the object assigned to, the ``Owner.`` before it),
its parameters, and where its body starts (V8's break locations of the function are asked from there).

A parameter is read by its name; a destructured one has no name of its own and is read as ``arguments[i]``
(an arrow function has no ``arguments``: it is left out).
"""

from __future__ import annotations

import difflib
import functools
import itertools
import os
import re
from collections.abc import Sequence
from typing import Any, NamedTuple

from polydbg.backends.node import lexical
from polydbg.backends.node.scripts import position

_NOT_A_METHOD = frozenset({"if", "for", "while", "switch", "catch", "with", "function", "return", "typeof",
                           "await", "yield", "new", "delete", "void", "in", "do", "else"})
_BEFORE_METHOD = frozenset({"{", "}", ";", "\n", ",", "static", "async", "get", "set", "*"})
_ASSIGNS = frozenset({"=", ":"})
_WORD_CHAR = re.compile(r"[\w$]")
_TS_MODIFIERS = frozenset({"public", "private", "protected", "readonly", "override", "abstract"})


class Definition(NamedTuple):
    name: str  # ``parse``
    owner: str | None  # ``Parser`` (a class, an object assigned to a name, ``Owner.prototype``)
    params: tuple[tuple[str, str], ...]  # (shown name, expression reading it at the function's start)
    body: int  # offset where the function's body (its ``{``, or an arrow's expression) starts
    at: int  # offset of the name
    asynchronous: bool = False  # ``async``: what it returns is a promise of what its code returns
    generator: bool = False  # ``function*``, ``*name(…)``: its returns are not what it yields

    @property
    def qualified(self) -> str:
        return f"{self.owner}.{self.name}" if self.owner else self.name


def definitions(source: str) -> list[Definition]:
    """Every named function defined in a script's source."""
    toks = lexical.tokens(source)
    found: list[Definition] = []
    classes: list[tuple[str, int]] = []  # (class name, depth of its body's contents), once its body opened
    objects: list[tuple[str, int]] = []  # (name assigned an object literal, depth of its contents)
    opening: list[tuple[str, int]] = []  # a class declared, its body not open yet: (name, index of its ``{``)
    for i, (text, at, depth) in enumerate(toks):
        while classes and depth < classes[-1][1]:
            classes.pop()
        while objects and depth < objects[-1][1]:
            objects.pop()
        if opening and i == opening[-1][1]:
            classes.append((opening.pop()[0], depth + 1))
        if text == "class":
            name = _word(toks, i + 1)
            brace = _next(toks, i, "{")
            if brace is not None:
                opening.append((name or _assigned_name(toks, i) or "<class>", brace))
            continue
        if text == "{" and _previous(toks, i) in _ASSIGNS and (owner := _assigned_name(toks, i)) is not None:
            objects.append((owner, depth + 1))
        if not _is_word(text):
            continue
        definition = _defined_at(toks, i, source)
        if definition is None:
            continue
        name, params_at, body = definition
        owner = _owner(toks, i, depth, classes, objects)
        params = _params(toks, params_at, _is_arrow(toks, params_at)) if params_at is not None else ()
        start = toks[params_at][1] if params_at is not None else body
        found.append(Definition(name, owner, params, body, at, lexical.is_async_function(source, start),
                                _previous(toks, i) == "*" or "*" in source[max(0, at - 12):at].split("function")[-1]))
    return found


_NOT_CALLS = frozenset(("if", "for", "while", "switch", "catch", "function", "return", "typeof", "await", "new",
                        "super", "import", "require"))


def called_names(source: str, definition: Definition) -> set[str]:
    """The names a function's body calls (``helper(…)``, ``this.parse(…)``, ``list.map(…)``), where its callees
    may be found; with those of the functions it defines (a callback it passes: ``words.map((w) => weight(w))``)."""
    toks = _code_tokens(source)
    start = next((i for i, tok in enumerate(toks) if tok[1] >= definition.body), len(toks))
    if start == len(toks):
        return set()
    if toks[start][0] == "{":
        end = _closing(toks, start) or len(toks)
    else:  # an arrow's expression: to the end of the expression
        depth = toks[start][2]
        end = next((j for j in range(start, len(toks))
                    if toks[j][2] < depth or (toks[j][0] in ";," and toks[j][2] == depth)), len(toks))
    # the body's code again with its templates' ${…} (`${shout(name)}` calls shout)
    body = lexical.code_tokens(source, toks[start][1], toks[end][1] if end < len(toks) else len(source))
    return {text for (text, _, _), (after, _, _) in itertools.pairwise(body)
            if after == "(" and _is_word(text) and text not in _NOT_CALLS and text != definition.name}


@functools.lru_cache(maxsize=8)
def _code_tokens(source: str) -> tuple[tuple[str, int, int], ...]:
    """A source's tokens without its line breaks (a call trace's depth reads every function of a file in turn)."""
    return tuple(tok for tok in lexical.tokens(source) if tok[0] != "\n")


def closest(name: str, known: list[str], count: int = 5) -> list[str]:
    """The known names nearest to one that matched none (by its last part too: ``Parser.prase`` → ``parse``)."""
    last = name.rsplit(".", 1)[-1].rsplit(":", 1)[-1]
    near = difflib.get_close_matches(name, known, n=count, cutoff=0.6)
    near += [k for k in difflib.get_close_matches(last, [k.rsplit(".", 1)[-1] for k in known], n=count, cutoff=0.6)
             for k in [q for q in known if q.rsplit(".", 1)[-1] == k] if k not in near]
    return list(dict.fromkeys(near))[:count]


def matches(wanted: str, definition: Definition, path: str | None) -> bool:
    """Whether ``wanted`` (``func``, ``Owner.func``, ``module.func``, ``file:func``) names this definition in
    the script at ``path``."""
    where, _, name = wanted.rpartition(":") if ":" in wanted else ("", "", wanted)
    if where and (path is None or not _same_file(where, path)):
        return False
    owner, _, last = name.rpartition(".")
    if last != definition.name:
        return False
    if not owner:
        return True
    if owner == definition.owner:
        return True
    stem = os.path.splitext(os.path.basename(path or ""))[0]
    return definition.owner is None and owner == stem  # module.func: a top-level function of module's file


def _same_file(where: str, path: str) -> bool:
    where = os.path.normpath(where)
    return path == where or path.endswith("/" + where.lstrip("./")) or (
        os.sep not in where and os.path.splitext(os.path.basename(path))[0] == where)


# -- the scanner's steps ------------------------------------------------------------------------------------

Tokens = list[tuple[str, int, int]]


def _is_word(text: str) -> bool:
    return text[:1].isalpha() or text[:1] in "_$"


def _word(toks: Tokens, i: int) -> str | None:
    i = _skip_newlines(toks, i)
    return toks[i][0] if i < len(toks) and _is_word(toks[i][0]) and toks[i][0] != "extends" else None


def _skip_newlines(toks: Tokens, i: int) -> int:
    while i < len(toks) and toks[i][0] == "\n":
        i += 1
    return i


def _previous(toks: Tokens, i: int) -> str:
    i -= 1
    while i >= 0 and toks[i][0] == "\n":
        i -= 1
    return toks[i][0] if i >= 0 else ""


def _previous_index(toks: Tokens, i: int) -> int:
    i -= 1
    while i >= 0 and toks[i][0] == "\n":
        i -= 1
    return i


def _next(toks: Tokens, i: int, wanted: str, limit: int = 40) -> int | None:
    for j in range(i + 1, min(len(toks), i + limit)):
        if toks[j][0] == wanted:
            return j
        if toks[j][0] in (";", "}"):
            return None
    return None


def _closing(toks: Sequence[tuple[str, int, int]], i: int) -> int | None:
    """The index of the bracket closing the one at ``i``."""
    depth = toks[i][2]
    for j in range(i + 1, len(toks)):
        if toks[j][0] in ")]}" and toks[j][2] == depth:
            return j
    return None


def _assigned_name(toks: Tokens, i: int) -> str | None:
    """``x`` of ``x = …`` / ``x: …`` / ``const x = …`` before token ``i`` (the value's first token)."""
    j = _previous_index(toks, i)
    while j >= 0 and toks[j][0] not in _ASSIGNS:
        if toks[j][0] not in ("async", "class", "function", "*") and not _is_word(toks[j][0]):
            return None
        j = _previous_index(toks, j)
    if j < 0 or (toks[j][0] == "=" and _previous(toks, j) in ("=", "!", "<", ">")):
        return None
    k = _previous_index(toks, j)
    return toks[k][0] if k >= 0 and _is_word(toks[k][0]) else None


def _defined_at(toks: Tokens, i: int, source: str) -> tuple[str, int | None, int] | None:
    """(name, index of its parameters' ``(`` or lone parameter, body offset) when token ``i`` names a function."""
    text = toks[i][0]
    before = _previous(toks, i)
    after = _skip_newlines(toks, i + 1)
    if after >= len(toks):
        return None
    nxt = toks[after][0]
    if before == "function" or (before == "*" and _previous(toks, _previous_index(toks, i)) == "function"):
        return _with_body(toks, text, after) if nxt == "(" else None
    if nxt in _ASSIGNS and not _joined(toks, after, ("=", ">")):  # not ``==`` nor ``=>``
        value = _skip_newlines(toks, after + 1)
        if value < len(toks) and toks[value][0] == "async":
            value = _skip_newlines(toks, value + 1)
        if value >= len(toks):
            return None
        if toks[value][0] == "function":
            params = _next(toks, value, "(", 6)
            return _with_body(toks, text, params) if params is not None else None
        if toks[value][0] == "(":
            close = _closing(toks, value)
            if close is not None and _arrow_after(toks, close):
                return text, value, _arrow_body(toks, close, source)
        elif _is_word(toks[value][0]) and _arrow_after(toks, value):
            return text, value, _arrow_body(toks, value, source)
        return None
    if nxt == "(" and text not in _NOT_A_METHOD and before in _BEFORE_METHOD | _TS_MODIFIERS:
        close = _closing(toks, after)
        body = _after_params(toks, close) if close is not None else len(toks)
        if body < len(toks) and toks[body][0] == "{":
            return text, after, toks[body][1]
    return None


def _after_params(toks: Tokens, close: int) -> int:
    """The token after a parameter list's ``)``, past a TypeScript return type (``): Promise<number> {``)."""
    j = _skip_newlines(toks, close + 1)
    if j < len(toks) and toks[j][0] == ":":
        depth = toks[close][2]
        while j < len(toks) and not (toks[j][0] in ("{", "=") and toks[j][2] == depth) and toks[j][0] != ";":
            j += 1
    return j


def _with_body(toks: Tokens, name: str, params: int) -> tuple[str, int | None, int] | None:
    close = _closing(toks, params)
    body = _after_params(toks, close) if close is not None else len(toks)
    return (name, params, toks[body][1]) if body < len(toks) and toks[body][0] == "{" else None


def _joined(toks: Tokens, i: int, following: tuple[str, ...]) -> bool:
    """Whether token ``i`` is the first character of an operator (``==``, ``=>``): one of ``following`` right after."""
    return i + 1 < len(toks) and toks[i + 1][0] in following and toks[i + 1][1] == toks[i][1] + 1


def _arrow_after(toks: Tokens, i: int) -> bool:
    j = _after_params(toks, i) if toks[i][0] == ")" else _skip_newlines(toks, i + 1)
    return j < len(toks) and toks[j][0] == "=" and _joined(toks, j, (">",))


def _is_arrow(toks: Tokens, params: int) -> bool:
    if toks[params][0] != "(":
        return True
    close = _closing(toks, params)
    return close is not None and _arrow_after(toks, close)


def _arrow_body(toks: Tokens, i: int, source: str) -> int:
    j = (_after_params(toks, i) if toks[i][0] == ")" else _skip_newlines(toks, i + 1)) + 2  # past "=" ">"
    j = _skip_newlines(toks, j)
    return toks[j][1] if j < len(toks) else len(source)


def _owner(toks: Tokens, i: int, depth: int, classes: list[tuple[str, int]],
           objects: list[tuple[str, int]]) -> str | None:
    """The class or object a definition at token ``i`` belongs to: ``Owner.name = …``, ``Owner.prototype.name =
    …``, a method of the class or object literal whose body holds it directly."""
    j = _previous_index(toks, i)
    if j >= 0 and toks[j][0] == ".":
        k = _previous_index(toks, j)
        if k >= 0 and toks[k][0] == "prototype":
            k = _previous_index(toks, _previous_index(toks, k))
        return toks[k][0] if k >= 0 and _is_word(toks[k][0]) and toks[k][0] != "this" else None
    if classes and depth == classes[-1][1]:
        return classes[-1][0]
    if objects and depth == objects[-1][1]:
        return objects[-1][0]
    return None


def _params(toks: Tokens, at: int, arrow: bool) -> tuple[tuple[str, str], ...]:
    """(shown name, expression) of each parameter at ``at`` (a ``(`` or an arrow's lone parameter)."""
    if toks[at][0] != "(":
        return ((toks[at][0], toks[at][0]),)
    close = _closing(toks, at)
    if close is None:
        return ()
    inner = toks[at][2] + 1
    params: list[tuple[str, str]] = []
    start = True
    index = 0
    for j in range(at + 1, close):
        text, _, depth = toks[j]
        if text == "\n":
            continue
        if depth == inner and text == ",":
            start = True
            index += 1
            continue
        if start and depth == inner and text != ".":
            start = False
            if _is_word(text):
                rest = j >= 3 and toks[j - 1][0] == "." and toks[j - 3][0] == "."
                params.append((f"...{text}" if rest else text, text))
            elif not arrow:
                params.append((f"arguments[{index}]", f"arguments[{index}]"))
    return tuple(params)


_READS_ONLY = frozenset({"typeof", "instanceof", "in", "true", "false", "null", "undefined", "this", "void"})
_WRITES = ("=", "+=", "-=", "*=", "/=", "%=", "**=", "<<=", ">>=", ">>>=", "&=", "|=", "^=", "&&=", "||=", "??=",
           "++", "--")


def returned_expression(source: str, statement: int, end: int) -> str | None:
    """The expression of the ``return`` statement at ``statement`` (V8's return location after it at ``end``) when
    evaluating it again before the statement runs gives what it returns: it calls nothing, assigns nothing, makes
    no function, awaits and yields nothing (``total + 1``, ``{ length: text.length, text }``); else None."""
    if not source.startswith("return", statement) or _WORD_CHAR.match(source, statement + 6):
        return None
    expression = source[statement + 6:end].strip().rstrip(";").strip()
    return expression if not expression or reads_only(expression) else None


def reads_only(expression: str) -> bool:
    """Whether an expression only reads: no call (``f(``, ``a.b(``, ``x?.(``), ``new``, assignment, update,
    function, ``await``, ``yield``, template literal or regular expression."""
    if "`" in expression or "=>" in expression or any(op in expression for op in _WRITES if op not in ("=",)):
        return False
    toks = [t for t in lexical.tokens(expression) if t[0] != "\n"]
    for i, (text, at, _) in enumerate(toks):
        if text in ("new", "function", "await", "yield", "class", "delete", "import", "super"):
            return False
        if text == "=" and not _comparison(expression, at):
            return False
        if text == "(" and i > 0 and ((_is_word(toks[i - 1][0]) and toks[i - 1][0] not in _READS_ONLY)
                                      or toks[i - 1][0] in (")", "]", ".")):
            return False  # a call
        if text == "/" and _regex_may_start(toks, i):
            return False
    return True


def _comparison(expression: str, at: int) -> bool:
    """Whether the ``=`` at ``at`` is part of ``==``, ``===``, ``!=``, ``<=``, ``>=`` or ``=>``."""
    return expression[at - 1:at] in ("=", "!", "<", ">") or expression[at + 1:at + 2] in ("=", ">")


def _regex_may_start(toks: Tokens, i: int) -> bool:
    return i == 0 or toks[i - 1][0] in ("(", ",", "=", ":", "[", "!", "&", "|", "?", "{", "}", ";")


def returns_read(text: str, raw: list[dict[str, Any]], definition: Definition) -> dict[tuple[int, int], tuple[
        tuple[int, int], str]]:
    """The function's return locations whose value is read without a pause, each with where to read it and the
    expression to read (``""``: undefined): a ``return`` whose expression only reads, at its statement (before it
    runs); an arrow's expression body that only reads, at its start; ``return;`` and the body's end, where they
    are. A generator's are none (its returns are not its values)."""
    if definition.generator:
        return {}
    starts = [0, *(i + 1 for i, char in enumerate(text) if char == "\n")]

    def offset(where: tuple[int, int]) -> int:
        return starts[where[0]] + where[1] if where[0] < len(starts) else len(text)

    read: dict[tuple[int, int], tuple[tuple[int, int], str]] = {}
    previous: tuple[int, int] | None = None  # the statement before, calls left out
    for loc in raw:
        here = position(loc)[1:]
        if loc.get("type") == "return":
            if previous is not None and text.startswith("return", offset(previous)):
                expression = returned_expression(text, offset(previous), offset(here))
                if expression is not None:
                    read[here] = (previous, expression) if expression else (here, "")
            elif not text.startswith("{", definition.body):  # an arrow's expression body
                body = text[definition.body:offset(here)].strip()
                first = position(raw[0])[1:]
                if body and reads_only(body):
                    read[here] = (first, body)
            elif text.startswith("}", offset(here)):
                read[here] = (here, "")  # the body's end
            # (else a return whose statement V8 locates at its first call, ``return this.f(x) + 1``: it pauses)
        elif loc.get("type") != "call":
            previous = here
    return read
