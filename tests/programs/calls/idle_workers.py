"""Four worker threads wait on an Event; the main thread stops at a marked line once each of them waits inside
threading's code (a thread there reaches no trace function, so a debugger suspends none of them), then releases
them."""
import sys
import threading

release = threading.Event()


def worker():
    release.wait()


def waiting(thread):
    frame = sys._current_frames().get(thread.ident)
    return frame is not None and frame.f_code.co_filename == threading.__file__ and frame.f_back is not None \
        and frame.f_back.f_code.co_name == "wait"


workers = [threading.Thread(target=worker, name=f"w{i}") for i in range(4)]
for thread in workers:
    thread.start()
while not all(waiting(thread) for thread in workers):
    release.wait(0.001)
print("waiting", len(workers))  # all wait
release.set()
for thread in workers:
    thread.join()
