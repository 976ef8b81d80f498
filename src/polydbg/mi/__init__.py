"""GDB/MI: a protocol client for ``gdb --interpreter=mi3`` (used by the gdb backend)."""
