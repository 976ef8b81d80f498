"""Go through delve's own DAP server (``dlv dap``; checked against delve 1.20 with Go 1.19).

What it is: delve is Go's debugger; ``dlv dap`` serves DAP on a TCP port. How it is started:
``dlv dap --listen 127.0.0.1:0`` in the program's module directory — delve picks a free port
itself (no race between choosing a port and binding it) and prints ``DAP server listening at:
host:port`` as its first stdout line, which is the readiness signal waited for (event-driven, with
a deadline), then polydbg connects. ``--client-addr`` (delve dials us) would spare parsing that
line, but the line is documented and stable, and ``--listen`` keeps one code path for our own
server and for a user's server: a port to attach to is a ``dlv --headless`` server (which speaks
DAP on its API port), reached the same way. delve builds a Go package or file itself (mode
"debug"), or runs a built binary ("exec") or a core file ("core").

Modules: ``backend`` (``DelveBackend``, the registry's entry point: lifecycle, events, values),
``build`` (where and how delve builds, launch/attach arguments, build failures), ``output`` (dlv's
pipes and output events → the program's output vs delve's own lines), ``stops`` (the goroutine a
pause or fatal error is shown on, hidden runtime frames), ``native`` (memory and raw commands),
``goroutines`` (how many there are when delve lists only some), ``waits`` and ``held`` (each goroutine's
wait, the mutex it waits for and the one its source says it holds), ``races`` (a -race report as a stop),
``assign`` (a variable set in any goroutine's frame), ``testfail`` (a Go test's failure, placed at the test's
line with its message), ``calls`` (call traces: stops taken and resumed unseen at each traced function's entry
and ``RET``s), ``returns`` (what a step out returned, read at the function's ``RET``), ``values`` (delve's
variables tidied). ``races``, ``testfail`` and ``calls`` each stop through internal function breakpoints sent with the
session's (``DelveBackend._send_functions``).

Quirks (checked against delve 1.20 with Go 1.19):

=======================================================  ====================================================
quirk                                                    what polydbg does
=======================================================  ====================================================
mode "debug" runs ``go build`` in dlv's working          dlv starts in the module directory (the nearest
directory and resolves ``program`` against it            go.mod above the program, else its directory)
delve already adds ``-gcflags='all=-N -l'`` in debug     no build flags are passed
mode, and splits ``buildFlags`` on spaces (passing that
flag again breaks the build)
the binary goes to ``__debug_bin`` in the user's tree    ``output`` in a private temporary directory, removed
                                                         at the end; a ``.go`` file is built alone, like ``go
                                                         run file.go``; a directory as a package
a build failure is a "Build Error:" output event and a   the launch error is ``go build failed:`` with the
bare launch error                                        compiler's messages
Go cannot place a build cache without HOME (some MCP     GOCACHE under the temporary directory
hosts)
the debuggee's stdout/stderr are not output events: the  both pipes are read and forwarded as program output,
debuggee inherits dlv's own                              except delve's lines: everything before the debuggee
                                                         exists (the listening line, start-up warnings) and
                                                         delve's log lines; console events "Type 'dlv help'
                                                         …" are dropped
``dlv dap`` cannot redirect a program's input            stdin is refused, saying to read a file instead
``terminated`` comes without ``exited`` when the         on ``terminated`` the session is ended here, and the
program ends; the exit status is logged only while       status line ("Process N has exited with status S")
disconnecting                                            becomes an ``exited`` event before ``terminated``
no ``process`` event                                     the launched program, dlv's child in its own process
                                                         group, is found in /proc and tracked so it cannot
                                                         outlive polydbg
a program killed from outside is noticed only when       "no such process" ends the session, saying so; while
delve tries to resume it (its threads stay zombies,      stopped, the program's threads are read every 0.25 s
unreaped, so a pidfd does not see it end)                and the session ends as soon as all have exited
an unrecovered panic or fatal error always stops         its message (a Go-quoted string) is unquoted; the
(reason "exception", no exception filters)               panic machinery's runtime frames (runtime.fatalpanic,
                                                         runtime.gopanic, …) are hidden, so frame 0 (the
                                                         report's location and locals) is the user function
                                                         that panicked
setVariable looks the variable up (and evaluates the     the variable is set through its address, evaluated in
value) in the current goroutine's topmost frame,         its own frame, the value evaluated there first
whatever the reference's frame                           (``assign``)
no wait reason, no ``goroutines`` command over DAP       each goroutine's status and wait reason read from
                                                         ``runtime.allgs`` (``waits``); a mutex's holder
                                                         inferred from the source (Go records none)
a ``-race`` report goes to stderr and the program runs   a breakpoint on ``runtime.raceSymbolizeCode`` finds
on: no stop; function breakpoints cannot name the race   the racing access, an instruction breakpoint after
detector's C symbols                                     its call stops it at the racy line (``races``)
a fatal error ("all goroutines are asleep") stops on     the stop is moved to a user goroutine (frame 0: the
the runtime thread that detected it, no user frame       deadlocked line); the error kept for exception_info
a pause names whichever thread delve halted first,       the stop is moved to a user goroutine, preferably one
often one with no goroutine (sysmon, in                  that was running; one caught inside the runtime (async
runtime.usleep)                                          preemption, a signal handler) is resumed and paused
                                                         again (a few times at most), runtime frames left on
                                                         top hidden: an infinite loop is reported at its line
at the entry point there is no goroutine yet             the current OS thread's stack is listed, up to its
                                                         unknown ("???") frames
at most 64 elements of a slice/map at first              ``child_slice`` pages further with ``filter: indexed``
synthetic children ``len()`` / ``string()``              dropped; containers count only their elements
goroutines are DAP threads, runtime-internal ones too    hidden (``dlv config hideSystemGoroutines false``
                                                         through ``command`` shows them)
at most 1,024 goroutines are listed (``maxGoroutines``,  the listing says how many there are, counted from
no option), said only in a console line                  the runtime's variables (``goroutines``); the line
                                                         is not the program's output
values are cut at 256 characters                         ``debug_evaluate`` uses the "clipboard" context:
                                                         values whole, strings loaded up to 4 KiB
unnamed results (``~r0``)                                noise until the function returns: left out
delve honours ``hitCondition`` without advertising it    the capability is set
no ``readMemory``/``writeMemory`` (``disassemble`` is    memory is read and written as a ``[N]uint8`` array
answered: the generic DAP one is used)                   cast from the address
no ``memoryReference``                                   a pointer's address comes from ``uintptr(expr)``
registers only while "showRegisters" is on               delve's "Registers" scope, switched on only while
                                                         they are read
raw commands: the repl prefix ``dlv <command>``; in DAP  those are offered, and named when another is asked
mode only ``help``, ``config`` and ``sources``
no data breakpoints in delve 1.20's DAP server           the capability is off; debug_watch says so and
                                                         offers debug_trace or a conditional breakpoint
attach: a bare ``dlv dap`` server has no session to      a pid → ``attach`` mode "local"; a port → a ``dlv
attach to                                                --headless`` server and mode "remote";
                                                         ``path_mappings`` become ``substitutePath``
a multi-client server keeps a detached client's          detaching from a remote server first clears this
breakpoints and leaves the program halted                client's breakpoints and resumes the program
delve kills a program that a single-client headless      (nothing to do: whatever the client asks)
server launched, on detach
a failing Go test (t.Errorf, t.Fatalf, testify) does     in a test run (mode "test"), a function breakpoint
not panic: delve stops on nothing                        on testing.(*common).Fail, the stop placed at the
                                                         frame Go's message names with that message, testing's
                                                         frames above it hidden and listed (testfail.py)
Fail calls its parent's Fail; tRunner calls Fail for a   those hits are resumed unseen; a step from a failure
panic before re-panicking; a step from Fail stays in     steps out of the hidden frames first
package testing
the DAP server sends no return values after a step out   before a step out (or over a ``return`` line), an
(1.20.2 and its source of Aug 2026: proc reads them,     instruction breakpoint on each ``RET`` of frame 0's
``Thread.ReturnValues``, for the terminal client only;   function, conditioned on its goroutine and frame: the
DAP shows return values of a call injection alone)       results read there, the step then finished (``returns``)
a breakpoint hit on the stepping goroutine ends the      the step goes on from the ``RET`` by a ``stepOut``
step (delve keeps it only across other goroutines' and
tracepoints')
=======================================================  ====================================================
"""
