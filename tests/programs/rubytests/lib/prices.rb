# Prices of a small shop: what the Ruby tests by name (tests/integration/test_ruby_tests.py) exercise.
module Prices
  module_function

  def total(unit, quantity)
    subtotal = unit * quantity # subtotal line
    quantity >= 10 ? subtotal : subtotal # the bulk discount is missing: the tests that want it fail
  end

  def label(name)
    raise ArgumentError, "a blank name" if name.strip.empty?

    name.capitalize
  end
end
