"""The container helpers' pure parts: a container path as the host reads it, and engine names."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from polydbg import namespaces
from polydbg.errors import UsageError


def test_a_container_path_is_read_through_its_root_when_the_file_is_there(tmp_path: Path) -> None:
    root = tmp_path / "root"
    (root / "app").mkdir(parents=True)
    (root / "app" / "x.py").write_text("")
    assert namespaces.host_path("/app/x.py", str(root)) == f"{root}/app/x.py"
    assert namespaces.host_path("/app/missing.py", str(root)) == f"{root}/app/missing.py"  # missing inside
    assert namespaces.host_path(__file__, str(root)) == __file__  # only the host has it
    assert namespaces.host_path(f"{root}/app/x.py", str(root)) == f"{root}/app/x.py"  # already the host's
    assert namespaces.host_path("/app/x.py", str(root), keep=("/app",)) == "/app/x.py"  # the agent's mapping
    assert namespaces.host_path("app/x.py", str(root)) == "app/x.py"


def test_engine_names() -> None:
    assert namespaces.engine_of("docker://web") == ("docker", "web")
    assert namespaces.engine_of("podman://db-1") == ("podman", "db-1")
    assert namespaces.engine_of("/srv/app") is None and namespaces.engine_of("k8s://x") is None
    assert namespaces.engine_of(None) is None


@pytest.mark.anyio
async def test_an_engine_name_that_is_an_option_is_refused_before_the_engine_runs() -> None:
    with pytest.raises(UsageError, match="not a container name"):
        await namespaces.container_pid("docker", "--help")


def test_our_own_process_is_in_no_container() -> None:
    assert namespaces.of(os.getpid()) is None
