"""Calling the program's methods from an expression, over JDWP: the overload picked (``overloads.py``),
the arguments made as the parameters want them (widened, boxed by ``valueOf``, a built string made in
the VM by ``VirtualMachine.CreateString``, varargs packed in a new array), then one ``InvokeMethod``.

The invoke runs with ``INVOKE_SINGLE_THREADED`` on the stopped thread, bounded by ``INVOKE_TIMEOUT_S``:
only that thread runs, and a method that blocks (on a lock another, still suspended, thread holds) or
never ends is left running after the deadline, with a message that says so (calls.py keeps it until it
returns). An invoke resumes the thread, which
invalidates its frame ids: the frame (``FrameScope.invoking``) forgets them, so the backend reads them
again by (thread, depth) — the next name looked up in the same evaluation, or the next evaluation in
the same stop, still works. A thread suspended by ``debug_pause`` (not by an event) cannot invoke
(JDWP refuses, error 13): calls are refused up front with a message that says so.
"""

from __future__ import annotations

from polydbg.backends.java import overloads
from polydbg.backends.java.calls import INVOKE_TIMEOUT_S
from polydbg.backends.java.classes import Classes, JavaClass, Method, java_name
from polydbg.backends.java.classes import parameter_descriptors as parameter_types
from polydbg.backends.java.lookup import Lookup
from polydbg.backends.java.overloads import ArgType
from polydbg.backends.java.primitives import BOX_OF, PRIMITIVE_LETTERS, convert
from polydbg.backends.java.terms import ClassRef, EvaluationError, FrameScope, Text, article, type_name
from polydbg.backends.java.values import Values
from polydbg.errors import AdapterTimeoutError
from polydbg.jdwp.client import JdwpClient, JdwpRequestError
from polydbg.jdwp.codec import TAG_OF_SIGNATURE, CommandSet, Reader, Tag, TypeTag, Value

INVOKE_SINGLE_THREADED = 0x01
INTERFACE_TYPE = 5  # the InterfaceType command set (static interface methods, List.of)


