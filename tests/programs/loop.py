"""A short deterministic loop, for breakpoint, logpoint and trace tests."""


def square(n):
    result = n * n
    return result


def main():
    total = 0
    start = "begin"
    for i in range(10):
        total += square(i)

        # a comment line in the loop, followed by code
        total -= 0
    print("total:", total)
    return start


if __name__ == "__main__":
    main()
