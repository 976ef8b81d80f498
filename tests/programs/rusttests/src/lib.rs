//! Code under test for polydbg's Rust tests by name: unit tests in the crate, integration tests in tests/.

/// The price of `quantity` items, a tenth off from ten items on (the bug: it never applies).
pub fn total(unit: f64, quantity: u32) -> f64 {
    let mut total = unit * f64::from(quantity);
    if quantity > 10 {
        total *= 0.9;
    }
    total
}

/// The last price of a list (the bug: it panics on an empty one).
pub fn last(prices: &[f64]) -> f64 {
    prices[prices.len() - 1] // the panic line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn single_item() {
        assert_eq!(total(2.5, 1), 2.5);
    }

    #[test]
    fn bulk_discount() {
        let quantity = 10;
        let got = total(1.0, quantity);
        let expected = 9.0;
        assert_eq!(got, expected, "total(1.0, {quantity})"); // bulk check
    }

    #[test]
    #[should_panic(expected = "attempt to subtract with overflow")]
    fn last_of_nothing_panics() {
        last(&[]);
    }
}
