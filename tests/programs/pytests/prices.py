"""Code under test: a cart's total, with a bulk discount that is off by one."""


def total(prices, quantity):
    subtotal = sum(prices) * quantity
    if quantity > 10:  # the bug: bulk starts at 10
        subtotal *= 0.9
    return round(subtotal, 2)


def parse_price(text):
    if not text.strip():
        raise ValueError("empty price")
    return float(text)
