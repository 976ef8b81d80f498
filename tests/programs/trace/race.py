"""A lost update, the same every run: two threads each add 1 to a shared counter N times (the first argument,
default 500), reading it, then both waiting at a barrier, then writing what each read plus one, so every
increment of one thread overwrites the other's: the counter ends at N, not 2N. The same program is in race.c."""

import sys
import threading

counter = 0


def work(rounds, barrier):
    global counter
    for _ in range(rounds):
        seen = counter
        barrier.wait()  # both have read the counter
        counter = seen + 1  # the write
        barrier.wait()  # both have written it


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 500
    barrier = threading.Barrier(2)  # before the threads
    workers = [threading.Thread(target=work, args=(rounds, barrier), name=f"adder-{n}") for n in (1, 2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    print("counter", counter, "of", 2 * rounds)  # after the threads


if __name__ == "__main__":
    main()
