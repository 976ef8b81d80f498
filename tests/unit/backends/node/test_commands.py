"""debug_command's text: a CDP method and JSON params, or a refusal that shows the form."""

from __future__ import annotations

import pytest

from polydbg.backends.node.commands import parse
from polydbg.errors import AdapterRequestError


def test_a_method_with_and_without_params() -> None:
    assert parse('Debugger.getScriptSource {"scriptId": "42"}') == ("Debugger.getScriptSource", {"scriptId": "42"})
    assert parse("  Runtime.getHeapUsage  ") == ("Runtime.getHeapUsage", {})


@pytest.mark.parametrize(("text", "says"), [
    ("evaluate 1+1", "is not a CDP method; pass Domain.method followed by JSON params"),
    ("Runtime.evaluate {expression: 1}", "the params are not JSON"),
    ("Runtime.evaluate [1]", "the params must be a JSON object")])
def test_what_is_not_a_command_is_refused(text: str, says: str) -> None:
    with pytest.raises(AdapterRequestError, match=says):
        parse(text)
