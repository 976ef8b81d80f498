# Values for the Ruby integration tests: an Array, a Hash, a Struct, an object with instance variables.
$stdout.sync = true
Point = Struct.new(:x, :y)

class Cart
  def initialize(owner)
    @owner = owner
    @items = %w[apple pear plum]
  end

  def total(prices)
    sum = 0
    @items.each { |item| sum += prices.fetch(item) } # each item
    sum
  end
end

numbers = (1..120).to_a
prices = { "apple" => 3, "pear" => 5, "plum" => 7 }
point = Point.new(1, 2)
cart = Cart.new("ann")
puts "ready" # values ready
total = cart.total(prices) # call total
puts "total #{total} #{numbers.size} #{point.x}"
