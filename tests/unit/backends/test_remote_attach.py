"""Attaching to a debug server elsewhere: its host as each debugger takes it, and the node backend's
path mappings ({local: remote}). tests/integration/test_remote_netns.py attaches for real."""

from __future__ import annotations

import pytest

from polydbg.backends.base import AttachSpec
from polydbg.backends.node.scripts import PathMap, Scripts


@pytest.mark.parametrize(("host", "address", "in_url"), [
    (None, "127.0.0.1", "127.0.0.1"), ("build-box.local", "build-box.local", "build-box.local"),
    ("10.0.0.2", "10.0.0.2", "10.0.0.2"), ("::1", "::1", "[::1]"), ("[::1]", "::1", "[::1]"),
    ("fd31::2%eth0", "fd31::2%eth0", "[fd31::2%eth0]")])
def test_a_host_with_or_without_brackets(host: str | None, address: str, in_url: str) -> None:
    spec = AttachSpec(host=host, port=5678)
    assert (spec.address, spec.host_in_url) == (address, in_url)


def test_paths_swap_under_the_longest_matching_root_and_nowhere_else() -> None:
    paths = PathMap([("/home/me/app", "/srv/app"), ("/home/me/app/lib", "/opt/lib"), ("/home/me/root", "/")])
    assert paths.remote("/home/me/app/src/main.js") == "/srv/app/src/main.js"
    assert paths.remote("/home/me/app/lib/util.js") == "/opt/lib/util.js"  # the longer root wins
    assert paths.local("/opt/lib/util.js") == "/home/me/app/lib/util.js"
    assert paths.local("/srv/app") == "/home/me/app"
    assert paths.remote("/home/me/apple/x.js") == "/home/me/apple/x.js"  # a root matches whole components only
    assert paths.local("/etc/x.js") == "/home/me/root/etc/x.js"  # "/" is under every path
    assert PathMap().local("/srv/app/x.js") == "/srv/app/x.js"


def test_scripts_report_the_local_path_of_a_remote_script() -> None:
    scripts = Scripts(PathMap([("/home/me/app/", "/srv/app/")]))
    script = scripts.parsed({"scriptId": "7", "url": "file:///srv/app/main.js"})
    assert (script.url, script.path) == ("file:///srv/app/main.js", "/home/me/app/main.js")
    assert scripts.place("7", 0, 0).file == "/home/me/app/main.js"
