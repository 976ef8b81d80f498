"""The reload bench's Python program: a loop calling one function, a breakpoint in the loop."""
import sys


def price(i):
    return i * 2  # the function edited


def main(rounds):
    total = 0
    for i in range(rounds):
        total += price(i)  # the loop body
    print("total", total)


main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
