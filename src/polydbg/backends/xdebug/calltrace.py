"""Xdebug's computerized function trace read into call records: which calls the agent named, their arguments,
what they returned or the exception that ended them, their caller and callees.

Xdebug (``xdebug.mode=debug,trace``) writes one line per call's entry and exit, and one for its return value
when the caller uses it (``xdebug.collect_return``), flushed line by line (trace_format 1, "File format: 4")::

    level  fn#  0  time  memory  name  user-defined  include-file  call-file  call-line  argc  args…   (entry)
    level  fn#  1  time  memory                                                                           (exit)
    level  fn#  R              value                                                                      (return)

Every call of the program is in the file, written by PHP itself (about 4 µs a call): the reader keeps the ones
named and their callees to the asked depth. A value is Xdebug's one-line export (``'text'``, ``[0 => 1]``,
``class App\\User { public $id = 7 }``). The file names no parameter: they are read from the function's source
(``Params``). A call that ended by an exception writes its exit like any other: which exception ended it is told
by the throw's break (``thrown``: the file's size at the throw and how deep the stack was where it was caught).
"""

from __future__ import annotations

import difflib
import os
import re
from dataclasses import dataclass, field

from polydbg.backends.recording import CallRecord, CallSink, CallSpec

UNWOUND = "*uninitialized*"  # the return value of a call an exception ended
_SEPARATORS = re.compile(r"->|::|\.")
_FUNCTION = r"function\s+&?\s*{name}\s*\("


def normal(name: str) -> str:
    """A PHP function's name compared: case-insensitive, ``->``, ``::`` and ``.`` alike, no leading ``\\``."""
    return _SEPARATORS.sub("::", name.strip().lstrip("\\")).lower()


def _short(name: str) -> str:
    """The name without its namespace (``app\\calc::add`` → ``calc::add``)."""
    head, sep, tail = name.partition("::")
    return head.rsplit("\\", 1)[-1] + sep + tail


class Wanted:
    """The names the agent passed, matched against the trace's (``App\\Calc->add``, ``helper``)."""

    def __init__(self, functions: tuple[str, ...]) -> None:
        self.names: dict[str, tuple[str | None, str]] = {}
        for given in functions:
            file, sep, function = given.rpartition(":")
            if sep and file and not file.endswith(":") and not function.startswith(":"):
                self.names[given] = (file, normal(function))
            else:
                self.names[given] = (None, normal(given))
        self.by_file = any(where is not None for where, _ in self.names.values())  # a file:function among them
        self.seen: set[str] = set()  # the trace's names of every call read
        self.hit: set[str] = set()  # the names given that matched a call
        self._cache: dict[str, bool] = {}

    def match(self, function: str, file: str | None) -> bool:
        """Whether a call of ``function`` (the trace's name; ``file`` the call site's) is one named."""
        self.seen.add(function)
        key = function + "\0" + (file or "")
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self._matches(function, file)
        return found

    def _matches(self, function: str, file: str | None) -> bool:
        mine = normal(function)
        hit = False
        for given, (where, name) in self.names.items():
            if where is not None and (file is None or not _same_file(file, where)):
                continue
            if mine == name or _short(mine) == name or ("::" not in name and "\\" not in name and _bare(mine) == name):
                self.hit.add(given)
                hit = True
        return hit

    def missing(self) -> list[str]:
        """The names given that matched no call, each with the closest names the trace has."""
        notes = []
        called = sorted(n for n in self.seen if not n.startswith("{"))
        lowered = {**{_bare(normal(n)): n for n in called}, **{normal(n): n for n in called}}
        for given in self.names:
            if given in self.hit:
                continue
            near = difflib.get_close_matches(normal(given), list(lowered), n=6, cutoff=0.6)
            closest = ", ".join(dict.fromkeys(lowered[n] for n in near))
            notes.append(f"{given} was never called" + (f" (closest names called: {closest})" if near else ""))
        return notes


def _bare(name: str) -> str:
    """A function's name without namespace or class (``app\\calc::add`` → ``add``)."""
    return name.rsplit("::", 1)[-1].rsplit("\\", 1)[-1]


def _same_file(path: str, given: str) -> bool:
    return path == given or path.endswith("/" + given.lstrip("/")) or os.path.basename(path) == given


