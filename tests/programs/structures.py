"""Nested calls and assorted values, for stack and variable inspection tests."""

GLOBAL_SETTING = "on"


class Point:
    def __init__(self, x, y):
        self.x = x
        self.y = y


def inner(depth, data):
    marker = depth * 2
    return marker + data["k"]


def middle(depth):
    label = "middle"
    return inner(depth + 1, {"k": 1}) + len(label)


def outer():
    big = list(range(10_000))
    mapping = {"alpha": 1, "beta": [1, 2, 3]}
    items = [10, 20, 30]
    point = Point(3, 4)
    long_text = "x" * 500
    x = 5
    y = x * 2
    print("y is", y)
    return middle(1) + len(big) + len(mapping) + len(items) + point.x + len(long_text)


if __name__ == "__main__":
    print("result", outer())
