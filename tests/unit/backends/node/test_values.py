"""Pure helpers around RemoteObjects: an exception's one line, a value passed back, module clutter,
and the source maps that could not be read."""

from __future__ import annotations

from polydbg.backends.base import Variable
from polydbg.backends.node.inspection import is_noise
from polydbg.backends.node.scripts import Scripts
from polydbg.backends.node.values import call_argument, error_message, exception_text, text_of


def test_an_exception_reads_as_its_first_line() -> None:
    assert exception_text({"exception": {"description": "TypeError: x is undefined\n    at f (a.js:1)"}}) == \
        "TypeError: x is undefined"
    assert exception_text({"exception": {"type": "number", "value": 3, "description": ""}}) == "3"
    assert exception_text({"text": "Uncaught"}) == "Uncaught"
    assert exception_text({}) == "exception"


def test_an_error_s_message_is_read_without_its_name_a_bundler_s_underscore_or_not() -> None:
    """chai's class is _AssertionError, named AssertionError: the raised log read "_AssertionError: AssertionError:
    expected …" (content-type's vitest tests)."""
    stack = "\n    at f (a.js:1)"
    assert error_message("_AssertionError", "AssertionError: expected 1 to equal 2" + stack) == "expected 1 to equal 2"
    assert error_message("TypeError", "TypeError: x is undefined" + stack) == "x is undefined"
    assert error_message("Oops", "Custom: named otherwise" + stack) == "Custom: named otherwise"
    assert error_message("AssertionError", "AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\n"
                         "1 !== 2\n" + stack) == "Expected values to be strictly equal: 1 !== 2"
    # it read "AssertionError: AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:", its first line


def test_an_error_in_a_preview_is_one_line() -> None:
    error = {"name": "_error", "type": "object", "subtype": "error",
             "value": 'ZodError: [\n  {\n    "code": "invalid_type"\n  }\n]'}
    result = {"type": "object", "className": "Object", "description": "Object",
              "preview": {"properties": [{"name": "success", "type": "boolean", "value": "false"}, error]}}
    assert text_of(result) == "{success: false, _error: ZodError: [ …}"


def test_a_value_passed_back_to_v8() -> None:
    assert call_argument({"type": "object", "objectId": "o1"}) == {"objectId": "o1"}
    assert call_argument({"type": "number", "unserializableValue": "NaN"}) == {"unserializableValue": "NaN"}
    assert call_argument({"type": "undefined"}) == {}
    assert call_argument({"type": "string", "value": "s"}) == {"value": "s"}


def test_module_clutter_is_noise() -> None:
    assert is_noise(Variable("require", "ƒ require(path)", "function"))
    assert is_noise(Variable("__vite_ssr_import_0__", "{…}", "Object"))
    assert is_noise(Variable("__defProp", "ƒ defineProperty()", "function"))  # esbuild's, under tsx
    assert not is_noise(Variable("__name", '"a user\'s"', "string"))
    assert not is_noise(Variable("module", "3", "number"))  # a local the user named so
    assert not is_noise(Variable("total", "3", "number"))


def test_unreadable_source_maps_are_named() -> None:
    scripts = Scripts()
    assert scripts.map_problems() == ""
    scripts.parsed({"scriptId": "1", "url": "file:///nowhere/a.js", "sourceMapURL": "a.js.map"})
    scripts.parsed({"scriptId": "2", "url": "file:///nowhere/node_modules/b.js", "sourceMapURL": "b.js.map"})
    assert scripts.map_problems() == (" (the source map of /nowhere/a.js could not be read: cannot read source map "
                                      "/nowhere/a.js.map: No such file or directory)")
    scripts.parsed({"scriptId": "3", "url": "file:///nowhere/c.js", "sourceMapURL": "data:,{"})
    assert scripts.map_problems().startswith(" (the source maps of 2 loaded scripts could not be read; /nowhere/a.js")
