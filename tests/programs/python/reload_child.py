"""Runs itself again as a child Python process; both print what part() makes of a number. A reload while the child
is stopped puts the edit into the child only: the parent's line shows it kept the old code."""
import subprocess
import sys


def part(n):
    return n + 1


if len(sys.argv) > 1 and sys.argv[1] == "child":
    for k in range(3):
        print("child", part(k), flush=True)  # in the child
else:
    subprocess.run([sys.executable, __file__, "child"], check=False)
    print("parent", part(10), flush=True)
