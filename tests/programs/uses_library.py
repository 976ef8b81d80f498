"""Calls into the standard library, for breakpoints set in library code."""

import json


def main():
    data = {"answer": 42}
    text = json.dumps(data)  # user line before the library call
    print(text)


main()
