# The conformance program (the same computation as conformance.py, .c, .js, go/): prints and exits with 13.

def add(a, b) # add starts
  total = a + b # in add
  total
end

def main
  x = 3
  y = 4
  s = add(x, y) # call add
  4.times do |i| # loop
    s += i # loop body
  end
  puts "result #{s}" # print result
  sleep 60 while ARGV.any? # with an argument, stay until killed
  s
end

$stdout.sync = true
exit main
