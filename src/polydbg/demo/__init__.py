"""The bundled demo: a buggy program debugged end to end through the real MCP server."""
