"""The functions ``shop`` re-exports."""


def total(prices):
    return sum(prices)


def discount(price):  # never called
    return price * 0.9
