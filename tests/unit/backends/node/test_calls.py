"""Which of a function's returns a Node call trace reads without a pause (``node.functions.returns_read``): a return
whose expression only reads is read at its statement, before it runs; one that calls pauses for V8's value."""

from __future__ import annotations

from typing import Any

from polydbg.backends.node.calls import search_home
from polydbg.backends.node.functions import definitions, reads_only, returned_expression, returns_read

FIB = """function fib(n) {
  if (n < 2) return n;
  return fib(n - 1) + fib(n - 2);
}
const square = (x) => x * x;
function log(text) {
  console.log(text);
}
function* counter() {
  return 1;
}
class Scale { apply(x) { return this.times(x) + 1; } }
"""


def located(*places: tuple[int, int] | tuple[int, int, str]) -> list[dict[str, Any]]:
    """V8's break locations as getPossibleBreakpoints lists them (0-based line and column, a type where it has one)."""
    return [{"scriptId": "1", "lineNumber": p[0], "columnNumber": p[1], **({"type": p[2]} if len(p) > 2 else {})}
            for p in places]


def named(name: str) -> Any:
    return next(d for d in definitions(FIB) if d.name == name)


def test_a_return_that_only_reads_is_read_at_its_statement_and_one_that_calls_pauses() -> None:
    # V8's locations in fib (Node 20): the if, the first return statement and its return, the second return
    # statement with its two calls and its return
    raw = located((1, 2), (1, 13), (1, 22, "return"), (2, 2), (2, 9, "call"), (2, 22, "call"), (2, 33, "return"))
    assert returns_read(FIB, raw, named("fib")) == {(1, 22): ((1, 13), "n")}


def test_an_arrow_s_expression_body_and_a_body_s_end_are_read_where_they_are() -> None:
    assert returns_read(FIB, located((4, 22), (4, 27, "return")), named("square")) == {(4, 27): ((4, 22), "x * x")}
    log = located((6, 2), (6, 10, "call"), (7, 0, "return"))
    assert returns_read(FIB, log, named("log")) == {(7, 0): ((7, 0), "")}
    assert returns_read(FIB, located((9, 2), (9, 11, "return")), named("counter")) == {}


def test_a_return_whose_statement_v8_locates_at_its_call_pauses() -> None:
    """A body of one ``return this.times(x) + 1``: V8 lists the call and the return, no statement before them (it
    was read as the body's end: undefined)."""
    assert returns_read(FIB, located((11, 30, "call"), (11, 43, "return")), named("apply")) == {}


def test_what_only_reads() -> None:
    assert all(reads_only(e) for e in ["n", "n * n", "{ length: text.length, text }", "a === b ? a : b", "arr[i]",
                                       "typeof x", "(a + b) / c"])
    assert not any(reads_only(e) for e in ["f(x)", "a.b()", "cb?.(1)", "x = 1", "x++", "await p", "new Date()",
                                           "`${x}`", "x => x", "arr[i](1)", "x += 1"])
    assert returned_expression("  return;", 2, 9) == ""
    assert returned_expression("  returned(x);", 2, 13) is None


def test_a_runner_s_entry_in_node_modules_looks_for_the_functions_in_the_project() -> None:
    """A test run's program is the runner's entry (node_modules/vitest/vitest.mjs): the look for a trace's
    functions from its folder read vitest's bundled files and every package's, and bound their ``parse``."""
    assert search_home("/p/node_modules/vitest/vitest.mjs", "/p") == "/p"
    assert search_home("/p/node_modules/.pnpm/jest@30/node_modules/jest/bin/jest.js", "/p/pkg") == "/p/pkg"
    assert search_home("/p/src/app.js", "/elsewhere") == "/p/src"
    assert search_home(None, "/p") == "/p"
