"""A stand-in for a DAP backend's ``_request``: answers by command, records what was sent."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from polydbg.errors import AdapterRequestError

Answer = dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]] | AdapterRequestError


class FakeRequests:
    """Each command's answers in order (the last one repeats); a callable answers from the arguments,
    an ``AdapterRequestError`` is raised."""

    def __init__(self, **answers: Answer | list[Answer]) -> None:
        self._answers = {command: list(a) if isinstance(a, list) else [a] for command, a in answers.items()}
        self.sent: list[tuple[str, dict[str, Any] | None, float | None]] = []

    async def __call__(self, command: str, arguments: dict[str, Any] | None = None,
                       timeout: float | None = None) -> dict[str, Any]:
        self.sent.append((command, arguments, timeout))
        queue = self._answers.get(command)
        if not queue:
            raise AdapterRequestError(command, "not answered by the fake")
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        if isinstance(answer, AdapterRequestError):
            raise answer
        return answer(arguments or {}) if callable(answer) else answer

    def commands(self) -> list[str]:
        return [command for command, _, _ in self.sent]
