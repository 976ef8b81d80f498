"""C, C++ and Rust through gdb's machine interface (GDB/MI 3), for gdbs without DAP (Debian's 13.1).

How the DAP vocabulary of the Backend protocol maps onto gdb:

- Process: ``gdb --interpreter=mi3 -q -nx`` owned by a ``procs.DebuggerProcess``, commands
  over stdin with numeric tokens (``polydbg.mi.client``), ``mi-async on`` so gdb takes commands while
  the program runs (``-exec-interrupt``). The program gets a pty of its own (``-inferior-tty-set``):
  its stdout and stderr (merged: a pty has one stream) never mix into the MI stream and arrive as
  ``stdout`` output; at every stop and exit the pty is drained first, so a report has all the output
  printed before it.
- Frames: a ``FrameRef`` (thread, index) becomes ``--thread T --frame L`` with L the index plus the
  machinery frames hidden at a throw/catch/SIGABRT stop; scopes are "Locals" (``-stack-list-variables``,
  arguments first) and "Registers" (the "general" register group, hex).
- Values are printed by gdb with pretty printers on (libstdc++'s auto-load on Debian; Rust's
  ``gdb_load_rust_pretty_printers.py`` is sourced from the toolchain for Rust only), so a
  ``std::vector<int>`` reads ``std::vector of length 3, capacity 3 = {1, 2, 3}``. Expandable values
  get a ref; expanding creates a varobj (``-var-create``) and lists its children
  (``-var-list-children``), C++ access groups (public/private) flattened, compound children shown
  with a one-level summary ``{id = 1, label = "one"}``. Varobjs are deleted when the program moves.
- Breakpoints: ``-break-insert -f`` (pending allowed) with ``-c`` for conditions; hit conditions:
  ``N`` and ``>= N`` → ignore count N-1 (stop on the Nth hit and every one after), ``> N`` → ignore
  count N, ``== N`` / ``< N`` / ``<= N`` / ``% N`` → a per-breakpoint counter in the condition
  (``++$_polydbg_hK == N``), which counts only hits whose condition holds (an ignore count counts
  every hit, gdb skips the condition while it runs down). Logpoints are ``-dprintf-insert`` whose
  message is formatted by a small Python function loaded into gdb (each ``{expr}`` evaluated,
  ``<error: …>`` when it fails, never stopping the program); each file's set is diffed
  (``kit.bpdiff``), so unchanged breakpoints keep their numbers and counts, and gdb's numbers are
  mapped to polydbg's breakpoint ids. Watchpoints are ``-break-watch`` [-r|-a].
- Stops: breakpoint-hit → breakpoint (function breakpoint, entry for ``--start``),
  end-stepping-range / function-finished / location-reached → step (a finish says what returned),
  signal-received → exception with the signal name (SIGSEGV …), or pause after ``-exec-interrupt``,
  watchpoint-trigger → data breakpoint, exited* → exited (exit code; 128+N for signal N) and
  terminated. A core file is loaded with ``-target-select core`` after the program and reported as
  one stop: exception (when the core records a fatal signal) or ``core``.
- Attach: ``-target-attach PID``, or ``-target-select remote HOST:PORT`` for gdbserver (the
  program given for symbols; path mappings become ``set substitute-path``); after configuration
  the target is continued, like DAP adapters that attach to a running program.
- End: terminate SIGKILLs a local inferior (``kill`` for a remote one), sends ``-gdb-exit`` and
  kills gdb's process group; detach is ``-target-detach``. Nothing is left behind.
"""
