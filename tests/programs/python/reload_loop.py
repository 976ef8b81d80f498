"""A loop that prints what step() and Scale.apply make of each number. tests/integration/test_python_reload.py edits a
copy of it (and of reload_scale.py) while it is stopped; its output shows which code each iteration ran."""

from reload_scale import Scale


def step(i):
    made = i * 2  # step's body
    return made


def main():
    scale = Scale(10)
    for i in range(1, 6):
        value = step(i)  # the loop
        print(f"step({i}) = {value}; scaled {scale.apply(value)}", flush=True)


if __name__ == "__main__":
    main()
