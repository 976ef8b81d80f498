"""Which bindings of a paused frame's own scope are still in their temporal dead zone, found in the source:
declarations at the scope's own level, their statements' ends, strings, templates, comments and regular
expressions skipped."""

from __future__ import annotations

from polydbg.backends.node.lexical import Source, awaits_call, declarations, free_names, in_try, is_async_function

FUNCTION = """function f(a) {
  const early = g(a); // tdz
  let note;
  for (const item of a) {
    const label = item;
  }
  { let hidden = 1; }
  const done = true;
}
"""
SCOPE = ((0, 10), (8, 1))  # the function's scope: its parameters and body, as V8 gives it


def test_a_binding_is_uninitialized_until_its_declaration_has_run() -> None:
    names = {"early", "note", "done", "a"}
    assert Source(FUNCTION).uninitialized(SCOPE, (1, 2), names) == {"early": "const", "note": "let", "done": "const"}
    assert Source(FUNCTION).uninitialized(SCOPE, (1, 16), names) == {"early": "const", "note": "let", "done": "const"}
    assert Source(FUNCTION).uninitialized(SCOPE, (3, 2), names) == {"done": "const"}  # `let note;` ran: undefined


def test_nested_blocks_and_loop_heads_are_other_scopes() -> None:
    found = declarations(FUNCTION, FUNCTION.index("("), len(FUNCTION))
    assert sorted(found) == ["done", "early", "note"]  # not item, label or hidden
    head = FUNCTION.index("(const item")
    assert sorted(declarations(FUNCTION, head, FUNCTION.index(") {", head) + 1)) == ["item"]


def test_what_is_not_code_is_skipped() -> None:
    source = ("{ const re = /[/]{/g, s = `a${ {b: '}'}.b }` + \"{\"; // { const fake = 1\n"
              "  /* const alsoFake = 2 */ const { a, b: c, ...rest } = o, [x, , y = 1] = arr;\n"
              "  class K extends B {}\n"
              "  const long =\n    1 + 2;\n}")
    found = declarations(source, 0, len(source))
    assert sorted(found) == ["K", "a", "c", "long", "re", "rest", "s", "x", "y"]
    assert found["K"].keyword == "class"
    assert source[found["long"].end - 2:found["long"].end] == " 2"  # a line ending in "=" goes on


def test_a_modules_top_level_is_its_own_level() -> None:
    source = "const a = 1;\nfunction g() { const inner = 2; }\nlet b = a;\n"
    assert sorted(declarations(source, 0, len(source), own=0)) == ["a", "b"]
    assert Source(source).uninitialized(((0, 0), (3, 0)), (2, 8), {"a", "b"}, top_level=True) == {"b": "let"}


def test_a_scope_too_large_to_scan_is_not_judged() -> None:
    source = "{ const late = 1;" + " " * Source.LIMIT + "}"
    assert Source(source).uninitialized(((0, 0), (0, len(source))), (0, 2), {"late"}) == {}
    assert Source(source[:20] + "}").uninitialized(((0, 0), (0, 21)), (0, 2), {"late"}) == {"late": "const"}


def test_a_commonjs_scripts_top_level_spans_it_and_its_hashbang_line_is_not_code() -> None:
    source = "#!/usr/bin/env -S node --title=tool(1\nconst a = 1;\nlet b = a;\n"  # not code: its ( opens nothing
    whole = ((0, 0), (3, 0))  # Node's wrapper function's local scope: the whole file
    assert Source(source).is_whole(whole) and not Source(source).is_whole(((0, 5), (3, 0)))
    assert Source(source).uninitialized(whole, (2, 0), {"a", "b"}, top_level=True) == {"b": "let"}


def test_an_expression_reads_its_free_names() -> None:
    assert free_names("`${role} ${total}` + a.b + c?.d") == {"role", "total", "a", "c"}
    assert free_names("{key: value, shorthand}") == {"value", "shorthand"}
    assert free_names("ok ? yes : no") == {"ok", "yes", "no"}
    assert free_names("items.map(item => item + offset)") == set()  # it binds names of its own: not judged


TRIES = """function f(items) {
  try {
    if (items) { check(items); }
    AT_TRY
  } catch (error) { AT_CATCH }
  const later = () => { AT_ARROW };
  try { items.map((item) => { AT_CALLBACK }); } finally { AT_FINALLY }
  try { AT_CLEANED_UP } finally { done(); }
  try { try { AT_NESTED } finally { done(); } } catch { }
  AT_AFTER
}
"""


def test_a_pause_in_a_try_block_of_its_own_function_is_caught_there() -> None:
    found = {mark: in_try(TRIES, TRIES.index(mark)) for mark in
             ("AT_TRY", "AT_CATCH", "AT_ARROW", "AT_CALLBACK", "AT_FINALLY", "AT_CLEANED_UP", "AT_NESTED",
              "AT_AFTER")}
    # a callback's frame is its own function's: the try around its definition is its caller's; a try with a
    # finally alone catches nothing
    assert found == {"AT_TRY": True, "AT_CATCH": False, "AT_ARROW": False, "AT_CALLBACK": False,
                     "AT_FINALLY": False, "AT_CLEANED_UP": False, "AT_NESTED": True, "AT_AFTER": False}


def test_async_functions_and_awaited_calls_are_told_by_their_text() -> None:
    source = "async function load(a) {}\nconst f = async (x) => x;\nclass C { async get(k) {} sync(k) {} }\n"
    assert is_async_function(source, source.index("(a)"))
    assert is_async_function(source, source.index("async (x)"))
    assert is_async_function(source, source.index("(k) {} sync"))
    assert not is_async_function(source, source.index("(k) {} }"))
    line = "  const got = await this.store.load(key);\n  expect(load(key)).rejects;\n"
    assert awaits_call(line, line.index("load(key);"))
    assert not awaits_call(line, line.index("load(key))"))
