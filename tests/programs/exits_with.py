"""Exits through sys.exit from inside a function: with an int code (argv[1]) or a message (argv[1] = "message")."""

import sys


def finish(how):
    print("finishing", flush=True)
    if how == "message":
        sys.exit("usage: exits_with.py CODE")
    sys.exit(int(how))


finish(sys.argv[1] if len(sys.argv) > 1 else "3")
