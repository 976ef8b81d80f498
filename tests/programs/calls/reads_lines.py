"""Handles each line of its input: while it waits for one, its only thread is blocked in C code (a read)."""
import sys


def handle(line):
    return line.upper()


print("waiting", flush=True)
for line in sys.stdin:
    print("handled", handle(line.strip()), flush=True)
