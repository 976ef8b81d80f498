"""Prints one line and exits at once with code 3 (os._exit: no SystemExit for the debugger to stop on)."""
import os
import sys

print("leaving early")
sys.stdout.flush()
os._exit(3)
