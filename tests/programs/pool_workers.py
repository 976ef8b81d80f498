"""A multiprocessing pool: the work runs in forked worker processes."""
import multiprocessing


def work(n):
    square = n * n  # in worker
    return square


if __name__ == "__main__":
    with multiprocessing.Pool(2) as pool:
        print("squares", pool.map(work, range(4)), flush=True)
