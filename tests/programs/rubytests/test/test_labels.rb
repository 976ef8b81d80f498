require "test/unit"
require "prices"

class TestLabels < Test::Unit::TestCase
  def test_capitalized
    assert_equal "Pear", Prices.label("pear")
  end

  def test_shouted
    label = Prices.label("plum")
    assert_equal "PLUM", label # test-unit check
  end

  def test_later
    omit "not decided"
  end
end
