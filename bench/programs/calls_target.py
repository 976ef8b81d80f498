"""The call-trace and stop-latency benches' Python program: ``work`` called N times (sys.argv[1]) in a loop, after
a line to stop at first, with sys.argv[2] idle threads waiting on an Event meanwhile (none by default)."""
import sys
import threading

release = threading.Event()


def work(i):
    return i * 2  # body


def main(n):
    total = 0  # start
    for i in range(n):
        total += work(i)
    print(total)


idle = [threading.Thread(target=release.wait, name=f"idle-{i}") for i in range(int(sys.argv[2]) if sys.argv[2:] else 0)]
for thread in idle:
    thread.start()
main(int(sys.argv[1]))
release.set()
