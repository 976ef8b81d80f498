"""Tables and arrays: pandas DataFrames and Series and numpy arrays, read at a breakpoint (run with .venv here)."""
import numpy as np
import pandas as pd

prices = pd.DataFrame({"fruit": ["pear", "fig", "kiwi", "plum"], "price": [1.5, 2.25, 0.8, 3.0],
                       "stock": [10, 0, 25, 7]})
price = prices["price"]
grid = np.arange(12, dtype=np.int64).reshape(3, 4)
big = np.linspace(0.0, 1.0, 100_000)
words = np.array(["a", "bb", "ccc"])
wide = pd.DataFrame(np.arange(300).reshape(10, 30))
long_frame = pd.DataFrame({"n": range(1000)}, index=[f"r{i}" for i in range(1000)])
nested = {"df": prices, "grid": grid, "first": price.iloc[0], "index": prices.index}
total = float(price.sum())  # look here
print(total)
