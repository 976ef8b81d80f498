"""Exceptions the program's code swallows: one raised inside a library for its call, one a builtin raises, one a
with block suppresses, one a finally passes on to an except further out."""
import contextlib
import json


def load(text):
    try:
        return json.loads(text)  # json raises here for the call
    except ValueError:
        return None


def number(text):
    try:
        return int(text)  # int raises here
    except (TypeError, ValueError):
        return 0


def cleanup():
    try:
        raise OSError("disk gone")  # raised in cleanup
    finally:
        print("cleaned")


def main():
    load("{broken")
    number("x")
    with contextlib.suppress(KeyError):
        {}["gone"]  # suppressed here
    try:
        cleanup()
    except OSError:  # caught here, after cleanup
        print("cleanup failed")


if __name__ == "__main__":
    main()
