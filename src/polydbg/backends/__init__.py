"""Backends: one per debugger protocol (DAP adapters now; GDB/MI and V8 inspector later)."""
