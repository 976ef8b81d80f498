def add(a, b):
    total = a + b
    return total * 2  # add returns


def main():
    x = add(1, 2)  # first call
    y = add(x, 3)
    print(x, y)


main()
