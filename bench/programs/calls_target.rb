# The call-trace bench's Ruby program: work called N times in a loop, after a line to stop at first.
def work(i)
  i * 2 # body
end

def main(n)
  total = 0 # start
  n.times { |i| total += work(i) }
  puts total
end

main(Integer(ARGV[0]))
