"""The backend kit: small pieces more than one backend needs, each written once.

- ``lifecycle``: ``Lifecycle`` (phase, background tasks, one idempotent end, the program's end reported once).
- ``hits``: hit conditions, one meaning for every backend, and ``HitCounter`` for debuggers that do not count.
- ``timeouts``: the backends' deadlines, named once.
- ``handles``: ``HandleTable`` (ints for protocol handles, valid for one stop, never reused) and
  ``IdMap`` (polydbg's breakpoint ids ↔ a debugger's own numbers).
- ``bpdiff``: which breakpoints of a group to keep, delete and insert when a debugger sets them one
  by one instead of replacing a whole file (DAP).
- ``frames``: the shown frames of a stop by (thread, index), and how many runtime frames to hide.
- ``ordering``: stops that need an asynchronous look before they are reported keep the events
  behind them in order.
- ``gate``: one stop shown at a time across processes or threads that stop on their own.
- ``runtime``: output and end of a program whose runtime is the debugger (Node, the JVM).
- ``shims``: code run inside other processes, kept as real files.
- ``cxx``, ``typenames``, ``panics``: C++ exceptions, short type names, Rust panic messages.
- ``returns``: what a step out of (or over) a call returned, listed among the caller's locals.
"""
