# A program that runs until killed, for attaching to: counts ticks.
count = 0
loop do
  count += 1 # each tick
  sleep 0.05
end
