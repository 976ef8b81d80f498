"""The Ruby that polydbg runs inside the program through rdbg's ``evaluate``, and what comes back: pure text, no I/O.

rdbg 1.4.0's DAP server lacks what polydbg asks of a debugger (see the package docstring), but it evaluates Ruby in
a stopped frame, with the debugger's own objects in reach (``DEBUGGER__::SESSION``, its breakpoints, ``CONFIG``).
So a file's old breakpoints are deleted, exception classes caught, methods broken on and variables set by Ruby
written here; hit counts and logpoints become the breakpoint's condition (rdbg evaluates it at each hit, in the
hit frame, without stopping when it is false). Every answer is ``inspect`` text: ``unquote`` reads a String's.
"""

from __future__ import annotations

import json
import re

from polydbg.backends.dap.wire import LOG_END, LOG_MARK
from polydbg.backends.kit.hits import HitCondition

ERROR_MARK = "__polydbg_error__ "  # what a failed evaluation answers, before the exception's class and message
NOTE_MARK = "<polydbg-note>"  # around a line on the program's stderr that is polydbg's, not the program's
NOTE_END = "</polydbg-note>"
HITS = "$__polydbg_hits"  # the program's global that counts each hit-conditioned breakpoint's hits
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "e": "\x1b", "s": " ", "0": "\0", "a": "\a", "b": "\b", "f": "\f",
            "v": "\v", '"': '"', "\\": "\\", "#": "#"}
_ESCAPE = re.compile(r"\\(u\{[0-9a-fA-F ]+\}|u[0-9a-fA-F]{4}|x[0-9a-fA-F]{1,2}|.)", re.DOTALL)


def literal(text: str) -> str:
    """``text`` as a single-quoted Ruby string (only ``\\`` and ``'`` are escaped there)."""
    return "'" + text.replace("\\", "\\\\").replace("'", "\\'") + "'"


def unquote(inspected: str) -> str:
    """The String a Ruby ``inspect`` (``"a\\n\\"b\\""``) shows; other text is returned as it is."""
    if len(inspected) < 2 or not (inspected.startswith('"') and inspected.endswith('"')):
        return inspected

    def one(match: re.Match[str]) -> str:
        code = match[1]
        if code.startswith("u{"):
            return "".join(chr(int(part, 16)) for part in code[2:-1].split())
        if code[0] in "ux" and len(code) > 1:
            return chr(int(code[1:], 16))
        return _ESCAPES.get(code, code)
    return _ESCAPE.sub(one, inspected[1:-1])


def guarded(expression: str) -> str:
    """``expression`` evaluated so that what it raises comes back as text marked ``ERROR_MARK`` (rdbg answers a
    raised exception as if it were the value). Assignments in it still reach the frame's locals."""
    return (f"begin\n{expression}\nrescue ::Exception => __polydbg_e\n"
            f"{literal(ERROR_MARK)} + __polydbg_e.class.name.to_s + ': ' + __polydbg_e.message.to_s\nend")


def failure(value: str, type_name: str | None) -> str | None:
    """The error an evaluation's answer reports (``guarded``'s mark, or a syntax error rdbg caught), or None."""
    text = unquote(value)
    if type_name == "String" and text.startswith(ERROR_MARK):
        return text[len(ERROR_MARK):]
    if type_name == "SyntaxError":
        return "SyntaxError: " + value.removeprefix("#<SyntaxError: ").removesuffix(">")
    return None


def returning_json(code: str) -> str:
    """``code`` whose value is dumped as JSON (the answer is then a String's inspect: ``unquote`` + json)."""
    return f"::JSON.generate(begin\n{code}\nend)"


def _interpolated(message: str) -> str:
    """A logpoint message with ``{expression}`` parts as a Ruby double-quoted string; an expression that raises
    reads ``<error: …>`` in the line."""
    out: list[str] = []
    depth, start = 0, 0
    for i, char in enumerate(message):
        if char == "{":
            if depth == 0:
                start = i + 1
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                expr = message[start:i]
                out.append("#{begin; (" + expr + ").to_s; rescue ::Exception => __polydbg_e; "
                           "\"<error: #{__polydbg_e.message}>\"; end}")
        elif depth == 0:
            out.append({"\\": "\\\\", '"': '\\"', "#": "\\#", "\n": "\\n"}.get(char, char))
    if depth:  # an unclosed brace is text
        out.append(message[start - 1:].replace("\\", "\\\\").replace('"', '\\"').replace("#", "\\#"))
    return '"' + "".join(out) + '"'


def _hit_test(hits: str, hit: HitCondition) -> str:
    if hit.op == "%":
        return f"{hits} % {hit.number} == 0"
    return f"{hits} {hit.op} {hit.number}"


def condition(bp_id: int, condition: str | None, hit_condition: str | None, log_message: str | None) -> str | None:
    """The condition rdbg gets for one breakpoint: the user's (an error in it is a note on stderr and no stop), the
    hit count (counted in ``HITS`` only when the condition holds), then for a logpoint the message written to
    stderr between ``LOG_MARK`` and ``LOG_END``, and false (no stop). None: stop at every hit."""
    parts = []
    if condition:
        note = (f"::STDERR.write({literal(NOTE_MARK)} + 'breakpoint #{bp_id}: its condition could not be evaluated: '"
                f" + __polydbg_e.class.name.to_s + ': ' + __polydbg_e.message.to_s + {literal(NOTE_END + chr(10))})")
        parts.append(f"(begin; ({condition}); rescue ::Exception => __polydbg_e; {note}; false; end)")
    if hit_condition:
        hits = f"{HITS}[{bp_id}]"
        test = _hit_test(hits, HitCondition.parse(hit_condition))
        parts.append(f"(({HITS} ||= ::Hash.new(0))[{bp_id}] += 1; {test})")
    if log_message is not None:
        line = f"{literal(LOG_MARK)} + {_interpolated(log_message)} + {literal(LOG_END + chr(10))}"
        parts.append(f"(::STDERR.write({line}); false)")
    return " && ".join(parts) if parts else None


