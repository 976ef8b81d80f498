"""Writes to stdout and stderr around breakpoint lines (output paging tests)."""
import sys

for i in range(40):
    print(f"out-{i:03d}")
    print(f"err-{i:03d}", file=sys.stderr)
sys.stdout.flush()
sys.stderr.flush()
first = "first stop"  # first stop
print("between stops")
sys.stdout.flush()
second = "second stop"  # second stop
print("done")
