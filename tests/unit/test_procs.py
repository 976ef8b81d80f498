"""A debugger's stderr, quoted in errors: its end, and always what a traceback there raised."""

from __future__ import annotations

from polydbg.procs import DebuggerProcess

# debugpy's adapter logging a handler's failure (then os._exit(1)): the exception line, then ~20 lines of the
# stack where it logged it
LOGGED = """\
E+00012.345: /handling #7 request "disconnect" from Client[3]/
             Handler 'disconnect_request' (file '/x/clients.py', line 731)
             couldn't handle #7 request "disconnect" from Client[3]:

             Traceback (most recent call last):
               File "/x/messaging.py", line 1518, in _run_handlers
                 handler()
               File "/x/sessions.py", line 169, in finalize
                 self._finalize(why, terminate_debuggee)
             KeyError: 4242

             Stack where logged:
""" + "".join(f"               File \"/x/frame{i}.py\", line {i}, in f{i}\n                 call{i}()\n"
              for i in range(12))


def test_the_exception_line_is_quoted_though_the_tail_ends_long_after_it() -> None:
    proc = DebuggerProcess("debugpy")
    for line in LOGGED.splitlines(keepends=True):
        proc.remember(line)
    hint = proc.stderr_hint()
    assert "KeyError: 4242" in hint and "frame11.py" in hint, hint
    assert len(hint) < 700


def test_the_last_of_chained_tracebacks_is_the_one_quoted() -> None:
    proc = DebuggerProcess("adapter")
    for line in ["Traceback (most recent call last):", '  File "a.py", line 1, in <module>', "    x()",
                 "ValueError: first", "", "During handling of the above exception, another exception occurred:",
                 "", "Traceback (most recent call last):", '  File "a.py", line 3, in <module>', "    y()",
                 "RuntimeError: second", *(f"noise {i}" for i in range(40))]:
        proc.remember(line + "\n")
    hint = proc.stderr_hint()
    assert "RuntimeError: second" in hint and "ValueError" not in hint and "During handling" not in hint, hint


def test_no_traceback_no_addition() -> None:
    proc = DebuggerProcess("gdb")
    proc.remember("just a line\n")
    assert proc.stderr_hint() == "; gdb stderr: just a line"
    assert DebuggerProcess("x").stderr_hint() == ""
