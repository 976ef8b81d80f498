"""The conformance program (the same computation as conformance.c, .cpp, rust/ and go/): prints and exits with 13."""

import sys
import time


def add(a, b):  # add starts
    total = a + b  # in add
    return total


def main():
    x = 3
    y = 4
    s = add(x, y)  # call add
    for i in range(4):  # loop
        s += i  # loop body
    print(f"result {s}")  # print result
    while len(sys.argv) > 1:  # with an argument, stay until killed
        time.sleep(60)
    return s


if __name__ == "__main__":
    sys.exit(main())
