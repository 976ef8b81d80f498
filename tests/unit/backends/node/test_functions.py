"""Where a named JavaScript function is defined (``node.functions``): the forms a function is written in, its
owner, its parameters, and how an agent's name matches it."""

from __future__ import annotations

from polydbg.backends.node.functions import called_names, closest, definitions, matches

SOURCE = """#!/usr/bin/env node
function fib(n) { if (n < 2) return n; return fib(n - 1) + fib(n - 2); }
class Parser extends Base {
  constructor(opts = {}) { super(); this.o = opts; }
  static of(x) { return new Parser(x); }
  async parse(s, ...rest) {
    if (s == 1) { return 2; }
    const helper = (a, {b, c}) => a + b;
    return helper(s, {b: 1});
  }
}
const util = {
  add(a, b) { return a + b; },
  mul: function (a, [b]) { return a * b; },
  neg: x => -x,
};
Parser.prototype.extra = function (q) { return q; };
if (x == 2) { y(); }
while (ready()) { go(); }
"""


def test_each_form_of_a_named_function_with_its_owner_and_parameters() -> None:
    found = {d.qualified: d.params for d in definitions(SOURCE)}
    assert found == {
        "fib": (("n", "n"),),
        "Parser.constructor": (("opts", "opts"),),
        "Parser.of": (("x", "x"),),
        "Parser.parse": (("s", "s"), ("...rest", "rest")),
        "helper": (("a", "a"),),  # an arrow's destructured parameter has no name, and no arguments[i]
        "util.add": (("a", "a"), ("b", "b")),
        "util.mul": (("a", "a"), ("arguments[1]", "arguments[1]")),
        "util.neg": (("x", "x"),),
        "Parser.extra": (("q", "q"),),
    }


def test_a_body_starts_where_the_function_s_code_does() -> None:
    fib = next(d for d in definitions(SOURCE) if d.name == "fib")
    assert SOURCE[fib.body] == "{" and SOURCE[fib.at:].startswith("fib(n)")
    neg = next(d for d in definitions(SOURCE) if d.name == "neg")
    assert SOURCE[neg.body:].startswith("-x")


def test_names_match_as_agents_write_them() -> None:
    parse = next(d for d in definitions(SOURCE) if d.name == "parse")
    fib = next(d for d in definitions(SOURCE) if d.name == "fib")
    assert matches("parse", parse, "/p/lib/parser.js")
    assert matches("Parser.parse", parse, "/p/lib/parser.js")
    assert not matches("Lexer.parse", parse, "/p/lib/parser.js")
    assert matches("lib/parser.js:Parser.parse", parse, "/p/lib/parser.js")
    assert matches("parser.js:parse", parse, "/p/lib/parser.js")
    assert not matches("other.js:parse", parse, "/p/lib/parser.js")
    assert matches("parser.fib", fib, "/p/lib/parser.js")  # module.func: a top-level function of the module
    assert not matches("parser.parse", parse, "/p/lib/parser.js")


def test_the_closest_names_to_one_that_matches_none() -> None:
    assert closest("fibb", ["fib", "Parser.parse"]) == ["fib"]
    assert closest("Parser.prase", ["fib", "Parser.parse"]) == ["Parser.parse"]


def test_typescript_types_and_async_functions() -> None:
    source = """class Cart {
  private items: number[] = [];
  public async total(discount: number): Promise<number> { return 1; }
}
async function leaf(order: Order): Promise<number> { return 2; }
const twice = (n: number): number => n * 2;
"""
    found = {d.qualified: (d.params, d.asynchronous, source[d.body]) for d in definitions(source)}
    assert found == {"Cart.total": ((("discount", "discount"),), True, "{"),
                     "leaf": ((("order", "order"),), True, "{"),
                     "twice": ((("n", "n"),), False, "n")}


def test_the_names_a_function_calls_for_a_trace_of_its_callees() -> None:
    """Where a trace with a depth binds callees: each body's calls, by name (in a template's ``${…}`` too), its own
    recursion and the keywords that take parentheses left out; an arrow's expression body ends with it."""
    source = ("const g = (x) => helper(x) + other(x), h = k(1);\n"
              "function helper(y) { if (y) { return [y].map((z) => twice(z)); } return this.parse(y); }\n"
              "function label(n) { return `${n}: ${shout(`x${pad(n)}`)}`; }\n")
    called = {d.qualified: called_names(source, d) for d in definitions(source)}
    assert called == {"g": {"helper", "other"}, "helper": {"map", "twice", "parse"}, "label": {"shout", "pad"}}
    called = {d.qualified: called_names(SOURCE, d) for d in definitions(SOURCE)}
    assert called["fib"] == set() and called["Parser.parse"] == {"helper"} and called["Parser.of"] == {"Parser"}
