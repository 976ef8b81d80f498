"""Runs debugpy's adapter in polydbg's interpreter with TCP_NODELAY on every socket it opens, and without its
fatal errors on a peer that has gone.

Once the adapter runs (its first accepted connection), a session ending because the program's launcher is gone
first reads what the program's debug server still sends (up to 30 s): debugpy finalized at once and dropped those
messages, the last output events of a busy logpoint among them.
Passed as ``python -c`` (see ``polydbg.backends.debugpy.process``); kept short, as it is sent on each start.
debugpy's adapter ends itself with exit code 1 (``os._exit``) when a handler raises, and a handler raises when
it answers a request, or sends an event, on a connection that has just closed: a child process's connection
polydbg ended while that child's configurationDone was being answered, or the client of the oldest session left
when a launch session ends and the adapter reports its sockets. The session was lost with the program's exit
code, 1 run in 5 for a pool of workers under load. Nobody is left to read such an answer or event, so it is
dropped (the request counts as answered), as debugpy already does for a handler's last answer.
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
from debugpy.common import messaging as _m
_se, _re = _m.JsonMessageChannel.send_event, _m.Request.respond
def send_event(self, *args, **kwargs):
    try: _se(self, *args, **kwargs)
    except _m.NoMoreMessages: pass
def respond(self, body):
    try: _re(self, body)
    except _m.NoMoreMessages: self.response = _m.Response(self.channel, 0, self, {} if body is None else body)
_m.JsonMessageChannel.send_event, _m.Request.respond = send_event, respond
runpy.run_module('debugpy.adapter', run_name='__main__', alter_sys=True)
