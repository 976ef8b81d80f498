"""Entry point of python -m tinypkg."""


def greet(name):
    message = "hi " + name  # greet line
    return message


print(greet("module"))
