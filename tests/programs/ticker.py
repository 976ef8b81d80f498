"""Counts forever, sleeping a little each turn (for tests that need a running program)."""

import time


def main():
    i = 0
    while True:
        square = i * i
        i += 1
        time.sleep(0.01 + square * 0)


if __name__ == "__main__":
    main()
