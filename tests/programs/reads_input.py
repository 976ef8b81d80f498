"""Asks for a name with input(), then counts the remaining lines of its standard input."""
import sys

name = input("name? ")
rest = sys.stdin.read().splitlines()
print("hello", name, "and", len(rest), "more lines")
