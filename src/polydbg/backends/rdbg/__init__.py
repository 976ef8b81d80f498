"""Ruby through rdbg's own DAP server (the ``debug`` gem; checked against debug 1.4.0, Debian's Ruby 3.1).

What it is: rdbg is Ruby's debugger; it runs inside the program's process and serves DAP on a socket. How it is
started: ``ruby -r <gem>/lib/debug/open program args`` with ``RUBY_DEBUG_SOCK_PATH`` in a private directory
(``launch``); the program stops at its first line and rdbg writes ``wait for debugger connection...`` on stderr,
the readiness signal waited for (event-driven, with a deadline), then polydbg connects. The project's own debug
gem is used through Bundler when its Gemfile.lock names one (``gems``); the launch's console line says which.
An attach reaches a program started under ``rdbg --open`` (``ruby -r debug/open``): by ``host``/``port``
(``--port``), by ``pid`` (its UNIX socket found in /proc), or with ``program`` naming the socket of a
``--sock-path``.

Modules: ``backend`` (``RdbgBackend``: lifecycle, events, Ruby at a stop), ``launch`` (command, environment,
sockets), ``gems`` (which debug gem), ``output`` (the program's pipes), ``ruby`` (the Ruby polydbg evaluates, and
reading its answers), ``values`` (what each value's expression is, to set it), ``failures`` (a test run's failure
shown in the test's frame), ``calls`` (call traces and the raised log: ``shims/recorder.rb``, a TracePoint in the
program).

Quirks (read in ``lib/debug/server_dap.rb`` and tried; debug 1.4.0):

=======================================================  ====================================================
quirk                                                    what polydbg does
=======================================================  ====================================================
an unknown DAP request raises in rdbg's reader thread    only the requests rdbg answers are sent: never
and ends the connection                                  setVariable, exceptionInfo, restart, setDataBreakpoints
"launch" resumes at configurationDone; "attach" stops    "attach" always: the program is stopped when
there (reason "pause")                                   configured, then resumed (or shown: stop_on_entry)
a program waiting at its first line sends no stopped     the stopped thread is found by asking each one's stack
event until configurationDone
setBreakpoints adds and never deletes; a line's second   a file's old breakpoints are deleted in Ruby
breakpoint is dropped as a duplicate                     (``SESSION.@bps``) before its new ones are sent
setFunctionBreakpoints and setExceptionBreakpoints       method breakpoints (``Class#m``, ``Class.m``, ``m``) and
answer success and do nothing (filters "any" and         catch breakpoints by class are made in Ruby; "raised"
"RuntimeError" only)                                     catches Exception
no "uncaught" exception stop                             rdbg's postmortem mode: the program ended by an
                                                         exception stops in the frames it was raised in
                                                         (reported as an exception; ``exit``'s SystemExit is
                                                         resumed); no stepping there, rdbg refuses it
no hit conditions, no logpoints                          both are the condition rdbg evaluates at each hit: a
                                                         hit count in ``$__polydbg_hits``, a logpoint's line
                                                         written to stderr between marks, then false
a condition that raises prints "[EVAL ERROR]" on the     conditions are compiled when set (a syntax error is
program's stdout                                         the breakpoint's refusal); one that raises is a note
                                                         on the console and no stop
no setVariable, no evaluateName                          the value's path is remembered (``values``) and the
                                                         assignment evaluated in its frame
an evaluation that raises answers the exception as a     the expression is wrapped: what it raises is marked
value, with success                                      and becomes the error
no exceptionInfo                                         the stop's ``_raised`` (rdbg's name for the exception
                                                         at a catch or postmortem stop) read in Ruby;
                                                         ``$exception`` is ``_raised``
an Array's elements only with ``filter: "indexed"``      asked that way, paged; ``#class`` entries left out
the globals scope reads "Not implemented yet..."         left out
stackTrace ignores startFrame/levels                     the frames are sliced here
no output events: the program's stdout/stderr are the    both pipes are read; rdbg's "DEBUGGER:" lines are kept
process's own                                            for error messages, not shown as the program's
no "exited" event: the socket closes when the program    the exit status is the process's
ends
no "continued" events                                    (nothing needed: resumes are polydbg's)
``finish`` stops at the method's return event, in it,    one step over more reaches the caller; the return
with ``_return`` among its locals                        event's ``_return`` is shown there as what the call
                                                         returned (``kit.returns``), as at any return event
no evaluation in a running program                       a call trace is a TracePoint armed at a stop, its
                                                         records sent over a socket of polydbg's
Ractors                                                  not debugged by rdbg 1.4.0 ("TODO: Ractor support"):
                                                         only the main Ractor's threads are listed
=======================================================  ====================================================
"""
