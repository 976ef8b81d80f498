# A program that runs until killed, for attaching to: counts ticks.
count = 0
$stderr.puts "ticking" # the program runs: rdbg's session is set up (an attach before that crashes rdbg 1.4.0)
loop do
  count += 1 # each tick
  sleep 0.05
end
