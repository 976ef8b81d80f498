"""A second small program for concurrent-session tests."""


def countdown(n):
    while n > 0:
        n -= 1  # countdown step
    return n


print("countdown:", countdown(3))
