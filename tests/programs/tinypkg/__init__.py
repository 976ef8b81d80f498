"""A tiny package run with python -m tinypkg."""
