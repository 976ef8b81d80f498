"""The Backend over any Debug Adapter Protocol adapter; debugpy, lldb-dap and delve subclass it.

What it is: ``backend.DapBackend`` speaks DAP (``polydbg.dap.client``) to one adapter for one
debuggee. A subclass says how the adapter is started (``_start_adapter``: a process over stdio,
or a TCP connection to an adapter that is listening) and what ``launch``/``attach`` carry
(``_launch_arguments``/``_attach_arguments``); the rest is the DAP specification:

    initialize → launch|attach (answer not awaited yet) → on ``initialized``: the session's
    breakpoints, exception filters → configurationDone → the launch|attach answer

Polydbg's breakpoint ids and frames by (thread, index) are kept at the seam, so the session never
sees an adapter's numbers. Subclasses adapt through hooks: ``_tune_capabilities``,
``_hidden_frames``, ``_frame``, ``_stack_thread``, ``_shown_total``, ``_data_name``, ``_moving``,
``_on_*`` event handlers, and ``_before_end``/``_after_end`` around the one end.

Modules: ``backend`` (the class: lifecycle, events, requests by frame), ``breakpoints`` (groups
set and ids mapped), ``evaluation`` (one expression at a time per thread), ``wire`` (DAP bodies ↔
polydbg's types, pure).

What every DAP adapter here does that the specification leaves open, and what polydbg does about it
(checked against debugpy 1.8.22, lldb-dap 22 and delve 1.20):

=====================================================  ======================================================
quirk                                                  what polydbg does
=====================================================  ======================================================
some adapters answer ``launch`` only after             the launch request is sent, not awaited; ``initialized``
``configurationDone`` (debugpy, lldb-dap), others      or a failed launch answer, whichever comes first, ends
before it (delve)                                      the wait; the answer is awaited after configurationDone
breakpoints and data breakpoints are numbered apart    two id maps, one per kind (``breakpoints``)
(lldb-dap)
an evaluation cannot be interrupted, and a thread      an evaluation past its deadline is remembered; the next
evaluates one expression at a time                     one on that thread is refused at once (``evaluation``)
setting many breakpoints in one request is slow        the deadline grows 0.05 s per breakpoint
(1,500 take debugpy > 10 s)
the adapter or the debuggee dies without a word        the connection's end and a pidfd on the debuggee report
                                                       the program's end, once (``kit.lifecycle``)
``disconnect`` on terminate may not be answered        0.5 s for it (a kill follows anyway), 2 s on a detach,
                                                       which must let the adapter resume the program
=====================================================  ======================================================
"""
