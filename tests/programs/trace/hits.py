"""Counts to N (the first argument, default 20000) for trace tests: each turn passes the loop body once.
The same program is in hits.c, hits.js, Hits.java and go/main.go."""

import sys


def main():
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 20000
    total = 0  # before the loop
    for i in range(n):
        total += i  # loop body
        # a comment in the loop
    print("total", total)  # after the loop


if __name__ == "__main__":
    main()
