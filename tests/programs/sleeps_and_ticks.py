"""Says it is up, then prints a tick every 50 ms, sleeping in between (mostly inside a system call)."""
import time

print("up", flush=True)
tick = 0
while True:
    time.sleep(0.05)  # asleep
    tick += 1
    print("tick", tick, flush=True)