class Invoker:
    def __init__(self, client: JdwpClient, classes: Classes, values: Values, lookup: Lookup) -> None:
        self.client = client
        self.classes = classes
        self.values = values
        self.lookup = lookup
        self._messaging = False  # an exception's getMessage() is being called

    async def call(self, target: Value | Text | ClassRef, name: str, args: list[Value | Text],
                   frame: FrameScope) -> Value | Text:
        """``target.name(args)``: an instance method of an object (a built string made in the VM first),
        or a static one of a class. ``Thread.currentThread()`` is the frame's thread, read, not called (so it
        works where no method may run: in another thread's frames, after debug_pause)."""
        if isinstance(target, ClassRef) and target.cls.name == "java.lang.Thread" and name == "currentThread" \
                and not args:
            return Value(Tag.THREAD, frame.thread)
        if frame.invoke_refusal is not None:
            raise EvaluationError(f"{name}() cannot be called: {frame.invoke_refusal}")
        if isinstance(target, Value) and not target.is_object:
            raise EvaluationError(f"{article(type_name(target.tag))} has no methods ({name}())")
        if isinstance(target, Value) and not target.value:
            raise EvaluationError(f"NullPointerException: calling {name}() on null")
        if isinstance(target, Text):
            target = await self.mirror(target)
        cls = target.cls if isinstance(target, ClassRef) else await self.values.class_of(int(target.value))
        method, owner, spread = await self.choose(cls, name, args, static_only=isinstance(target, ClassRef))
        parameters = parameter_types(method.signature)
        if spread:  # f(a, b, c) of f(X, Y...): b and c go into a new Y[]
            fixed = len(parameters) - 1
            packed = await self.new_array(parameters[-1], args[fixed:], frame)
            converted = [await self.argument(arg, parameter, frame) for arg, parameter in
                         zip(args[:fixed], parameters[:fixed], strict=True)] + [packed]
        else:
            converted = [await self.argument(arg, parameter, frame) for arg, parameter in
                         zip(args, parameters, strict=True)]
        receiver = None if isinstance(target, ClassRef) or method.is_static else target
        return await self.invoke(receiver, owner, method, converted, frame)

    async def choose(self, cls: JavaClass, name: str, args: list[Value | Text],
                     static_only: bool) -> tuple[Method, JavaClass, bool]:
        """The overload of ``name`` in ``cls`` for ``args`` (``overloads.choose``); the third item: spread."""
        candidates = await self.lookup.methods_named(cls, name)
        types = [await self.type_of(arg) for arg in args] if candidates else []
        return await self.lookup.resolved(lambda known: overloads.choose(cls, name, candidates, types, static_only,
                                                                         known))

    async def type_of(self, value: Value | Text) -> ArgType:
        if isinstance(value, Text):
            return ArgType(Tag.STRING)
        if value.is_object and value.value:
            return ArgType(value.tag, await self.values.class_of(int(value.value)))
        return ArgType(value.tag)

    async def invoke(self, receiver: Value | None, owner: JavaClass, method: Method, args: list[Value],
                     frame: FrameScope) -> Value:
        """One InvokeMethod on the stopped thread (single-threaded, bounded by ``INVOKE_TIMEOUT_S``)."""
        writer = self.client.writer()
        label = f"{owner.name.rpartition('.')[2]}.{method.name}()"
        if receiver is None:
            command_set = INTERFACE_TYPE if owner.tag == TypeTag.INTERFACE else CommandSet.CLASS_TYPE
            command = 3 if command_set == CommandSet.CLASS_TYPE else 1
            writer.reference_type(owner.id).object_id(frame.thread).method_id(method.id)
        else:
            command_set, command = CommandSet.OBJECT_REFERENCE, 6
            writer.object_id(int(receiver.value)).object_id(frame.thread).reference_type(owner.id).method_id(
                method.id)
        writer.i4(len(args))
        for argument in args:
            writer.value(argument)
        writer.i4(INVOKE_SINGLE_THREADED)
        # JDWP runs the method only when the thread's suspend count is 1: another thread's event that
        # stopped every thread at the same moment (queued behind this one) counts once more, and the call
        # would hang. Those extra counts are lifted for the call and put back after it.
        thread_ref = self.client.writer().object_id(frame.thread).bytes()
        counted = await self.client.request(CommandSet.THREAD_REFERENCE, 12, thread_ref,
                                            "ThreadReference.SuspendCount", INVOKE_TIMEOUT_S)
        extra = max(0, counted.i4() - 1)
        for _ in range(extra):
            await self.client.request(CommandSet.THREAD_REFERENCE, 3, thread_ref, "ThreadReference.Resume",
                                      INVOKE_TIMEOUT_S)

        async def suspend_again() -> None:  # once the call returned (a call left running: when it does)
            for _ in range(extra):
                await self.client.request(CommandSet.THREAD_REFERENCE, 2, thread_ref, "ThreadReference.Suspend",
                                          INVOKE_TIMEOUT_S)

        try:
            data = await frame.invoking(self.client.send(command_set, command, writer.bytes(), label), label,
                                        suspend_again)
        except JdwpRequestError as exc:
            if exc.code in (13, 10):  # thread not suspended by an event / invalid thread
                raise EvaluationError(f"{label} cannot be called: the thread is not stopped at an event (JDWP "
                                      f"error {exc.code}); break at a breakpoint or step first") from None
            raise
        reply = Reader(data, self.client.sizes)
        returned, thrown = reply.value(), reply.value()
        if thrown.value:
            raise EvaluationError(f"{label} threw {await self.exception_text(thrown, frame)}")
        return returned

    # -- what a call threw ------------------------------------------------------------------------

    async def exception_text(self, thrown: Value, frame: FrameScope) -> str:
        cls = await self.values.class_of(int(thrown.value))
        text = await self.message(thrown, cls, frame)
        return f"{cls.name}: {text}" if text is not None else cls.name

    async def message(self, thrown: Value, cls: JavaClass, frame: FrameScope) -> str | None:
        """An exception's message as ``getMessage()`` returns it: called where its class overrides it (JUnit 4's
        ComparisonFailure builds "expected:<…> but was:<…>" there, around ``detailMessage``), else (or where no
        call can be made: after debug_pause, in another thread's frame) its ``detailMessage`` field."""
        text = None
        if not self._messaging:  # (not when getMessage() itself threw)
            self._messaging = True
            try:
                text = await self.overridden_message(thrown, cls, frame) if frame.invoke_refusal is None else None
            finally:
                self._messaging = False
        if text is None:
            field = await self.lookup.field_of(thrown, "detailMessage", cls)
            text = await self.values.string(int(field.value)) if field is not None and field.value else None
        return text

    async def overridden_message(self, thrown: Value, cls: JavaClass, frame: FrameScope) -> str | None:
        """The message of an exception whose class overrides ``getMessage()`` (its ``detailMessage``
        is null: jopt-simple's exceptions build theirs from fields), by calling it; None when the
        class does not override it, or the call cannot be made or fails."""
        try:
            if not any(method.signature == "()Ljava/lang/String;" and owner.name != "java.lang.Throwable"
                       for method, owner in await self.lookup.methods_named(cls, "getMessage")):
                return None
            returned = await self.call(thrown, "getMessage", [], frame)
        except (EvaluationError, JdwpRequestError, AdapterTimeoutError):
            return None
        if isinstance(returned, Text):
            return returned.text
        return await self.values.string(int(returned.value)) if returned.is_object and returned.value else None

    # -- arguments made in the VM -----------------------------------------------------------------

    async def argument(self, value: Value | Text, parameter: str, frame: FrameScope) -> Value:
        """``value`` as the parameter wants it: widened, boxed, unboxed, or a string made in the VM."""
        wanted = TAG_OF_SIGNATURE.get(parameter[0], Tag.OBJECT)
        if isinstance(value, Text):
            return await self.mirror(value)
        if parameter[0] in PRIMITIVE_LETTERS:
            unboxed = await self.lookup.unboxed(value)
            assert isinstance(unboxed, Value)
            return convert(unboxed, wanted)
        if value.is_object:
            return value
        box = await self.lookup.find_class(BOX_OF[value.tag])  # Integer.valueOf(5) for an Object parameter
        if box is not None:
            for method in (await self.classes.methods(box)).values():
                if method.name == "valueOf" and method.signature == f"({chr(value.tag)}){box.signature}":
                    return await self.invoke(None, box, method, [value], frame)
        raise EvaluationError(f"cannot box {article(type_name(value.tag))} ({BOX_OF[value.tag]} is not loaded)")

    async def new_array(self, signature: str, items: list[Value | Text], frame: FrameScope) -> Value:
        """A new array of ``signature`` (``[Ljava/lang/String;``) in the VM holding ``items``, converted."""
        array_class = await self.classes.named(signature)
        if array_class is None:
            raise EvaluationError(f"cannot pass the varargs as {java_name(signature)}: that array class is not "
                                  "loaded in the program; pass an array variable instead")
        reply = await self.client.request(CommandSet.ARRAY_TYPE, 1, self.client.writer().reference_type(
            array_class.id).i4(len(items)).bytes(), "ArrayType.NewInstance", INVOKE_TIMEOUT_S)
        array = reply.value()
        if items:
            elements = [await self.argument(item, signature[1:], frame) for item in items]
            writer = self.client.writer().object_id(int(array.value)).i4(0).i4(len(elements))
            for element in elements:
                writer.untagged(element)
            await self.client.request(CommandSet.ARRAY_REFERENCE, 3, writer.bytes(), "ArrayReference.SetValues",
                                      INVOKE_TIMEOUT_S)
        return array

    async def mirror(self, text: Text) -> Value:
        """A string built here, made in the VM (for an argument, a receiver, a variable)."""
        reply = await self.client.request(CommandSet.VM, 11, self.client.writer().string(text.text).bytes(),
                                          "VirtualMachine.CreateString", INVOKE_TIMEOUT_S)
        return Value(Tag.STRING, reply.object_id())
