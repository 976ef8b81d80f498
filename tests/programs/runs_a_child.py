"""Runs this file again as a child Python process (subprocess), which prints on stdout and stderr; with "quick",
runs children that end at once, a module that is not there (often before a debugger can attach to them); with
"exits3", a child that exits with 3."""
import subprocess
import sys

if len(sys.argv) > 1 and sys.argv[1] == "child":
    print(f"child {sys.argv[2]} says hello", flush=True)
    print(f"child {sys.argv[2]} warns", file=sys.stderr, flush=True)
    total = sum(range(int(sys.argv[2]) + 3))  # in the child
    print(f"child {sys.argv[2]} done", flush=True)
elif len(sys.argv) > 1 and sys.argv[1] == "exits3":
    code = subprocess.run([sys.executable, "-c", "import sys; sys.exit(3)"], check=False).returncode
    print(f"parent saw {code}", flush=True)
elif len(sys.argv) > 1 and sys.argv[1] == "quick":
    for _ in range(8):
        subprocess.run([sys.executable, "-m", "no_such_module_here"], stderr=subprocess.DEVNULL, check=False)
    print("parent ran them", flush=True)
else:
    for name in sys.argv[1:] or ["1"]:
        code = subprocess.run([sys.executable, __file__, "child", name], check=False).returncode
        print(f"parent saw {code}", flush=True)
