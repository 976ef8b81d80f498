"""Threads stuck on threading locks, every one blocked in C code (no Python line runs, so no trace function
reaches them): "left" and "right" deadlock over two Locks, "keeper" holds an RLock twice while "reentrant"
waits for it, "sleeper" waits on a Condition, "bare" waits for a Lock taken with a bare acquire() nobody releases,
and main joins them. With an argument, main stops at a marked line once all are stuck, then joins."""
import sys
import threading
import time
from pathlib import Path

LEFT, RIGHT = threading.Lock(), threading.Lock()
RECORDS = threading.RLock()
READY = threading.Condition()
GATE = threading.Lock()
both_hold = threading.Barrier(2)
kept = threading.Event()


def left():
    with LEFT:
        both_hold.wait()
        with RIGHT:  # left blocks here
            pass


def right():
    with RIGHT:
        both_hold.wait()
        with LEFT:  # right blocks here
            pass


def keeper():
    held = 2
    with RECORDS, RECORDS:
        kept.set()
        time.sleep(1800 * held)  # keeper sleeps holding RECORDS twice


def reentrant():
    kept.wait()
    with RECORDS:  # reentrant blocks here
        pass


def sleeper():
    with READY:
        READY.wait()  # sleeper waits to be notified


def bare():
    GATE.acquire()  # bare blocks here


GATE.acquire()
workers = [threading.Thread(target=f, name=f.__name__, daemon=True) for f in (left, right, keeper, reentrant, sleeper,
                                                                              bare)]
for worker in workers:
    worker.start()
blocked_at = {"left": "# left blocks", "right": "# right blocks", "keeper": "# keeper sleeps",
              "reentrant": "# reentrant blocks", "sleeper": "# sleeper waits", "bare": "# bare blocks"}
source = Path(__file__).read_text().splitlines()
lines = {name: next(i for i, text in enumerate(source, 1) if marker in text and "blocked_at" not in text)
         for name, marker in blocked_at.items()}


def stuck(worker):
    frame = sys._current_frames().get(worker.ident)
    while frame is not None and frame.f_code.co_filename != __file__:
        frame = frame.f_back
    return frame is not None and frame.f_lineno == lines[worker.name]


while not all(stuck(worker) for worker in workers):
    time.sleep(0.01)
if sys.argv[1:]:
    print("all stuck")  # all stuck
for worker in workers:
    worker.join()
