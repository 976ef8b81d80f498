"""Python through debugpy: its adapter over stdio, the debuggee under a TCP_NODELAY shim, child processes as
stops of their own.

What it is: debugpy is Microsoft's Python debugger: a DAP adapter (``debugpy.adapter``) that drives
pydevd inside the debuggee over a socket. How it is started: ``python -c <shims/adapter.py>`` (the
adapter, run by polydbg's own interpreter, under a shim) over stdio; ``launch`` has the adapter's
launcher run the program with the chosen interpreter under ``shims/debuggee.py``. ``attach`` goes
to a pid, or straight to the adapter of a program started with ``python -m debugpy --listen
host:port`` (a TCP connection, no adapter of ours). With ``subProcess`` on, every Python child
process is attached too (``children``).

Modules: ``backend`` (``DebugpyBackend``, the registry's entry point: the program and its children
as one backend), ``process`` (``DebugpyProcess``: one Python process), ``children`` (a child's
connection and its ids folded into the parent's), ``python`` (interpreters, library paths,
tracebacks, pydevd's synthetic children: pure), ``lines`` (the line a breakpoint on a line without code is
sent as), ``pydevd_log`` (pydevd's messages, out of the
program's stderr), ``probe`` (the thread that lets a pause stop a program blocked in C), ``threads`` (calls into
``shims/threads.py``: locks, asyncio tasks, the frames of threads debugpy has not stopped), ``inject`` (whether gdb
can inject debugpy into a running Python here); ``shims/``: the
adapter's and the debuggee's start-up code, and ``pydevd/``, polydbg's value formatters loaded by pydevd.

Quirks (checked against debugpy 1.8.22):

==========================================================  ===================================================
quirk                                                       what polydbg does
==========================================================  ===================================================
debugpy's sockets (adapter ↔ pydevd) leave Nagle on, which  the adapter runs under a shim that sets TCP_NODELAY
with delayed ACKs costs ~40 ms per request (debugpy issue   on its sockets; the debuggee under one that sets it
2054)                                                       on its first TCP connection (the one back to the
                                                            adapter) and then restores ``socket.connect``, so
                                                            the user's program sees an unpatched socket module.
                                                            (debugpy starts the launcher itself, unshimmed; its
                                                            connection carries only process events.)
the target interpreter needs no debugpy                     the launcher runs the adapter's copy
pydevd compiles the whole file again for each breakpoint    the debuggee shim memoizes pydevd's
of a ``setBreakpoints`` (one more breakpoint in a file      ``_get_code_lines`` by file, mtime and size (0.45 s)
with 2,000 cost 22–35 s)
the adapter ends itself (``os._exit(1)``) when a handler    the adapter shim drops an answer or event to a
answers a request or sends an event on a connection that    connection that has closed, as debugpy does for a
has just closed (a child's configurationDone, the report    handler's last answer (was: the session lost with
of sockets when a launch session ends)                      its exit code, 1 run in 5 to 3 of a pool under load)
a child that ends before it is attached is an attach        said as such ("ended before the debugger attached
error ("Server[3] disconnected unexpectedly", or none)      to it"), not as a failure
pydevd shows at most 100 children of a container and        ``child_slice`` evaluates a slice (``python.
ignores start/count                                         slice_expression``)
pydevd adds synthetic children (``len()``, groups of        they are filtered; ``len()`` is kept for
dunders, a "more" marker) and pads indices with zeros       ``length_of``; indices lose their zeros
pydevd appends "(note: full exception trace is shown but    the note is cut from stops and exception info
execution is paused at: …)"
an evaluate error is a full traceback through pydevd        cut to the exception, a SyntaxError's caret, and
(~2 KB of its frames)                                       where it was raised (``python.python_error``)
justMyCode skips library code: a breakpoint there is        justMyCode is off when a breakpoint at the start is
"excluded by filters", a step into it is skipped, a thread  in a library; otherwise the message says to
running only library code lists no frames                   debug_restart, the step's warning says how, and
                                                            ``frameless`` says why with the expression that
                                                            lists the thread's frames (``python.frameless``)
pydevd binds a breakpoint on a line without code to the     it is sent as the next line with code (``lines``), where
line with code before it (a trace point on a comment after  gdb, lldb-dap, Node and the JVM bind it; a line inside a
a loop recorded every turn of the loop)                     statement over several lines, as that statement
the launch shim's ``<module>`` frame ends every stack       dropped, and the total counted without it
pydevd waits 0.5 s for a thread that is not stopped (one    the debuggee shim sets that wait to 0: such a
blocked in C: a lock, a sleep) before it answers its        thread's stack is the frames it is in, at once
stack, and the adapter answers one request after another:   (3 ms); the all-threads listing is bounded in time
2,000 such threads cost 21 minutes, and the session with    anyway (``session/stacks.py``)
them
an unattached child process blocks at its first             each child is attached (a second connection to
breakpoint for good                                         the adapter) and configured with the session's
                                                            breakpoints; one stop is shown at a time
``SystemExit`` stops as an exception                        ``breakOnSystemExit: []``: an exit is an exit
attach to a pid injects through gdb; where gdb cannot       gdb is first made to call a function in a throwaway
write registers (gdb 13 on some VMs: "Couldn't write        process (``inject``, once per gdb): if it cannot, the
extended state status: Bad address") the program dies      attach is refused at once with gdb's words and what
(``OSError: [Errno 514]``) and debugpy waits 60 s           works instead, the program untouched; a failure of
                                                            debugpy's injector ends the wait at once, with its
                                                            output
a program in C code that holds the interpreter's lock       the answer offers the native view of the same pid
cannot answer even ``threads``                              (``busy_hint``)
a child is announced with the parent's launch settings,     a child is attached with ``redirectOutput`` off: the
``redirectOutput`` too: its inherited stdout reached us     launcher reads what it writes to the program's
through the launcher and its own redirection (each line     streams
twice)
a ``sqlite3.Row`` has no children ("0 items"); a pandas     pydevd extensions of polydbg's (``shims/pydevd``,
DataFrame's value is its whole repr and its children       found while pydevd loads; sys.path is restored before
every attribute (~60); a numpy array's children are        the program runs): a one-line summary, rows or
its metadata and 500 items                                 elements as children (paged by slicing); they serve
                                                           a type only when its package is already imported
inside a list, dict, tuple or set pydevd writes each value  the extensions make pydevd's container walker ask the
by repr(): ``[<sqlite3.Row object at 0x…>, …]``, a          providers first, as for a value alone; and the session
DataFrame's repr over many lines in a dict's value          shows every value on one line (a break reads \\n)
pydevd writes its warnings ("thread._ident is None in       ``PYDEVD_DEBUG_FILE`` sends them to a private
_get_related_thread!", every child's "frozen modules are    directory, logged when the session ends
being used") to the program's stderr                        (``pydevd_log``)
a pause stops nothing while every thread is blocked in C    a probe thread started by the shim with the program is
(a lock, a sleep, an idle asyncio loop): no Python line     woken through a FIFO when a pause stopped nothing within
runs, so pydevd's trace function never sees the request    0.2 s; it runs one line and the program stops (2 ms);
                                                            it is left out of the threads, its stop shown as main's
a thread blocked in C is not stopped at a stop: pydevd      its frames are read by a helper evaluated in the stopped
lists its stack but "Unable to find thread" for its         thread's frame (``shims/threads.py``), matched by name
variables and evaluations                                   and line
Task.get_stack() gives one frame of a suspended task (3.11) the coroutine chain is walked through ``cr_await``
==========================================================  ===================================================
"""
