"""The backend kit: small pieces more than one backend needs, each written once.

- ``handles``: ``HandleTable`` (ints for protocol handles, valid for one stop, never reused) and
  ``IdMap`` (polydbg's breakpoint ids ↔ a debugger's own numbers).
- ``bpdiff``: which breakpoints of a group to keep, delete and insert when a debugger sets them one
  by one (GDB/MI, CDP, JDWP) instead of replacing a whole file (DAP).
- ``frames``: the shown frames of a stop by (thread, index), and how many runtime frames to hide.
- ``ordering``: stops that need an asynchronous look before they are reported keep the events
  behind them in order.
"""
