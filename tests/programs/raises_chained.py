"""An exception raised while handling another: pydevd lists the chained one's frames after the program's."""


def load(settings):
    try:
        return settings["port"]  # the chained KeyError
    except KeyError:
        raise ValueError("no port set") from None  # stops here


def main():
    return load({})


main()  # the program runs
