"""polydbg: an MCP server that gives AI coding agents real step-through debugging."""

__version__ = "0.1.0"
__all__ = ["__version__"]
