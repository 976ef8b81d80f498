require "prices"

RSpec.describe Prices do
  describe ".total" do
    it "charges one item at its price" do
      expect(Prices.total(3, 1)).to eq(3)
    end

    it "takes a tenth off ten items" do
      got = Prices.total(2, 10)
      expect(got).to eq(18) # rspec bulk check
    end
  end
end
