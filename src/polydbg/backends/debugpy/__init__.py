"""Python through debugpy: its adapter over stdio, the debuggee under a TCP_NODELAY shim, child processes as
stops of their own."""
