"""The node backend: JavaScript and TypeScript over the V8 inspector (CDP).

**The debugger.** Node is both the debugger and the debuggee: its inspector speaks the Chrome DevTools
Protocol (the ``Runtime``, ``Debugger``, ``NodeWorker`` and ``NodeRuntime`` domains) over a WebSocket
(``polydbg.cdp``). There is no separate adapter process.

**How it is started.** Launch: ``node --inspect-brk=127.0.0.1:0 [runtime_args] [TypeScript loader]
program [args]`` (``launcher``); Node's first stderr line names the WebSocket, and the program waits
at its start until the breakpoints are set (``Runtime.runIfWaitingForDebugger``). TypeScript runs
through what the project has: compiled ``.js`` with ``.map`` files, ``tsx`` or ``ts-node`` as a loader
in the same Node. Child Node processes load ``shims/boot.cjs`` through ``NODE_OPTIONS`` and announce
themselves on a named pipe (``children``). Attach: to ``host:port`` of ``node --inspect`` (its
``/json/list`` names the WebSocket), or a pid (SIGUSR1 opens its inspector on 127.0.0.1:9229);
``path_mappings`` ({local: remote}) make a script's ``file://`` path the local one and a breakpoint's
file the URL the program loads (``scripts.PathMap``).

**How CDP maps onto the Backend protocol.**

- Targets (``targets``, ``target``): the program's main thread, each worker thread (``NodeWorker``,
  attached while it waits at its start) and each child Node process is a ``Target``, shown to the
  agent as a thread. Breakpoints and exception settings go to every target; each stops on its own,
  and a ``StopGate`` shows one stop at a time (the others wait, stopped, and are shown as the answer
  to the next resume).
- Breakpoints (``breakpoints``, ``conditions``): a JavaScript file's are ``setBreakpointByUrl``; a file
  reached through a source map (``scripts``, ``sourcemap``) is bound per script by an *entry
  breakpoint* that pauses each user script before it runs. Conditions are V8's, hit counts are
  counted here, a logpoint is a condition that logs (through a console of its own, never into stdout)
  and answers false.
- Stops (``stops``): ``Debugger.paused``. Pauses the agent must not see (the start, entry breakpoints,
  hits that do not count, steps that land in Node's internals or unmapped code) are resumed or stepped
  on before anything is reported (``OrderedEvents`` keeps later events behind them).
- Values (``inspection``, ``values``): RemoteObjects behind per-stop handles, paged by functions run on
  the object; getters are never invoked.
- Call traces (``calls``, ``functions``): a named function's entry is a breakpoint condition that sends its
  arguments through a ``Runtime`` binding and never pauses; each of its return locations pauses for the return
  value and is resumed before anything else sees it.

**Quirks** (checked against Node v20.20.2 unless the row says otherwise):

======================================================  =================================================
quirk                                                   what polydbg does
======================================================  =================================================
``Debugger.pause`` takes effect at the next JavaScript  a probe script (``polydbg://idle-probe``) is
statement; an idle event loop runs none, so the pause   evaluated after it: a pause that lands in the probe
never comes.                                            alone means idle — it is resumed, the other targets
                                                        are tried, and if all are idle the agent is told so.
Node runs inspector messages from an interrupt of       a pause in the probe *on top of* other frames is a
running JavaScript: the probe can run on top of a busy  busy thread's pause: reported, the probe's frame
thread's frames.                                        hidden.
Node undoes a pause inside its own message loops: a     a pause that is over before it is handled is
``Debugger.paused`` may be followed at once by          dropped (``stops``).
``resumed``.
A worker that runs to its end while a message to it is  nothing is sent to a target that runs
in flight aborts Node (v20).                            (``Target.run`` releases the stop's objects only
                                                        while paused).
An ES module's top-level throw counts as caught         ``Runtime.exceptionThrown`` is kept: at the exit the
(nodejs/node#50430), and so does a throw in an async    agent is told where it was thrown and to set a
function awaited through ``Promise.all``: neither       breakpoint on that line and restart.
pauses as an uncaught exception.
V8 treats a breakpoint condition that does not parse    every condition and logpoint ``{expression}`` is
as never true.                                          compiled first (``Runtime.compileScript``); one that
                                                        does not parse refuses the breakpoint.
A mapped file's breakpoints cannot be named before its  an entry breakpoint (line 0 of every user script,
generated script loads.                                 ``urlRegex``) pauses each script before it runs;
                                                        the pause sets its breakpoints by script id, line
                                                        and column, and resumes.
V8 does not stop again where it is already paused: a    the entry pause counts a breakpoint it just set at
breakpoint set by the entry pause at that very          the paused location as hit.
location is not hit.
``tsx`` emits a whole module on one generated line.     mapped breakpoints are set by line *and* column.
An older Node lacks the ``NodeRuntime`` or              their ``enable`` requests' refusals are ignored.
``NodeWorker`` domain.
Node waits for the debugger to disconnect when the      ``NodeRuntime.waitingForDisconnect`` closes the
program is done (``Waiting for the debugger to          connection; Node's own inspector lines are kept out
disconnect...``).                                       of the program's stderr.
A loader (tsx under ``--import``) runs before the       ``stop_on_entry`` stops at the first user script
user's code: "Break on start" is in the loader.         instead (an entry breakpoint).
A child's inspector prints "Debugger listening on      children run with ``--inspect-publish-uid=http``
ws://…" to its stderr, which its parent may read        (``children``); Node's test runner then passes their
(``node --test`` puts it in its TAP stream).            other inspector lines to its own stderr, where they
                                                        are dropped with its warning about the debugger.
A Node stopped by a signal (SIGSTOP) answers nothing,  nothing is sent to a process /proc reads stopped
and carries out what it was sent once continued.        (``Target.check_answering``): refused, saying so.
SIGUSR1 opens the inspector a moment after the signal.  attach by pid asks ``/json/list`` again for up to
                                                        5 s.
tsx throws esbuild's TransformError for a .ts file      the pause is resumed unseen; the session ends on
that does not parse, from its minified code (an ES      the build error: each error's file:line:column,
module's is rethrown by Node as a plain Error).         message and source line (``compile_errors``).
V8 shows a ``let``/``const`` in its temporal dead zone  a binding of the frame's own scopes, or of a
as ``undefined`` (in a loop's next iteration: the last  script's top level still running further down the
one's value), in scopes and evaluations alike; a        stack, whose declaration the pause comes before
CommonJS file's top level is the local scope of Node's  reads ``<uninitialized>``; an evaluation reading one
wrapper function.                                       is refused as the program would (``deadzone``).
A TypeScript loader runs workers of its own (Node's     they are let run and detached at once, never
module-hooks worker, esbuild's).                        shown as threads (``targets.TOOLING_WORKER``).
CDP cannot list its methods (``Schema.getDomains``      ``debug_command`` reads the inspector's
names the domains only).                                ``/json/protocol`` when an answer needs it
                                                        (``commands``).
A line 0, column 0 breakpoint never binds in a script   the files with breakpoints are paused as they
compiled with a column offset (jest's vm.Script with    load (the entry breakpoint, and V8's
its module wrapper), and babel drops blank lines:       beforeScriptWithSourceMapExecution); one with a
jest's test files run lines off their own.              map of itself is bound through it
                                                        (``breakpoints``).
A test runner catches whatever a test throws: to V8     a test run by name pauses on caught exceptions
every failure is a caught exception.                    (the ``failures`` filter) and stops only where an
                                                        exception goes from the user's code into the
                                                        runner, at the user's frame (``failures``).
V8 does not pause on an exception caught after a throw  the assertion libraries (node:assert, expect,
in a blackboxed script, so node:assert's and expect's   chai) are let out of the blackbox while the
throws never pause under the blackbox patterns.         ``failures`` filter is set.
Node's internals compiled into its snapshot (node:fs,   their caught exceptions pause (a module resolution
node:internal/url, the CommonJS loader) cannot be       that fails; vite's ``new URL`` tries, hundreds as
blackboxed, by pattern or by range.                     vitest starts): each is judged and resumed at once,
                                                        and none counts against the user code's budget;
                                                        vitest's main process, which runs no test, pauses
                                                        on uncaught ones only.
======================================================  =================================================
"""
