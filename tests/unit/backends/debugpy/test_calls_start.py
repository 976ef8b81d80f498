"""Starting the Python call recorder in a program that runs already: the shim's profile function put into every
thread (a thread blocked in C code too: a socket's accept, an Event's wait), run in a Python of its own as the
program runs it; and a program whose recorder could not reach polydbg's socket refused before anything runs."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from polydbg.backends.debugpy import calls
from polydbg.backends.kit import shims
from polydbg.errors import UsageError

BLOCKED = textwrap.dedent("""
    import importlib.util, socket, sys, threading
    spec = importlib.util.spec_from_file_location('recorder', sys.argv[1])
    recorder = importlib.util.module_from_spec(spec); spec.loader.exec_module(recorder)
    calls = []
    def profile(frame, event, arg):
        if event == 'call' and frame.f_code.co_name == 'handle':
            calls.append(threading.current_thread().name)
    def handle(value):
        return value
    listener = socket.socket(); listener.bind(('127.0.0.1', 0)); listener.listen()
    def accept():
        connection, _ = listener.accept(); handle(connection.recv(8))
    event = threading.Event()
    def wait():
        event.wait(); handle(1)
    threads = [threading.Thread(target=accept, name='acceptor'), threading.Thread(target=wait, name='waiter')]
    for thread in threads: thread.start()
    def blocked():  # each thread's innermost frame is the library's call into C: socket.accept, Condition.wait
        frames = sys._current_frames()
        tops = [frames.get(t.ident) for t in threads]
        return [f and f.f_code.co_name for f in tops] == ['accept', 'wait'] and tops[1].f_back.f_code.co_name == 'wait'
    while not blocked(): pass
    armed = []
    setter = threading.Thread(target=lambda: armed.append(recorder._all_threads(profile)))
    setter.start(); setter.join()
    socket.create_connection(listener.getsockname()).sendall(b'hi'); event.set()
    for thread in threads: thread.join()
    print(armed, sorted(calls))
""")


def test_every_thread_records_from_its_next_call_those_blocked_in_c_code_too() -> None:
    """Set from a third thread (the recorder's) while the other two wait in C: both record their next call."""
    done = subprocess.run([sys.executable, "-c", BLOCKED, str(shims.path(calls.__file__, calls.SHIM))],
                          capture_output=True, text=True, timeout=60, check=True)
    assert done.stdout.strip() == "[True] ['acceptor', 'waiter']", done


@pytest.mark.parametrize(("container", "address", "where"), [
    (True, None, "a program in a container"), (False, ("10.1.2.3", 5678), "a program at 10.1.2.3")])
def test_a_program_that_cannot_reach_the_socket_is_refused_saying_what_works(
        container: bool, address: tuple[str, int] | None, where: str) -> None:
    with pytest.raises(UsageError) as refused:
        calls.unreachable(container, address)
    assert where in str(refused.value) and "debug_trace(points=…)" in str(refused.value), refused.value


@pytest.mark.parametrize("address", [None, ("127.0.0.1", 5678), ("localhost", 5678), ("::1", 5678)])
def test_a_program_on_this_machine_records(address: tuple[str, int] | None) -> None:
    calls.unreachable(False, address)
