"""The call-trace bench's Python program: ``work`` called N times in a loop, after a line to stop at first."""
import sys


def work(i):
    return i * 2  # body


def main(n):
    total = 0  # start
    for i in range(n):
        total += work(i)
    print(total)


main(int(sys.argv[1]))
