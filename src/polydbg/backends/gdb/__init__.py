"""C, C++ and Rust through gdb's machine interface (GDB/MI 3), for gdbs without DAP (Debian's 13.1).

The debugger
    gdb, the GNU debugger, driven over GDB/MI: commands with numeric tokens on its stdin, results
    (``^done``/``^error``), asynchronous records (``*stopped``, ``*running``, ``=breakpoint-modified`` …)
    and console text on its stdout (``polydbg.mi.client``, on pygdbmi's parser). MI has no notion of
    DAP's requests: the backend maps each ``Backend`` call onto MI commands and CLI commands run through
    ``-interpreter-exec console``.

How it is started
    ``gdb --interpreter=mi3 -q -nx`` owned by a ``procs.DebuggerProcess`` (its process group is killed at
    the end), without the server's ``PYTHONPATH``/``PYTHONHOME``/``PYTHONSTARTUP`` (gdb embeds Python);
    for Rust, ``-iex add-auto-load-safe-path`` for the toolchain's ``lib/rustlib/etc`` (asked of rustc
    once). Then: ``mi-async on`` so gdb takes commands while the program runs (``-exec-interrupt``),
    confirm/pagination off, unlimited width and height, pending breakpoints on, ``print object on``,
    ``print entry-values no``, ``unwindonsignal on``, ``-enable-pretty-printing``, and the Python polydbg loads into gdb
    (``shims/gdb_init.py``: logpoint formatting and a refusing ``$_shell``) — all pipelined.

    - Launch: ``-file-exec-and-symbols``, the program's own pty (``-inferior-tty-set``), arguments,
      directory and environment, the breakpoints (the session's ``configure``), then ``-exec-run``
      (``--start`` for stop-on-entry: gdb's temporary breakpoint at ``main``).
    - Core file: the program, then ``-target-select core`` after the breakpoints; reported as one
      stop: exception (when the core records a fatal signal) or ``core``.
    - Attach: ``-target-attach PID``, or ``-target-select remote HOST:PORT`` for gdbserver (the program
      given for symbols; path mappings become ``set substitute-path``); after configuration the target
      is continued, like DAP adapters that attach to a running program.
    - End: terminate SIGKILLs a local inferior (``kill`` for a remote one), sends ``-gdb-exit`` and kills
      gdb's process group; detach is ``-target-detach``. Nothing is left behind.

How the parts map onto gdb (each module's docstring has the details)
    - ``backend``: the lifecycle above and gdb's records routed to the parts. The program's output
      comes through its pty, never mixed into the MI stream, as ``stdout`` output (``terminal``); at
      every stop and exit the pty is drained first, so a report has all the output printed before it.
    - ``stops``: breakpoint-hit → breakpoint (function breakpoint, entry for ``--start``);
      end-stepping-range / function-finished / location-reached → step (a finish says what returned);
      signal-received → exception with the signal name (SIGSEGV …), or pause after ``-exec-interrupt``;
      watchpoint-trigger → data breakpoint; exited* → exited (exit code; 128+N for signal N) and
      terminated.
    - ``breakpoints``: ``-break-insert -f`` (pending allowed) with ``-c`` for conditions; hit
      conditions (``kit.hits``: a bare ``N`` is ``== N``): ``>= N`` → ignore count N-1 (stop on the Nth
      hit and every one after), ``> N`` → ignore count N, ``N`` / ``== N`` / ``< N`` / ``<= N`` / ``% N`` →
      a per-breakpoint counter in the condition (``++$_polydbg_hK == N``); logpoints are
      ``-dprintf-insert`` whose message is formatted by a small Python function loaded into gdb (each
      ``{expr}`` evaluated, ``<error: …>`` when it fails, never stopping the program); each file's set is
      diffed (``kit.bpdiff``), so unchanged breakpoints keep their numbers and counts, and gdb's numbers
      are mapped to polydbg's breakpoint ids; watchpoints are ``-break-watch`` [-r|-a].
    - ``frames``: a ``FrameRef`` (thread, index) becomes ``--thread T --frame L`` with L the index plus
      the machinery frames hidden at a throw/catch/SIGABRT stop or a watchpoint that fired in library code.
    - ``inspection``: scopes "Locals" (``-stack-list-variables``, arguments first) and "Registers";
      values printed by gdb with pretty printers on (libstdc++'s auto-load on Debian; Rust's
      ``gdb_load_rust_pretty_printers.py`` is sourced from the toolchain for Rust only), so a
      ``std::vector<int>`` reads ``std::vector of length 3, capacity 3 = {1, 2, 3}``. Expandable values
      get a ref; expanding creates a varobj (``-var-create``) and lists its children
      (``-var-list-children``), C++ access groups (public/private) flattened, compound children shown
      with a one-level summary ``{id = 1, label = "one"}``. Varobjs are deleted when the program moves.
    - ``native``: memory, disassembly, registers (the "general" register group, hex), raw commands.
    - ``calls``: commands that may call a function in the program, bounded by the evaluation deadline.
    - ``commands`` and ``values``: MI text both ways and gdb's printed values, pure functions.

Quirks (checked against gdb 13.1, Debian 12's)

=============================================================  =================================================
gdb does                                                       so polydbg
=============================================================  =================================================
prints the program's output on its own stdout, between MI      gives the program a pty (``-inferior-tty-set``);
records                                                        stdout and stderr arrive merged (one stream)
an ignore count counts every hit: gdb skips the condition      counts ``== N``, ``< N``, ``<= N``, ``% N`` in the
while it runs the count down                                   condition, so only hits whose condition holds count
in Rust mode reads ``++$_polydbg_hK`` as two unary pluses:     nothing yet: those hit conditions are wrong in Rust
the counter stays 0                                            (a strict xfail in test_conformance)
``-target-select`` hands its arguments to ``target core``      passes the core file's path as it is
verbatim (no unquoting)
without its startup shell, splits arguments at whitespace      starts the program without the shell when the
and passes quotes literally                                    arguments are plain (faster), else quotes them for
                                                               /bin/sh; stdin is redirected through the shell
prints an exit code in octal (``exited with code 012``)        reads ``exit-code`` as octal
reports the stop ``-exec-interrupt`` makes as a signal         reports a pause when polydbg interrupted (SIGINT,
received                                                       SIGTRAP, SIGSTOP or "0"), an exception else
``$_exception`` at a catchpoint fails without libstdc++'s      reads the type and message from ``__cxa_throw``'s
debug info (``No symbol "runtime_error" in namespace           arguments (``kit.cxx``), memory only (no call
"std"``)                                                       into the program)
a Rust panic unwinds without ``__cxa_throw``                   "catches" a panic with a breakpoint at
                                                               ``rust_panic``; the message is the hook's output
stops a throw, catch or SIGABRT inside the runtime             hides the frames above the first one with a
(``__cxa_throw``, ``abort``, ``raise``)                        source file here (not libstdc++'s or Rust's std)
has no Rust pretty printers of its own (the toolchain ships    sources the toolchain's script (Rust sessions only)
them for its ``rust-gdb`` wrapper)
does not notice a stopped program killed from outside          watches the program's pid (``procs``)
may lack Python                                                refuses logpoints (``log_points`` off)
shows a compound child of a varobj as ``{...}`` / ``[N]``      prints its path expression, or summarizes its
                                                               first members below a pretty printer
lists the AVX-512 mask registers k0–k7 in ``info registers``   leaves them out of "Registers"
deletes a watchpoint whose frame returns (watchpoint-scope)    reports the stop and the breakpoint as unverified
stops a watchpoint inside the library code that wrote it       reports the user's frame that called it; the
(``memcpy``, ``memset``)                                       library frames are listed above frame 0
a ptrace-stopped program dies of SIGKILL at once               SIGKILLs a local program at terminate; ``-gdb-exit``
                                                               reaps it
reads no command while a function it called runs (an endless   interrupts gdb (SIGINT) at the evaluation deadline;
call left it unanswering, and a detach then ended the program  ``unwindonsignal on`` unwinds the call (``calls``)
with gdb)
cannot write the registers back after a call on some hosts     flushes its register cache and returns from what
("Couldn't write extended state status: Bad address.")         is left of the call; the error says calls fail here
exiting while a running program it attached to dies under it   waits for gdb's exit record of a running program
fails an assertion (``x86_linux_update_debug_registers:        it killed before ``-gdb-exit``
lwp_is_stopped``) and dumps a core of gdb into its cwd
=============================================================  =================================================
"""
