"""The MCP surface: server wiring, thin tools, compact rendering."""
