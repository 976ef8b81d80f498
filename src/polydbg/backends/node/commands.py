"""``debug_command`` for Node: one raw CDP method with JSON params, sent to a target, answered as JSON.

``Debugger.getScriptSource {"scriptId": "42"}`` goes to the thread of the frame given (else the one
whose stop is shown, else the main thread); the answer is V8's result, indented, cut at 100,000
characters. What is not ``Domain.method`` or whose params are not a JSON object is refused with an
example of the form.

V8 answers a method it does not know with "'Debugger.foo' wasn't found" and bad params with "Invalid
parameters", which say what is wrong but not what would be right, and CDP itself cannot list its
methods (``Schema.getDomains`` names the domains only). Every Node inspector serves its whole
protocol at ``http://HOST:PORT/json/protocol`` (90 KB on Node 20), so that is read, once, when an
answer needs it: an unknown method is answered with its domain's methods (the closest first), an
unknown domain with the domains, bad params with the method's parameters; ``help``, ``help Domain``
and ``help Domain.method`` list them.
"""

from __future__ import annotations

import difflib
import json
import re
from typing import Any

from polydbg.backends.node import launcher
from polydbg.backends.node.target import Target
from polydbg.errors import AdapterGoneError, AdapterRequestError, echo

ANSWER_LIMIT = 100_000
REFERENCE = "https://chromedevtools.github.io/devtools-protocol/v8/"
_METHOD = re.compile(r"[A-Za-z]\w*\.\w+")  # a domain's case is V8's to judge (and ours to correct)
_HELP = re.compile(r"help(?:\s+(\S+))?", re.IGNORECASE)
_FORM = ('pass Domain.method followed by JSON params, e.g. Runtime.evaluate {"expression": "1+1"}; '
         "help lists the domains")


def parse(text: str) -> tuple[str, dict[str, Any]]:
    """``Domain.method {json}`` as (method, params); an AdapterRequestError saying what is wrong."""
    method, _, rest = text.strip().partition(" ")
    if not _METHOD.fullmatch(method):
        raise AdapterRequestError("command", f"{echo(method)} is not a CDP method; {_FORM}")
    try:
        params = json.loads(rest) if rest.strip() else {}
    except ValueError as exc:
        raise AdapterRequestError("command", f"the params are not JSON ({exc})") from exc
    if not isinstance(params, dict):
        raise AdapterRequestError("command", "the params must be a JSON object")
    return method, params


class Protocol:
    """The domains, methods and parameters of the Node a session debugs, from its ``/json/protocol``."""

    def __init__(self, domains: dict[str, dict[str, Any]] | None = None) -> None:
        self._domains = domains  # read on first need (a test may give them)

    async def domains(self, inspector: str | None) -> dict[str, dict[str, Any]] | None:
        """Domain name → its description; None when the inspector does not serve it."""
        if self._domains is None and inspector is not None:
            try:
                schema = await launcher.fetch_json(f"http://{inspector}/json/protocol", 5.0)
            except AdapterGoneError:
                return None
            found = schema.get("domains") if isinstance(schema, dict) else None
            self._domains = {str(d.get("domain")): d for d in found or [] if isinstance(d, dict)}
        return self._domains

    async def help(self, inspector: str | None, topic: str | None) -> str:
        """What ``help [Domain[.method]]`` answers."""
        domains = await self.domains(inspector)
        if domains is None:
            return f"this Node does not serve its protocol description; the methods are at {REFERENCE}"
        if topic is None:
            return ("domains: " + ", ".join(sorted(domains)) + "\nhelp Domain lists a domain's methods, "
                    "help Domain.method its parameters; " + _FORM.split(";")[0])
        name, _, method = topic.partition(".")
        domain = _case_insensitive(domains, name)
        if domain is None:
            return _no_domain(name, domains)
        if not method:
            return f"{domain}: " + ", ".join(_methods(domains[domain]))
        command = _command(domains[domain], method)
        if command is None:
            return _no_method(domain, method, domains[domain])
        return _signature(domain, command)

    async def refusal(self, inspector: str | None, method: str, problem: str) -> str:
        """V8's refusal of ``method``, with what would be right."""
        domains = await self.domains(inspector)
        name, _, short = method.partition(".")
        if "wasn't found" in problem:
            if domains is None:
                return f"Node has no method {method}: Schema.getDomains lists its domains, {REFERENCE} their methods"
            if name not in domains:
                return _no_domain(name, domains)
            return _no_method(name, short, domains[name])
        if domains is not None and (domain := domains.get(name)) is not None:
            command = _command(domain, short)
            if command is not None:
                return f"{problem}; {_signature(name, command)}"
        return problem


def _case_insensitive(names: dict[str, Any], name: str) -> str | None:
    return name if name in names else next((n for n in names if n.lower() == name.lower()), None)


def _methods(domain: dict[str, Any]) -> list[str]:
    return [str(c.get("name")) for c in domain.get("commands") or [] if isinstance(c, dict)]


def _command(domain: dict[str, Any], method: str) -> dict[str, Any] | None:
    commands = {str(c.get("name")): c for c in domain.get("commands") or [] if isinstance(c, dict)}
    name = _case_insensitive(commands, method)
    return commands[name] if name is not None else None


def _no_domain(name: str, domains: dict[str, dict[str, Any]]) -> str:
    closest = difflib.get_close_matches(name, list(domains), n=1)
    guess = f" (did you mean {closest[0]}?)" if closest else ""
    return (f"Node has no CDP domain {echo(name)}{guess}; its domains: {', '.join(sorted(domains))}. "
            "help Domain lists a domain's methods")


def _no_method(domain: str, method: str, description: dict[str, Any]) -> str:
    methods = _methods(description)
    closest = difflib.get_close_matches(method, methods, n=3, cutoff=0.5)
    guess = f" (did you mean {' or '.join(f'{domain}.{m}' for m in closest)}?)" if closest else ""
    return (f"Node's {domain} domain has no method {echo(method)}{guess}; its methods: {', '.join(methods)}. "
            f"help {domain}.method lists a method's parameters")


def _signature(domain: str, command: dict[str, Any]) -> str:
    """``Runtime.evaluate takes expression (string), objectGroup (string, optional), …``."""
    params = []
    for p in command.get("parameters") or []:
        kind = p.get("type") or str(p.get("$ref") or "object")
        params.append(f"{p.get('name')} ({kind}{', optional' if p.get('optional') else ''})")
    name = f"{domain}.{command.get('name')}"
    return f"{name} takes {', '.join(params)}" if params else f"{name} takes no params"


def help_topic(text: str) -> tuple[bool, str | None]:
    """Whether ``text`` asks for help, and about what (None: the domains)."""
    match = _HELP.fullmatch(text.strip())
    return (match is not None, match.group(1) if match else None)


async def send(target: Target, protocol: Protocol, method: str, params: dict[str, Any]) -> str:
    try:
        found = await target.request(method, params)
    except AdapterRequestError as exc:
        raise AdapterRequestError("command", await protocol.refusal(target.inspector, method, exc.message)) from exc
    return json.dumps(found, indent=1)[:ANSWER_LIMIT]
