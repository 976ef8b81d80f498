"""``debug_command`` for Node: one raw CDP method with JSON params, sent to a target, answered as JSON.

``Debugger.getScriptSource {"scriptId": "42"}`` goes to the thread of the frame given (else the one
whose stop is shown, else the main thread); the answer is V8's result, indented, cut at 100,000
characters. What is not ``Domain.method`` or whose params are not a JSON object is refused with an
example of the form.
"""

from __future__ import annotations

import json
import re
from typing import Any

from polydbg.backends.node.target import Target
from polydbg.errors import AdapterRequestError, echo

ANSWER_LIMIT = 100_000
_METHOD = re.compile(r"[A-Z]\w*\.\w+")


def parse(text: str) -> tuple[str, dict[str, Any]]:
    """``Domain.method {json}`` as (method, params); an AdapterRequestError saying what is wrong."""
    method, _, rest = text.strip().partition(" ")
    if not _METHOD.fullmatch(method):
        raise AdapterRequestError("command", f"{echo(method)} is not a CDP method; pass Domain.method followed "
                                             'by JSON params, e.g. Runtime.evaluate {"expression": "1+1"}')
    try:
        params = json.loads(rest) if rest.strip() else {}
    except ValueError as exc:
        raise AdapterRequestError("command", f"the params are not JSON ({exc})") from exc
    if not isinstance(params, dict):
        raise AdapterRequestError("command", "the params must be a JSON object")
    return method, params


async def send(target: Target, method: str, params: dict[str, Any]) -> str:
    found = await target.request(method, params)
    return json.dumps(found, indent=1)[:ANSWER_LIMIT]
