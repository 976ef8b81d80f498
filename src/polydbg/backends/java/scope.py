"""One frame of a stopped thread as the evaluator sees it: locals by name (``$exception`` too, at an exception
stop), ``this``, its class.

The frame id is looked up when first needed and forgotten when an invoke runs the thread (JDWP
invalidates a thread's frame ids whenever it resumes), so it is found again by (thread, depth).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from polydbg.backends.java.classes import Classes, JavaClass
from polydbg.backends.java.terms import EvaluationError
from polydbg.backends.kit import thrown, timeouts
from polydbg.jdwp.client import JdwpClient
from polydbg.jdwp.codec import CommandSet, Location, Tag, Value

FrameAt = Callable[[int, int], Awaitable[tuple[int, Location]]]  # (thread, shown index) → (frame id, where)
# (thread, the invoke's reply, its label, what to do once it returned) → the reply (Threads._invoke)
Invoking = Callable[[int, "asyncio.Future[bytes]", str, Callable[[], Awaitable[None]]], Awaitable[bytes]]


class StoppedFrame:
    def __init__(self, client: JdwpClient, classes: Classes, frame_at: FrameAt, thread: int, index: int,
                 invoke_refusal: str | None, forget: Callable[[int], None],
                 invoking: Invoking, thrown: Value | None = None) -> None:
        self.client = client
        self.classes = classes
        self.thread = thread
        self.index = index
        self.invoke_refusal = invoke_refusal
        self._frame_at = frame_at
        self._forget = forget
        self._invoking = invoking
        self._found: tuple[int, Location] | None = None
        self._thrown = thrown  # the exception of the thread's exception stop: ``$exception`` (kit.thrown)

    async def frame(self) -> tuple[int, Location]:
        if self._found is None:
            self._found = await self._frame_at(self.thread, self.index)
        return self._found

    async def local(self, name: str) -> Value | None:
        if name == thrown.NAME:
            if self._thrown is None:
                raise EvaluationError(str(thrown.not_at_an_exception("the JVM")))
            return self._thrown
        frame_id, where = await self.frame()
        cls, method = await self.classes.method(where.class_id, where.method_id)
        if method is None:
            return None
        for variable in await self.classes.variables(cls, method):
            if variable.name == name and variable.visible_at(where.code_index):
                writer = self.client.writer().object_id(self.thread).frame_id(frame_id).i4(1).i4(variable.slot).u1(
                    slot_tag(variable.signature))
                reply = await self.client.request(CommandSet.STACK_FRAME, 1, writer.bytes(), "StackFrame.GetValues",
                                                  timeouts.INSPECT_S)
                reply.i4()
                return reply.value()
        return None

    async def this(self) -> Value | None:
        frame_id, where = await self.frame()
        _, method = await self.classes.method(where.class_id, where.method_id)
        if method is None or method.is_static:
            return None
        reply = await self.client.request(CommandSet.STACK_FRAME, 3, self.client.writer().object_id(
            self.thread).frame_id(frame_id).bytes(), "StackFrame.ThisObject", timeouts.INSPECT_S)
        this = reply.value()
        return this if this.value else None

    async def current_class(self) -> JavaClass:
        _, where = await self.frame()
        return await self.classes.get(where.class_id)

    async def invoking(self, reply: asyncio.Future[bytes], label: str, after: Callable[[], Awaitable[None]]) -> bytes:
        self._found = None
        try:
            return await self._invoking(self.thread, reply, label, after)
        finally:
            self._forget(self.thread)


def slot_tag(signature: str) -> int:
    """The tag StackFrame.GetValues/SetValues wants for a local of ``signature``."""
    return Tag.ARRAY if signature.startswith("[") else ord(signature[0])
