"""C, C++ and Rust through lldb-dap (LLVM's DAP adapter, formerly lldb-vscode) over stdio.

What it is: lldb-dap is LLVM's debug adapter over lldb. How it is started: the ``lldb-dap`` found
on PATH (else the highest ``lldb-dap-NN``, else ``lldb-vscode``; ``locate.find_lldb_dap``) as a
process speaking DAP on stdio; ``launch`` a program, ``attach`` to a pid or to a gdbserver
(``gdb-remote-port``), or ``attach`` with ``coreFile`` for a core dump. lldb-dap starts
lldb-server, which starts the debuggee, each in its own process group.

Modules: ``backend`` (``LldbDapBackend``, the registry's entry point: lifecycle, events, requests),
``launch`` (arguments and lldb commands, the Rust toolchain's formatters), ``stops`` (why it
stopped: signals, panics, aborts, throws, failed conditions), ``values`` (types, values, frame
names and previews in the program's language: pure), ``expressions`` (evaluation errors cut to the error,
Rust field paths through references and Boxes), ``hits`` (hit conditions lldb-dap cannot count).

Quirks (checked against lldb-dap 22):

=======================================================  ====================================================
quirk                                                    what polydbg does
=======================================================  ====================================================
lldb-dap answers ``launch``/``attach`` only after        the generic DapBackend handshake covers that
``configurationDone``
structs and pairs get auto summaries ({x:3, y:4}), but   containers get a preview built from their first
containers only ``size=N`` (std::vector, std::map,       children: ``{10, 20, 30}``, ``{"alice": 31}``, Rust
Rust Vec, HashMap …)                                     ``[1, 2, 3]`` (``values.preview``)
lldb-dap lists every child of a value (a million-        at most 256 children without a count; the session
element vector)                                          pages past them through ``child_slice``
lldb has no Rust plugin ("has no plugin for the          the toolchain's formatters (``lldb_lookup.py`` +
language \"rust\"")                                      ``lldb_commands``) — only for Rust: they break the C++
                                                         STL ones — and Rust-looking type names (``Vec<i32>``,
                                                         not ``alloc::vec::Vec<int, alloc::alloc::Global>``)
lldb 22 crashes on some GCC unique_ptrs, and says its    ``shims/cxx_formatters.py`` is loaded for C++; the
tuple "was unable to be parsed"                          complaint is dropped from the console
a signal is reason ``exception`` with "signal SIGSEGV:   exception info names the signal and what it means
…"
a pause arrives as "signal SIGSTOP"; so does a new       reported as ``pause``, or as ``entry`` without the
process held at entry                                    signal
a Rust panic stops on an internal ``rust_panic``         reported as an exception with the panic message;
breakpoint                                               frames of the panic machinery hidden, so frame 0 is
                                                         the code that panicked
SIGABRT stops inside libc (abort, raise,                 the abort machinery's frames are hidden, so frame 0
__assert_fail …) or libstdc++ (std::terminate)           called abort()/assert(); std::terminate's uncaught
                                                         exception and assert's message go to exception info
a C++ throw stops in ``__cxa_throw``, and an lldb        the thrower is frame 0; the exception's type and
expression there can hang lldb-dap for good              message are read from registers and memory only (a
                                                         class of the program's own through ``memory read -t``)
lldb stops at a breakpoint whose condition fails to      the stop waits 0.1 s for lldb's console line and says
evaluate, saying so only in console output after it      to fix the condition
``hitCondition`` is read only as a whole number N (an    ``>= N`` / ``> N`` are sent as N / N+1; ``N``, ``==``,
ignore count: the Nth hit and every later one); other    ``<``, ``<=``, ``%`` are counted by polydbg, a hit that
texts are accepted, verified and ignored                 does not stop resumed unseen (``hits.py``)
stops that need a look at the stack to be classified     reported after that look (``kit.ordering``); events
                                                         behind them are held back so their order is kept
another thread's reason at a stop already reported       dropped (``preserveFocusHint``, not all stopped)
a gdbserver stops the program at the connection          that SIGTRAP stop is not reported
(SIGTRAP)
``dataBreakpointInfo`` names are *evaluated as           an expression is sent as ``&(expr)``; watchpoint ids
addresses*                                               live in their own number space
a watchpoint stops inside the library code that wrote    reported at the user's frame that called it, the
it (``memcpy``); its old and new values are console      library frames listed above frame 0; the values go
lines before the stop                                    to the stop's description, not the output
``repl`` runs a word naming an lldb command              raw commands carry lldb-dap's command escape prefix
                                                         (a backtick); ``debug_evaluate`` uses "watch"; a
                                                         command lldb rejects ("error: …") is an error
lldb-dap gives a pointer's own address as its memory     the address it points at (its value) instead
reference
registers come in groups (general, floating point,       the general-purpose group's full-width registers,
vector), with every sub-register (eax, ax, al)           plus flags, pc, sp, lr, fp
the debuggee gets a pty: its stderr arrives as stdout    panic/abort messages are looked for in both
start-up chatter (banner, "Executable binary set to …",  dropped until the program runs (unless it says error
"Process N exited with status")                          or warning); the exit line always
lldb-server and the debuggee each run in a process       on terminate every descendant of the adapter still
group of their own                                       alive is killed (lldb-server also on detach)
lldb-vscode (LLVM ≤ 17) runs "?command" as an unknown    no quiet prefix for it
command
an evaluation error is clang's diagnostics: 1.5 KB of    cut to the errors and the first note, long template
notes spelling every template argument                   arguments shortened (``expressions.short_error``)
an expression runs with the API's 0.5 s timeout: a       a variable path is read as lldb-dap reads it (no code
longer call is interrupted, blamed on the stop's         runs); anything else runs as ``expression --timeout``
breakpoint ("interrupted: breakpoint 1.1.")              with polydbg's deadline (``expressions``)
lldb answers the detach of a program it launched ~5 s    the program alive, untraced, and lldb-server gone is
after letting it go (lldb's CLI too)                     taken as the answer
a program detached with a watchpoint set dies of         its watchpoints are disabled before the detach
SIGTRAP at its next write there (the CLI's too)
no Rust expression parser: Rust is read as C++, where    a Rust field path that fails so is evaluated again a
``.`` does not go through a reference or Box             step at a time, dereferenced as each type needs
(``node.next`` on a ``&Box<Node>``)                      (``(**node).next``)
lists what a step out returned first among frame 0's     names it after the function the step left (``add()
locals as ``(Return Value)``, not saying whose; a step   returned 6``, kit.returns); a step over says nothing
over leaves none
=======================================================  ====================================================
"""
