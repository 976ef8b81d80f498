"""Raises a caught ValueError, then an uncaught one."""


def fail(value):
    raise ValueError(f"bad value {value}")


def handled():
    try:
        fail(1)
    except ValueError as exc:
        print("handled the first one:", exc)


def main():
    handled()
    fail(2)


if __name__ == "__main__":
    main()