def prepare_lines(path: str, conditions: list[str]) -> str:
    """Delete the line breakpoints rdbg holds in ``path`` (rdbg's setBreakpoints only adds, and keeps a line's first
    breakpoint over a new one), and compile each condition: the JSON answer lists each one's syntax error or null."""
    checks = ", ".join(f"begin; ::RubyVM::InstructionSequence.compile({literal(c)}); nil; "
                       "rescue ::SyntaxError => __polydbg_e; __polydbg_e.message; end" for c in conditions)
    return returning_json(
        f"__polydbg_p = [{literal(path)}, (::File.realpath({literal(path)}) rescue nil)]\n"
        "::DEBUGGER__::SESSION.instance_variable_get(:@bps).delete_if { |_, bp| "
        "bp.is_a?(::DEBUGGER__::LineBreakpoint) && !bp.oneshot? && __polydbg_p.include?(bp.path) && "
        "(bp.delete; true) }\n"
        f"[{checks}]")


def exceptions(classes: list[str], uncaught: bool) -> str:
    """Stop where an exception of one of ``classes`` (or a subclass) is raised, and (``uncaught``) at the end of a
    program an exception ends, in its frames (rdbg's postmortem mode); rdbg's earlier catch breakpoints go."""
    names = ", ".join(literal(name) for name in classes)
    return (
        "::DEBUGGER__::SESSION.instance_variable_get(:@bps).delete_if { |_, bp| "
        "bp.is_a?(::DEBUGGER__::CatchBreakpoint) && (bp.delete; true) }\n"
        f"[{names}].each {{ |c| ::DEBUGGER__::SESSION.add_catch_breakpoint(c) }}\n"
        f"::DEBUGGER__::CONFIG[:postmortem] = {'true' if uncaught else 'false'}\nnil")


def methods(specs: list[tuple[str, str, str, str | None]]) -> str:
    """Break on each method (class, ``#`` or ``.``, name, condition): rdbg's method breakpoints, made again. One
    whose class or method is not defined yet waits for it (rdbg's method-added tracker); the JSON answer lists
    each one's reason to wait, or null."""
    made = ", ".join(
        "begin; __polydbg_bp = ::DEBUGGER__::MethodBreakpoint.new(::TOPLEVEL_BINDING, "
        f"{literal(klass)}, {literal(op)}, {literal(name)}, cond: {literal(cond) if cond else 'nil'}); "
        "__polydbg_w = begin; __polydbg_bp.try_enable; nil; rescue ::Exception => __polydbg_e; "
        "::DEBUGGER__::METHOD_ADDED_TRACKER.enable; __polydbg_e.class.name + ': ' + __polydbg_e.message; end; "
        "::DEBUGGER__::SESSION.add_bp(__polydbg_bp); __polydbg_w; end"
        for klass, op, name, cond in specs)
    return returning_json(
        "::DEBUGGER__::SESSION.instance_variable_get(:@bps).delete_if { |_, bp| "
        "bp.is_a?(::DEBUGGER__::MethodBreakpoint) && (bp.delete; true) }\n"
        f"[{made}]")


def method_spec(name: str) -> tuple[str, str, str]:
    """A function breakpoint's name as (class, op, method): ``Box#total``, ``Box.create``, ``Mod::Box#total``, a
    bare ``helper`` (a method defined at the top level: Object's)."""
    match = re.fullmatch(r"\s*(?:(.+?)\s*([#.]))?\s*([A-Za-z_][\w]*[?!=]?)\s*", name)
    if match is None:
        raise ValueError(name)
    return (match[1] or "Object", match[2] or "#", match[3])


def exception_of() -> str:
    """The exception of an exception stop (rdbg's ``_raised`` in the stopped frame), as JSON [class, message]."""
    return returning_json("defined?(_raised) && _raised ? [_raised.class.name, _raised.message.to_s] : nil")


def decoded(value: str) -> object:
    """What a ``returning_json`` evaluation answered."""
    return json.loads(unquote(value))


def postmortem() -> str:
    """At rdbg's postmortem stop (the program ended by an exception), the exception's [class, message] as JSON;
    null at any other stop."""
    return returning_json("::DEBUGGER__::SESSION.instance_variable_get(:@postmortem) && defined?(_raised) && _raised ? "
                          "[_raised.class.name, _raised.message.to_s] : nil")


def forget_all() -> str:
    """Delete every breakpoint polydbg made in rdbg (lines, methods, exceptions), and postmortem stops: before a
    detach, so the program does not wait at one for a debugger that is gone."""
    return ("::DEBUGGER__::SESSION.instance_variable_get(:@bps).delete_if { |_, bp| "
            "(bp.is_a?(::DEBUGGER__::LineBreakpoint) && !bp.oneshot?) || bp.is_a?(::DEBUGGER__::MethodBreakpoint) || "
            "bp.is_a?(::DEBUGGER__::CatchBreakpoint) ? (bp.delete; true) : false }\n"
            "::DEBUGGER__::CONFIG[:postmortem] = false\nnil")
