"""Starts worker threads (sys.argv[1] of them, 60 by default) that wait on an Event, blocked in C code where
no trace function reaches them, and stops at a marked line once all are started; then releases them."""
import sys
import threading

release = threading.Event()


def worker():
    release.wait()  # waits


workers = [threading.Thread(target=worker, name=f"w{i}") for i in range(int(sys.argv[1]) if sys.argv[1:] else 60)]
for thread in workers:
    thread.start()
print("started", len(workers))  # all started
release.set()
for thread in workers:
    thread.join()
