"""A session on the ``FakeBackend`` (tests/fakes.py), for the session's unit tests: the program is a real file
(source excerpts and line checks read it), the debugger a fake that each test steers."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from polydbg.backends.base import Backend, BackendListener, LaunchSpec
from polydbg.policy import Policy
from polydbg.session.model import StopReport
from polydbg.session.session import Session
from tests.fakes import FakeBackend

LINES = 19  # the program's length: line n reads ``line_n = n``


def write_program(directory: Path, name: str = "prog.py") -> str:
    path = directory / name
    path.write_text("".join(f"line_{n} = {n}\n" for n in range(1, LINES + 1)))
    return str(path)


class Rig:
    """A session whose backends are fakes; ``prepare`` sets up each new one before it launches."""

    def __init__(self, program: str, language: str = "python", policy: Policy | None = None,
                 prepare: Callable[[FakeBackend], None] | None = None,
                 backend: type[FakeBackend] = FakeBackend) -> None:
        self.program = program
        self.prepare = prepare
        self.backend_class = backend
        self.backends: list[FakeBackend] = []
        self.session = Session("s1", language, "fake", self._make, os.path.basename(program),
                               os.path.dirname(program), policy)

    def _make(self, listener: BackendListener) -> Backend:
        backend = self.backend_class(listener, self.program)
        if self.prepare is not None:
            self.prepare(backend)
        self.backends.append(backend)
        return backend

    @property
    def backend(self) -> FakeBackend:
        """The latest backend (a restart makes a new one)."""
        return self.backends[-1]

    async def start(self) -> StopReport:
        """Launch; the fake stops at once, at line 2."""
        return await self.session.start(LaunchSpec(program=self.program), 5.0, None)
