# Runs until ended: a method called every 20 ms, for a call trace begun while the program runs.
$stdout.sync = true

def tick(n) = n * 10

count = 0
loop do
  count += 1
  tick(count)
  sleep 0.02 # between ticks
end
