"""Runs debugpy's adapter in polydbg's interpreter with TCP_NODELAY on every socket it opens.

Once the adapter runs (its first accepted connection), a session ending because the program's launcher is gone
first reads what the program's debug server still sends (up to 30 s): debugpy finalized at once and dropped those
messages, the last output events of a busy logpoint among them.
Passed as ``python -c`` (see ``polydbg.backends.debugpy.process``); kept short, as it is sent on each start.
"""
import socket, runpy, sys
_a, _c = socket.socket.accept, socket.socket.connect
def _nd(s):
    try: s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except OSError: pass
def _settle():
    m = sys.modules.get('debugpy.adapter.sessions')
    if m is None or hasattr(m.Session, '_f'): return
    def _finalize(self, why, terminate_debuggee):
        if self.launcher and not self.launcher.is_connected and self.server and self.server.is_connected:
            self.wait_for(lambda: not self.server.is_connected, timeout=30)
        self._f(why, terminate_debuggee)
    m.Session._f, m.Session._finalize = m.Session._finalize, _finalize
def accept(self):
    c, addr = _a(self); _nd(c); _settle(); return c, addr
def connect(self, address):
    r = _c(self, address); _nd(self); return r
socket.socket.accept, socket.socket.connect = accept, connect
runpy.run_module('debugpy.adapter', run_name='__main__', alter_sys=True)
