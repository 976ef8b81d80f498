"""Runs this file again as a child Python process (subprocess), which prints on stdout and stderr."""
import subprocess
import sys

if len(sys.argv) > 1 and sys.argv[1] == "child":
    print(f"child {sys.argv[2]} says hello", flush=True)
    print(f"child {sys.argv[2]} warns", file=sys.stderr, flush=True)
    total = sum(range(int(sys.argv[2]) + 3))  # in the child
    print(f"child {sys.argv[2]} done", flush=True)
else:
    for name in sys.argv[1:] or ["1"]:
        code = subprocess.run([sys.executable, __file__, "child", name], check=False).returncode
        print(f"parent saw {code}", flush=True)
