"""Runs debugpy's adapter in polydbg's interpreter with TCP_NODELAY on every socket it opens.

Passed as ``python -c`` (see ``polydbg.backends.debugpy.process``); kept short, as it is sent on each start.
"""
import socket, runpy
_a, _c = socket.socket.accept, socket.socket.connect
def _nd(s):
    try: s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError: pass
def accept(self):
    c, addr = _a(self); _nd(c); return c, addr
def connect(self, address):
    r = _c(self, address); _nd(self); return r
socket.socket.accept, socket.socket.connect = accept, connect
runpy.run_module('debugpy.adapter', run_name='__main__', alter_sys=True)
