"""The callees of a Node call trace's recorded calls (``debug_trace(functions=…, depth=N)``): the program's own
functions a recorded call runs, N levels below it.

Nobody names the callees, so they are found by reading: the names a named function's body calls (``helper(…)``,
``this.parse(…)``, ``obj.weigh(…)``: ``functions.called_names``) bound by name among the program's definitions (its
loaded scripts and its project's files on disk, not ``node_modules``' nor Node's own), and their bodies' calls in
turn, to N levels. Each gets the entry and exit breakpoints a named function gets, never pausing at entry; what
decides whether a call is recorded is the page's, cheaply: a stack of the open calls of the bound functions, one
``[function, level]`` each (``HELPER``'s ``stack``). A named function's entry pushes level 0; a callee's entry
pushes one more than the top (its caller's level, or of the nearest open call of a bound function when code not
bound — a callback ``map`` calls, a library — lies between) and sends its record only when that level is at most N;
with the stack empty (called from elsewhere) it only reads the stack's length. A callee deeper than N is still
pushed and popped, so a recursion's exits end the right calls. An exit pops its function's innermost entry and is
sent (or pauses for V8's value) only for a recorded one.

A call an exception ends reaches no exit: at the exception's pause, the bound frames it leaves uncaught are popped
from the page's stack in one evaluation (``unwind``), which says which of them were recorded.

An async callee's exit is its code's ``return`` (the value its promise settles with, as for a named async function),
not the settling; a recorded async call suspended at an ``await`` stays open on the stack, so a callee that other
code runs meanwhile is counted as its callee.
"""

from __future__ import annotations

from polydbg.backends.node import functions
from polydbg.backends.node.functions import Definition

KEY = 'globalThis[Symbol.for("polydbg.calls")]'

# The page's side of the depth (spliced into ``calls.HELPER``'s object): its stack of open calls and their levels.
HELPER_PART = """N: %(depth)d, stack: [],
    pop(fn) { const s = this.stack; for (let i = s.length - 1; i >= 0; i--) if (s[i][0] === fn) return s.splice(i,
      1)[0][1]; return -1; },
    within() { return this.stack[this.stack.length - 1][1] < this.N; },
    inner(fn, args) { const level = this.stack[this.stack.length - 1][1] + 1; this.stack.push([fn, level]);
      send(JSON.stringify([fn, now(), args.map((a) => cut(show(a))), null, level])); return false; },
    skip(fn) { this.stack.push([fn, this.stack[this.stack.length - 1][1] + 1]); return false; },
    out(fn) { const level = this.pop(fn); if (level < 1 || level > this.N) return false;
      send(JSON.stringify([fn, now()])); return true; },
    gave(fn, value) { const level = this.pop(fn); if (level < 1 || level > this.N) return false;
      send(JSON.stringify([fn, now(), null, cut(show(value))])); return false; },
    unwind(fns) { return JSON.stringify(fns.map((fn) => this.pop(fn))); },"""


def entry(index: int, definition: Definition) -> str:
    """A callee's entry condition: nothing but the stack's length read unless a recorded call is open; its arguments
    read only when it is recorded."""
    args = ", ".join(expression for _, expression in definition.params)
    return (f"({KEY}?.stack.length > 0 && ({KEY}.within() ? {KEY}.inner({index}, [{args}]) : {KEY}.skip({index})))")


def first_call(index: int) -> str:
    """A callee's entry set by URL also pauses its first call within a recorded one in each realm (its exits are
    bound there)."""
    return f"({KEY}?.stack.length > 0 && {KEY}.first({index}))"


def reachable(named: list[tuple[str, Definition]], program: dict[str, tuple[str, list[Definition]]],
              depth: int) -> set[str]:
    """The names of the program's functions that the ``named`` definitions (each with its script's text) call, and
    those call in turn, to ``depth`` levels; ``program``: each script's (or file's) text and definitions."""
    defined: dict[str, list[tuple[str, Definition]]] = {}
    for text, defs in program.values():
        for definition in defs:
            defined.setdefault(definition.name, []).append((text, definition))
    found: set[str] = set()
    level = named
    for _ in range(depth):
        called = {name for text, definition in level for name in functions.called_names(text, definition)}
        new = {name for name in called if name in defined} - found
        found |= new
        level = [pair for name in sorted(new) for pair in defined[name]]
    return found
