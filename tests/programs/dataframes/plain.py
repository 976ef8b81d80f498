"""A program that imports neither numpy nor pandas, run with an interpreter that has both."""
import sys

names = ["numpy", "pandas"]
values = {"a": [1, 2, 3]}
print(len(values), file=sys.stderr)  # stop here
