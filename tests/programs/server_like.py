"""Prints that it is up, then waits like a server for requests that never come."""
import threading


def handle(request):
    return request.upper()  # handler breakpoint


print("serving on port 0", flush=True)
threading.Event().wait()
