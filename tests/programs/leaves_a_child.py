"""Starts a child that inherits its stdout and outlives it, then exits with 4."""
import subprocess
import sys

subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
print("parent leaving", flush=True)
sys.exit(4)
