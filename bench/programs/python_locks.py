"""Threads stuck on threading locks, for bench/python_locks.py: sys.argv[1] threads (200 by default): two in a Lock
deadlock, a quarter of the rest blocked on an RLock one thread holds, a quarter on a Lock one thread holds, a
quarter in Condition.wait(), the rest in Event.wait(); main then ticks, a breakpoint's line each turn."""
import sys
import threading
import time

count = int(sys.argv[1]) if sys.argv[1:] else 200
LEFT, RIGHT, SHARED, TAKEN = threading.Lock(), threading.Lock(), threading.RLock(), threading.Lock()
READY, never = threading.Condition(), threading.Event()
both = threading.Barrier(2)
holding = threading.Barrier(2)


def left():
    with LEFT:
        both.wait()
        with RIGHT:
            pass


def right():
    with RIGHT:
        both.wait()
        with LEFT:
            pass


def holder():
    with SHARED, TAKEN:
        holding.wait()
        never.wait()


def on_rlock():
    with SHARED:
        pass


def on_lock():
    with TAKEN:
        pass


def on_condition():
    with READY:
        READY.wait()


threads = [threading.Thread(target=left, daemon=True), threading.Thread(target=right, daemon=True),
           threading.Thread(target=holder, daemon=True)]
for thread in threads:
    thread.start()
holding.wait()
rest = count - len(threads)
for i in range(rest):
    work = (on_rlock, on_lock, on_condition, never.wait)[min(3, i * 4 // rest)]
    threads.append(threading.Thread(target=work, name=f"{work.__name__}-{i}", daemon=True))
    threads[-1].start()
tick = 0
while True:
    tick += 1  # tick
    time.sleep(0.05)
