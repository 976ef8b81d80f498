"""A class of its own module, imported by reload_loop.py: a method changed while the program runs."""


class Scale:
    def __init__(self, factor):
        self.factor = factor

    def apply(self, value):
        return value * self.factor  # apply's body
