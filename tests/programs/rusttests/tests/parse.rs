// An integration test: its own binary, named after the file.
use rusttests::{last, total};

#[test]
fn eleven_items() {
    assert!((total(1.0, 11) - 9.9).abs() < 1e-9);
}

#[test]
fn last_of_two() {
    let prices = vec![1.5, 2.5];
    let got = last(&prices[2..]);
    assert!(got > 0.0, "last price {got}"); // not reached
}

#[test]
#[ignore = "slow"]
fn many_items() {
    assert!((total(1.0, 1000) - 900.0).abs() < 1e-9);
}
