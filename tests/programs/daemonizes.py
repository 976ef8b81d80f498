"""Starts a daemon (double fork + setsid: a group and session of its own) that writes its pid to the
file named by argv[1] and runs forever, then stops at the parked line."""
import os
import sys
import time

if os.fork() == 0:
    os.setsid()
    if os.fork():
        os._exit(0)
    with open(sys.argv[1] + ".tmp", "w") as handle:
        handle.write(str(os.getpid()))
    os.rename(sys.argv[1] + ".tmp", sys.argv[1])
    while True:
        time.sleep(1)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
parked = True  # parked
print("daemon started", parked)
