"""Calls a package's function by its public name, for call traces that name it so."""
import shop

print(shop.total([1, 2]))
