"""The backends' deadlines, named once (read as ``timeouts.X`` at the call, so a test can shorten one)."""

INSPECT_S = 10.0  # one inspection request while stopped: frames, scopes, values, an evaluation
CONNECT_S = 10.0  # connecting to a debugger's socket that is known to be listening
HANDSHAKE_S = 5.0  # a debugger's greeting on a connection just opened
COMPILE_S = 120.0  # compiling a program polydbg builds itself (a .java or .kt file)
AFTER_EXIT_S = 30.0  # a debugger that reported its program's exit, to report its own end (it delivers output first)
