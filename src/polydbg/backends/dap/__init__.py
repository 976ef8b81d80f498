"""The Backend over any DAP adapter (``backend.DapBackend``): the handshake, breakpoints by file, frames by
(thread, index), values and the native requests; debugpy, lldb-dap and delve subclass it."""
