"""A package whose public names are its submodule's functions (as humanize's ``humanize.ordinal`` is
``humanize.number.ordinal``)."""
from shop.pricing import discount, total

__all__ = ["discount", "total"]
