"""Computes average order values per customer — but one customer's average comes out wrong."""


def load_orders():
    return [
        {"customer": "ada", "amount": 120.0},
        {"customer": "bob", "amount": 80.0},
        {"customer": "ada", "amount": 60.0},
        {"customer": "cy", "amount": 45.5},
        {"customer": "bob", "amount": 20.0},
    ]


def average_by_customer(orders):
    totals = {}
    counts = {}
    for order in orders:
        name = order["customer"]
        totals[name] = totals.get(name, 0) + order["amount"]
        counts[name] = counts.get(name, 0) + 1
    averages = {}
    for name, total in totals.items():
        averages[name] = total / (counts[name] + 1)  # the bug: off by one
    return averages


def main():
    orders = load_orders()
    averages = average_by_customer(orders)
    for name, value in sorted(averages.items()):
        print(f"{name}: {value:.2f}")


if __name__ == "__main__":
    main()
