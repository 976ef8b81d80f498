"""A small program with functions, loops and a data structure, for stepping tests."""


def add(a, b):
    total = a + b
    return total


def collect(n):
    items = []
    for i in range(n):
        # comment line inside the loop
        items.append(add(i, i))
    return items


def main():
    greeting = "hello"
    numbers = collect(5)
    big = list(range(10_000))
    config = {"name": "demo", "retries": 3}
    print("numbers:", numbers)
    print(greeting, len(big), config["name"])
    return sum(numbers)


if __name__ == "__main__":
    result = main()
    print("result:", result)
