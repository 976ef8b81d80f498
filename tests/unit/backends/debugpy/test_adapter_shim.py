"""The adapter shim, run as polydbg runs it: debugpy's adapter must not end itself (``os._exit(1)``, the session
lost with the program's exit code) when it answers a request or sends an event on a connection that has closed."""

from __future__ import annotations

import subprocess
import sys

from polydbg.backends.debugpy.process import ADAPTER_SHIM

RUN_ADAPTER = "runpy.run_module('debugpy.adapter', run_name='__main__', alter_sys=True)"
PEERS_THAT_HAVE_GONE = """
import io, types
from debugpy.common import messaging
from debugpy.adapter import clients, launchers, servers
for module in (clients, launchers, servers):
    module.listener = None  # no listener is serving yet
stream = messaging.JsonIOStream(io.BytesIO(), io.BytesIO(), "a connection that has closed")
stream.close()
channel = messaging.JsonMessageChannel(stream)
# the report of sockets to the oldest session's client when a launch session ends
clients.Client.report_sockets(types.SimpleNamespace(channel=channel))
# a child's configurationDone answered after polydbg ended that child's connection: answered, for debugpy's checks
request = messaging.Request(channel, 5, "configurationDone", {})
request.respond({})
assert request.response is not None
print("still here")
"""


def test_answering_or_telling_a_peer_that_has_gone_does_not_end_the_adapter() -> None:
    assert RUN_ADAPTER in ADAPTER_SHIM
    code = ADAPTER_SHIM.replace(RUN_ADAPTER, PEERS_THAT_HAVE_GONE)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0 and done.stdout == "still here\n", done.stderr[-2000:]
