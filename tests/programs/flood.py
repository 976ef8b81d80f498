"""Writes 100 MB to stdout in 1 MB chunks, then a recognisable tail line, then exits."""
import sys

CHUNK = ("x" * 1023 + "\n") * 1024  # 1 MiB
for _ in range(100):
    sys.stdout.write(CHUNK)
sys.stdout.write("THE-END-OF-THE-FLOOD\n")
sys.stdout.flush()
