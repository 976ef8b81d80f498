"""Says it is up, waits until the file named by its argument exists, then reaches the breakpoint line."""
import os
import sys
import time

print("up", flush=True)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
reached = True  # after the flag
print("done", reached)
