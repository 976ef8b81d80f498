"""Loops forever (for pause and inspection-while-running tests)."""


def spin():
    count = 0
    while True:
        count += 1  # spin here


spin()
