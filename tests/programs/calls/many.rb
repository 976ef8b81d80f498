# Calls one method ARGV[0] times, for a Ruby trace bounded by max_hits.
def one(n) = n

def rounds(count)
  count.times { one(1) }
end

rounds(Integer(ARGV[0])) # start
