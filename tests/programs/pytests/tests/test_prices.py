import unittest

import pytest
from prices import parse_price, total


def test_single_item():
    assert total([2.5], 1) == 2.5


def test_empty_price_is_refused():
    with pytest.raises(ValueError):
        parse_price("  ")  # expected: raised in the code under test, caught by pytest.raises


def test_refused_through_the_callable_form():
    pytest.raises(ValueError, parse_price, "\t")  # noqa: RUF061  (the callable form is what this test is for)


class TestBulk:
    @pytest.mark.parametrize("quantity", [5, 10])
    def test_bulk_discount(self, quantity):
        expected = 9.0 if quantity >= 10 else 5.0
        got = total([1.0], quantity)
        assert got == expected  # bulk check


class PricesCase(unittest.TestCase):
    def test_parse(self):
        self.assertEqual(parse_price("3.5"), 3.5)

    def test_refuses_blank(self):
        self.assertRaises(ValueError, parse_price, " ")  # expected: unittest's callable form catches it
        self.assertRaisesRegex(ValueError, "empty", lambda: parse_price(""))

    def test_bulk_again(self):
        cart = [1.0, 1.0]
        self.assertEqual(total(cart, 10), 18.0)  # unittest check


def test_total_through_a_helper():
    from tests.helpers import same

    same(4.5, total([1.5], 2))
