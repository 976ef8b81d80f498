"""Calls to trace: parse_date calls parse_month (a callee), which raises on a bad month; fib recurses; workers run
in threads; a value whose repr calls traced code; a coroutine."""
import asyncio
import json
import sys
import threading


class Month(ValueError):
    pass


def parse_month(text):
    month = int(text)
    if not 1 <= month <= 12:
        raise Month(f"month must be in 1..12, not {month}")
    return month


def parse_date(s):
    year, month, day = s.split("-")
    return (int(year), parse_month(month), int(day))


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


class Loud:
    def __repr__(self):
        return f"Loud({parse_month('1')})"


def shout(value):
    return value


def inner(n):  # a name the standard library's code has too (typing's cache, called as asyncio imports)
    return json.dumps({"n": n})


def worker(n):
    return fib(n)


async def fetch(n):
    await asyncio.sleep(0)
    return n * 2


def main(rounds):
    dates = ("2024-01-15", "2024-13-01", "2024-02-30")  # dates
    for s in dates:
        try:
            parse_date(s)
        except ValueError as error:
            print("refused:", error)
    fib(5)
    shout(Loud())
    inner(1)
    threads = [threading.Thread(target=worker, args=(i,), name=f"worker-{i}") for i in (3, 4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    asyncio.run(fetch(21))
    total = 0  # rounds
    for _ in range(rounds):
        total += fib(1)
    print("done", total)


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 0)
