"""A server traced while it runs: its acceptor thread waits in accept() (C code, where no pause stops it), a client
thread asks it every 20 ms (argv[1] requests, forever without one), the main thread waits in join()."""
import socket
import sys
import threading
import time


def handle(request):
    return request.upper()


def serve(listener):
    while True:
        connection, _ = listener.accept()
        with connection:
            connection.sendall(handle(connection.recv(64)))


def ask(port, number):
    with socket.create_connection(("127.0.0.1", port)) as connection:
        connection.sendall(b"req%d" % number)
        return connection.recv(64)


def client(port, count):
    number = 0
    while count is None or number < count:
        ask(port, number)
        number += 1
        time.sleep(0.02)


listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen()
threading.Thread(target=serve, args=(listener,), name="acceptor", daemon=True).start()
asking = threading.Thread(target=client, args=(listener.getsockname()[1], int(sys.argv[1]) if sys.argv[1:] else None),
                          name="client")
print("serving", flush=True)
asking.start()
asking.join()