class Params:
    """Parameter names read from the source: the trace gives only values. A function is looked up in the files
    the run loaded (its main script, what it included), once."""

    def __init__(self) -> None:
        self.files: list[str] = []
        self._names: dict[str, tuple[tuple[str, ...], str | None, int | None]] = {}
        self._text: dict[str, str] = {}

    def of(self, function: str) -> tuple[tuple[str, ...], str | None, int | None]:
        """The parameters' names, and the file and line where ``function`` is defined (empty when not found)."""
        found = self._names.get(function)
        if found is None:
            found = self._names[function] = self._find(function)
        return found

    def _find(self, function: str) -> tuple[tuple[str, ...], str | None, int | None]:
        head, _, method = _SEPARATORS.sub("::", function).partition("::")
        name = method or head.rsplit("\\", 1)[-1]
        cls = head.rsplit("\\", 1)[-1] if method else None
        if name.startswith("{"):
            return (), None, None
        pattern = re.compile(_FUNCTION.format(name=re.escape(name)), re.IGNORECASE)
        for path in self.files:
            text = self._read(path)
            if cls is not None and not re.search(rf"\b(class|trait|interface|enum)\s+{re.escape(cls)}\b", text,
                                                 re.IGNORECASE):
                continue
            found = pattern.search(text)
            if found is None:
                continue
            return _parameters(text, found.end()), path, text.count("\n", 0, found.start()) + 1
        return (), None, None

    def _read(self, path: str) -> str:
        text = self._text.get(path)
        if text is None:
            try:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    text = handle.read(2_000_000)
            except OSError:
                text = ""
            self._text[path] = text
        return text


def _parameters(text: str, start: int) -> tuple[str, ...]:
    """The ``$names`` of a parameter list that begins at ``start`` (after its ``(``)."""
    depth, index = 1, start
    while index < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[index], 0)
        index += 1
    return tuple(re.findall(r"(?<![\w'\"])\$(\w+)", text[start:index - 1]))


@dataclass(slots=True)
class Open:
    """A call entered and not yet ended."""

    level: int
    function: str
    args: tuple[str, ...]
    started: float
    site: str  # file:line of the call
    caller: str | None
    depth: int | None  # None: a call not recorded (its callees may be, when under a recorded call)
    raised: str | None = None
    ended_at: float | None = None
    recorded: bool = True  # False: PHP's own function under a recorded call (array_map): its callees count from it


@dataclass
class Thrown:
    """An exception thrown: the trace's size when it was, and the stack depth of the frame that caught it
    (0: nothing did)."""

    offset: int
    text: str
    caught_level: int


