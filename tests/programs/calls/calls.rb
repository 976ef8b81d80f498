# Call traces and raised logs for the Ruby integration tests: recursion, a method that raises (rescued by its
# caller), a library's exception rescued in the user's code, a class method, a module's class and a thread.
require "set"
$stdout.sync = true

module Shop
  class Parser
    def self.build = new

    def parse(text)
      raise ArgumentError, "empty input" if text.empty? # raise empty
      { text: text, length: text.length }
    end

    def parse_all(texts)
      texts.count do |text|
        parse(text)
        true
      rescue ArgumentError => e
        puts "skipped: #{e.message}" # rescue empty
        false
      end
    end
  end
end

def fib(n)
  n < 2 ? n : fib(n - 1) + fib(n - 2) # fib body
end

def number(text)
  checked(text)
rescue ArgumentError
  0 # rescue number
end

def checked(text)
  $entries = Set.new(Tally.new($checks)).size
  Integer(text)
ensure
  $checks = ($checks || 0) + 1 # ensure checked: run on the exception's way out, not its handler
end

# read by Ruby's own set.rb (Set.new → merge → do_with_enum → each_entry): a callee below methods left out
class Tally
  def initialize(count)
    @count = count || 0
  end

  def each_entry(&block) = (0..@count).each(&block)
end

def square(x) = x * x

puts fib(6) # call fib
puts Shop::Parser.build.parse_all(["ab", "", "xyz"])
puts number("12") + number("zz")
puts Thread.new { square(7) }.value
