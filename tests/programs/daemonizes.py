"""Starts a daemon (double fork + setsid: a group and session of its own) whose pid the intermediate
child writes to the file named by argv[1], then stops at the parked line. The daemon runs forever.

The intermediate child writes the pid (not the daemon itself): under debugpy's subProcess a process
forked while its parent is still being attached can hang in pydevd's inherited locks, and the parent
must reach the parked line either way — what is tested is that the daemon ends with the session."""
import os
import sys
import time

if os.fork() == 0:
    os.setsid()
    daemon = os.fork()
    if daemon:
        with open(sys.argv[1] + ".tmp", "w") as handle:
            handle.write(str(daemon))
        os.rename(sys.argv[1] + ".tmp", sys.argv[1])
        os._exit(0)
    while True:
        time.sleep(1)
while not os.path.exists(sys.argv[1]):
    time.sleep(0.01)
parked = True  # parked
print("daemon started", parked)
