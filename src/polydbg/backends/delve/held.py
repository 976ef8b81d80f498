"""Which mutexes a goroutine holds, read from its source: Go's sync.Mutex records no owner.

A ``sync.Mutex`` is a state word and a semaphore (``state``: 1 locked, 2 woken, 4 starving, waiters in
the bits above): nothing says which goroutine locked it, and neither the runtime nor delve can tell. A
goroutine waiting in ``Lock`` is known exactly (its ``sync.(*Mutex).Lock`` frame has the mutex); the
holder is inferred here, conservatively, from the source of each of its frames' functions: ``E.Lock()``
holds at the frame's current line when the statement

- comes before that line in a block enclosing it, in the same function (not in a closure, not in another
  ``case`` of a switch or select): every path to the line went through it (barring ``goto``);
- is a statement of its own (``if m.TryLock()`` or ``defer m.Lock()`` are not), not on that very line
  (a frame's line is the call in progress: ``B.Lock()`` there is being waited for, not held);
- and no ``E.Unlock()`` (not deferred) comes between them, anywhere: a branch may have run it.

The caller then evaluates ``E`` in the frame and keeps the claim only if it is a locked mutex that no
other goroutine claims too. What is missed (a lock taken in a function that has returned, a helper that
unlocks) is an owner not known, never a wrong one said as known. Pure text: no debugger is asked here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple

# a receiver expression: identifiers joined by dots, each with optional index or call parentheses (a.b[i].mu)
_OPERAND = r"[A-Za-z_]\w*(?:\[[^\[\]\n]*\]|\(\))?(?:\s*\.\s*[A-Za-z_]\w*(?:\[[^\[\]\n]*\]|\(\))?)*"
_LOCK = re.compile(rf"(?P<lead>\bdefer\s+|\bgo\s+)?(?P<operand>{_OPERAND})\s*\.\s*(?P<method>R?Lock)\s*\(\s*\)")
_UNLOCK = re.compile(rf"(?P<lead>\bdefer\s+|\bgo\s+)?(?P<operand>{_OPERAND})\s*\.\s*R?Unlock\s*\(\s*\)")
_SEND = re.compile(rf"(?P<operand>{_OPERAND})\s*<-")
_RECEIVE = re.compile(rf"<-\s*(?P<operand>{_OPERAND})")
_CLAUSE = re.compile(r"\b(?:case\b|default\s*:)")
_FUNC_HEADER = re.compile(r"\s*(?:(?:go|defer|return)\s+)?func\b")


class LockStatement(NamedTuple):
    line: int
    operand: str  # the receiver as written ("from.mu", "c"), whitespace removed
    method: str  # "Lock" or "RLock"


def code_only(source: str) -> str:
    """``source`` with comments, strings and runes blanked (same length, line breaks kept)."""
    out = list(source)
    i, n = 0, len(source)
    while i < n:
        ch = source[i]
        if source.startswith("//", i):
            end = source.find("\n", i)
            end = n if end < 0 else end
        elif source.startswith("/*", i):
            end = source.find("*/", i + 2)
            end = n if end < 0 else end + 2
        elif ch == "`":
            end = source.find("`", i + 1)
            end = n if end < 0 else end + 1
        elif ch in "\"'":
            end = i + 1
            while end < n and source[end] != ch and source[end] != "\n":
                end += 2 if source[end] == "\\" else 1
            end = min(n, end + 1)
        else:
            i += 1
            continue
        for k in range(i, end):
            if out[k] != "\n":
                out[k] = " "
        i = end
    return "".join(out)


@dataclass
class _Block:
    open: int  # offset of "{"
    close: int  # offset of "}" (the end of the text when unclosed)
    parent: _Block | None
    is_function: bool


class GoSource:
    """One Go file's blocks, for the questions asked of it (made once per file and version)."""

    def __init__(self, source: str) -> None:
        self.code = code_only(source)
        self._line_starts = [0] + [i + 1 for i, ch in enumerate(self.code) if ch == "\n"]
        self._blocks = self._parse_blocks()

    def _parse_blocks(self) -> list[_Block]:
        blocks: list[_Block] = []
        stack: list[_Block] = []
        for i, ch in enumerate(self.code):
            if ch == "{":
                block = _Block(i, len(self.code), stack[-1] if stack else None, self._opens_function(i))
                blocks.append(block)
                stack.append(block)
            elif ch == "}" and stack:
                stack.pop().close = i
        return blocks

    def _opens_function(self, brace: int) -> bool:
        """Whether the ``{`` at ``brace`` opens a function body: the words before it, back to the start of the
        statement or expression (past balanced brackets), begin with ``func`` (``go func``, ``return func`` …)."""
        i, depth = brace - 1, 0
        while i >= 0:
            ch = self.code[i]
            if ch in ")]":
                depth += 1
            elif ch in "([":
                if depth == 0:
                    break
                depth -= 1
            elif depth == 0 and ch in "{};=,:\n":
                break
            i -= 1
        return _FUNC_HEADER.match(self.code, i + 1, brace) is not None

    def offset(self, line: int) -> int:
        """The offset of the first non-blank character of ``line`` (1-based)."""
        start = self._line_starts[min(max(line, 1), len(self._line_starts)) - 1]
        end = self.code.find("\n", start)
        text = self.code[start:len(self.code) if end < 0 else end]
        return start + len(text) - len(text.lstrip())

    def line_of(self, offset: int) -> int:
        low, high = 0, len(self._line_starts) - 1
        while low < high:
            middle = (low + high + 1) // 2
            low, high = (middle, high) if self._line_starts[middle] <= offset else (low, middle - 1)
        return low + 1

    def line_text(self, line: int) -> str:
        start = self._line_starts[min(max(line, 1), len(self._line_starts)) - 1]
        end = self.code.find("\n", start)
        return self.code[start:len(self.code) if end < 0 else end]

    def _innermost(self, offset: int) -> _Block | None:
        found = None
        for block in self._blocks:
            if block.open < offset <= block.close and (found is None or block.open > found.open):
                found = block
        return found

    @staticmethod
    def _function_of(block: _Block | None) -> _Block | None:
        while block is not None and not block.is_function:
            block = block.parent
        return block

    def held_at(self, line: int, in_closure: bool = False) -> list[LockStatement]:
        """The ``Lock``/``RLock`` statements that hold at ``line`` (see the module docstring), in order; for
        a closure's frame, inside the function literal that opens on that line, if one does."""
        here = self.offset(line)
        if in_closure:
            literals = [block.open for block in self._blocks if block.is_function and self.line_of(block.open) == line]
            here = literals[-1] + 1 if literals else here
        function = self._function_of(self._innermost(here))
        if function is None:
            return []
        body = self.code[function.open:here]
        unlocked = {_squeezed(m["operand"]) for m in _UNLOCK.finditer(body) if not m["lead"]}
        held: list[LockStatement] = []
        for match in _LOCK.finditer(body):
            at = function.open + match.start("operand")
            operand = _squeezed(match["operand"])
            if match["lead"] or operand in unlocked or self.line_of(at) >= line or not self._starts_statement(at):
                continue
            block = self._innermost(at)
            if block is None or self._function_of(block) is not function or not block.open < here <= block.close:
                continue
            if self._clause_between(block, at, here):
                continue
            held.append(LockStatement(self.line_of(at), operand, match["method"]))
        return held

    def _starts_statement(self, offset: int) -> bool:
        before = self.code[:offset].rstrip(" \t")
        return not before or before[-1] in "\n;{}:"

    def _clause_between(self, block: _Block, start: int, end: int) -> bool:
        """A ``case``/``default`` label of ``block`` itself between ``start`` and ``end``: another clause."""
        return any(self._innermost(match.start()) is block for match in _CLAUSE.finditer(self.code, start, end))

    def lock_operands(self, line: int) -> list[tuple[str, str]]:
        """(receiver, method) of the ``Lock``/``RLock`` calls on ``line`` (the one a waiting goroutine makes)."""
        return [(_squeezed(m["operand"]), m["method"]) for m in _LOCK.finditer(self.line_text(line))
                if not m["lead"]]

    def channel_operands(self, line: int) -> list[str]:
        """The channels ``line`` sends to or receives from (``ch <- v``, ``<-ch``), as written."""
        text = self.line_text(line)
        sends = list(_SEND.finditer(text))
        arrows = {m.end() - 2 for m in sends}  # a send's arrow is no receive of what follows it
        found = [_squeezed(m["operand"]) for m in sends]
        found += [_squeezed(m["operand"]) for m in _RECEIVE.finditer(text) if m.start() not in arrows]
        return list(dict.fromkeys(found))


def _squeezed(operand: str) -> str:
    return re.sub(r"\s+", "", operand)