@dataclass
class TraceReader:
    """One trace file read as it grows, its calls of interest handed to ``sink`` as they end."""

    spec: CallSpec
    wanted: Wanted
    params: Params
    sink: CallSink
    thread: str
    delivered: int = 0
    dropped: int = 0
    offset: int = 0  # how much of the file was read
    _open: dict[int, Open] = field(default_factory=dict)  # fn# → call
    _stack: list[int] = field(default_factory=list)  # fn#s open, outermost first
    _exiting: Open | None = None  # exited, its return value line may follow
    _partial: bytes = b""
    _consumed: int = 0  # where the partial line begins
    _thrown: list[Thrown] = field(default_factory=list)

    def thrown(self, offset: int, text: str, caught_level: int) -> None:
        self._thrown.append(Thrown(offset, text, caught_level))

    def feed(self, data: bytes) -> None:
        """The file's next bytes (whole lines are read; a partial one waits for its end)."""
        text = self._partial + data
        lines = text.split(b"\n")
        self._partial = lines.pop()
        position = self._consumed
        for line in lines:
            if self._thrown:
                self._apply_thrown(position)
            position += len(line) + 1
            self._line(line.decode("utf-8", "replace"))
        self._consumed = position
        self.offset += len(data)

    def _apply_thrown(self, position: int) -> None:
        while self._thrown and self._thrown[0].offset <= position:
            thrown = self._thrown.pop(0)
            self._flush_exit()
            for number in self._stack:
                call = self._open[number]
                if call.level > thrown.caught_level:
                    call.raised = thrown.text

    def _line(self, line: str) -> None:
        fields = line.split("\t")
        if len(fields) < 3 or not fields[0].isdigit():
            return
        kind = fields[2]
        if kind == "R" and self._exiting is not None and len(fields) >= 6:
            call, self._exiting = self._exiting, None
            if fields[5] == UNWOUND:
                call.raised = call.raised or "an exception (thrown where polydbg did not follow it)"
            self._end(call, returned=None if fields[5] == UNWOUND else fields[5])
            return
        self._flush_exit()
        if kind == "0" and len(fields) >= 11:
            self._entry(fields)
        elif kind == "1" and len(fields) >= 4:
            number = int(fields[1]) if fields[1].isdigit() else -1
            ended = self._open.pop(number, None)
            if ended is None:  # a call begun before the trace: the frames seeded for it end with it
                self._unwind(int(fields[0]))
                return
            if number in self._stack:
                self._stack.remove(number)
            ended.ended_at = _float(fields[3])
            self._exiting = ended

    def _entry(self, fields: list[str]) -> None:
        level, number = int(fields[0]), int(fields[1]) if fields[1].isdigit() else -1
        function, file, line = fields[5], fields[8], fields[9]
        if fields[7] and function in ("require", "require_once", "include", "include_once") \
                and fields[7] not in self.params.files:
            self.params.files.append(fields[7])
        if file.startswith(("xdebug://", "dbgp://")) or "eval()'d code" in file:
            return  # the debugger's own evaluation
        if not self.params.files:
            self.params.files.append(file)
        self._unwind(level)
        parent = self._open.get(self._stack[-1]) if self._stack else None
        depth: int | None = None
        if self.wanted.match(function, None) or self._defined_in(function):
            depth = 0
        elif parent is not None and parent.depth is not None and fields[6] != "1":
            call = Open(level, function, (), 0.0, "", None, parent.depth, recorded=False)
            self._open[number] = call
            self._stack.append(number)
            return
        elif parent is not None and parent.depth is not None and parent.depth < self.spec.depth:
            depth = parent.depth + 1
        if depth is None:  # not recorded: only its place in the stack matters
            call = Open(level, function, (), 0.0, "", None, None)
        else:
            site = f"{os.path.basename(file)}:{line}"
            caller = f"{parent.function} ({site})" if parent is not None else site
            args = tuple(_cut(value, self.spec.value_chars) for value in fields[11:11 + int(fields[10] or 0)])
            call = Open(level, function, args, _float(fields[3]), site, caller, depth)
        self._open[number] = call
        self._stack.append(number)

    def seed(self, frames: list[str]) -> None:
        """The calls running as the trace starts, outermost first (their entries are not in the file): callers
        for the first calls it has."""
        for level, function in enumerate(frames, 1):
            number = -level
            self._open[number] = Open(level, function, (), 0.0, "", None, None)
            self._stack.append(number)

    def _unwind(self, level: int) -> None:
        """Calls left open at ``level`` or deeper whose ends the file does not have (seeded ones)."""
        while self._stack and self._stack[-1] < 0 and self._open[self._stack[-1]].level >= level:
            self._open.pop(self._stack.pop())

    def _defined_in(self, function: str) -> bool:
        """A ``file:function`` name: the function defined in that file (its definition looked up)."""
        if not self.wanted.by_file:
            return False
        _, file, _ = self.params.of(function)
        return file is not None and self.wanted.match(function, file)

    def _flush_exit(self) -> None:
        if self._exiting is not None:
            call, self._exiting = self._exiting, None
            self._end(call, returned=None)

    def _end(self, call: Open, returned: str | None, ended: bool = True) -> None:
        if call.depth is None or not call.recorded:
            return
        if self.delivered >= self.spec.max_calls:
            self.dropped += 1
            return
        names, file, line = self.params.of(call.function)
        args = tuple((names[index] if index < len(names) else f"#{index + 1}", value)
                     for index, value in enumerate(call.args))
        duration = (call.ended_at - call.started) * 1e6 if call.ended_at is not None and ended else None
        raised = call.raised if returned is None else None
        self.delivered += 1
        self.sink(CallRecord(function=call.function, args=args,
                             returned=_cut(returned, self.spec.value_chars) if returned is not None else None,
                             raised=raised, caller=call.caller, thread=self.thread, duration_us=duration,
                             depth=call.depth, file=file, line=line, ended=ended, started=call.started))

    def finish(self) -> None:
        """The file ended (or the recording stopped): what is pending is delivered, calls still open unended."""
        if self._partial:
            self._line(self._partial.decode("utf-8", "replace"))
            self._partial = b""
        self._apply_thrown(1 << 62)
        self._flush_exit()
        for number in reversed(self._stack):
            self._end(self._open.pop(number), returned=None, ended=False)
        self._stack.clear()


def _float(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        return 0.0


def _cut(value: str, limit: int) -> str:
    return value if len(value) <= limit else value[:limit] + "…"
