# Exceptions for the Ruby integration tests: one rescued, then one that ends the program.
$stdout.sync = true

class OutOfStock < StandardError; end

def pick(stock, name)
  raise OutOfStock, "no #{name} left" if stock[name].zero? # raise out of stock
  stock[name] -= 1
end

stock = { "apple" => 1, "pear" => 0 }
begin
  pick(stock, "pear")
rescue OutOfStock => e
  puts "rescued: #{e.message}"
end
total = 10 / stock["pear"] # divide by zero
puts total
