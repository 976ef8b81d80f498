"""Raises a user exception class's subclass caught, a KeyError caught, then the subclass uncaught."""


class AppError(Exception):
    pass


class ParseError(AppError):
    pass


def parse(text):
    if not text.isdigit():
        raise ParseError(f"not a number: {text!r}")  # raise here
    return int(text)


def lenient(text):
    try:
        return parse(text)
    except AppError:
        return 0


def main():
    try:
        {}["missing"]
    except KeyError as missing:
        print("no key:", missing)
    print("lenient:", lenient("x1"))
    print("strict:", parse("y2"))


if __name__ == "__main__":
    main()
