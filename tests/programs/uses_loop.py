"""Calls into loop.py, for tests with breakpoints in two files."""

import loop

first = loop.square(2)
second = loop.square(3)
print("sum", first + second)
