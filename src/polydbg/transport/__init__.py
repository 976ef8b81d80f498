"""Byte framing and message streams: the lowest layer, knows nothing about DAP semantics."""
