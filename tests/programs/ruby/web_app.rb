# A Rack app served by WEBrick, as `rackup` would serve it: what tests/integration/test_ruby_web.py requests
# under the debugger. PORT=0 (the default) lets the system pick the port; the program prints it.
require "json"
require "rack"
require "rack/handler/webrick"
require "webrick"

PRICES = { "pear" => 3, "plum" => 5 }.freeze

class Shop
  def call(env)
    request = Rack::Request.new(env)
    fruit = request.params["fruit"].to_s
    quantity = Integer(request.params.fetch("quantity", "1"))
    total = PRICES.fetch(fruit, 0) * quantity # handler breakpoint
    [200, { "Content-Type" => "application/json" }, [JSON.generate(fruit: fruit, total: total)]]
  end
end

server = WEBrick::HTTPServer.new(BindAddress: "127.0.0.1", Port: Integer(ENV.fetch("PORT", "0")),
                                 Logger: WEBrick::Log.new($stderr, WEBrick::Log::WARN), AccessLog: [])
server.mount "/", Rack::Handler::WEBrick, Shop.new
port = server.config[:Port] # port known
puts "listening on http://127.0.0.1:#{port}/"
$stdout.flush
trap("TERM") { server.shutdown }
server.start
