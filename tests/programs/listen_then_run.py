"""What `python -m debugpy --listen HOST:PORT --wait-for-client PROG` does, but it says when it listens.

Usage: python listen_then_run.py HOST:PORT PROG [ARGS…]. Prints "listening" once the debug server
accepts clients, so a test can attach without polling the port.
"""
import runpy
import sys

import debugpy

host, port = sys.argv[1].rsplit(":", 1)
debugpy.listen((host, int(port)))
print("listening", flush=True)
debugpy.wait_for_client()
sys.argv = sys.argv[2:]
runpy.run_path(sys.argv[0], run_name="__main__")
