"""The debuggee of the benchmarks: one breakpoint line, a step, then it runs to the end."""


def summarize(values):
    total = sum(values)
    mean = total / len(values)
    labels = [f"v{v}" for v in values[:5]]
    return {"total": total, "mean": mean, "labels": labels}


def main():
    data = list(range(50))
    config = {"name": "bench", "retries": 3}
    summary = summarize(data)
    print("summary:", summary["total"], config["name"])
    return summary


if __name__ == "__main__":
    main()
