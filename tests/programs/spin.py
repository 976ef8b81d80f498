"""Runs until killed: a loop that sleeps a little each turn."""

import time


def main():
    count = 0
    while True:
        count += 1
        time.sleep(0.01)


if __name__ == "__main__":
    main()
