"""Attach target: stops at a breakpoint, then waits for a line on stdin and exits 0."""
import sys


def work():
    value = 41
    value += 1  # attach stop
    return value


print("worked:", work(), flush=True)
line = sys.stdin.readline()
print("after detach:", line.strip(), flush=True)
