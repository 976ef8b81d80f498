"""A server whose thread runs only library code (socketserver's serve_forever), stopped in the main thread."""
import socketserver
import threading

server = socketserver.TCPServer(("127.0.0.1", 0), socketserver.BaseRequestHandler)
serving = threading.Thread(target=server.serve_forever, name="serving", daemon=True)
serving.start()
port = server.server_address[1]  # stop here
server.shutdown()
