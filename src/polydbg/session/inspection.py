"""Inspection of a stopped program: stacks, frames, variables, evaluation, assignment.

Every inspection takes the current stop's scope first and reads through ``SessionCore.read``, which
rejects an answer when the program moved while it was awaited: what an inspection returns always
belongs to one stop. Inspections may run concurrently within a scope; they share its caches.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection

from polydbg.backends.base import Frame, FrameRef, Thread, ThreadLocks, Variable
from polydbg.errors import AdapterRequestError, UsageError, echo, refused
from polydbg.session import locks, stacks
from polydbg.session.core import SessionCore
from polydbg.session.model import (
    AsyncFrame,
    EvaluateResult,
    FrameInfo,
    Location,
    StackResult,
    TaskInfo,
    Var,
    VariablesResult,
)
from polydbg.session.scope import StopScope

REPORT_LOCALS = 12
REPORT_VALUE_CHARS = 80
RETURNED_CHARS = 200  # what a step says a call returned, on its own line: a tuple's last result after a wide first
VALUE_CHARS = 400
SHORT_VALUE_CHARS = 60  # what a value is cut to, at the least, to fit more variables in an answer
DEFAULT_COUNT = 50  # variables listed without a count (as many as fit VARIABLES_BYTES)
VARIABLES_BYTES = 1800  # text of the variables in a debug_variables answer without a count
EVALUATE_CHARS = 1800  # an evaluation's value, cut: with its line and hints the answer stays under 2 KB
FRAME_BATCH = 20  # frames listed per stack request when the session needs one
# where the system keeps headers and libraries a stack passes through (a runtime's inline lock functions): a
# deadlock's thread is placed at its own code below them
_SYSTEM_SOURCES = ("/usr/include/", "/usr/lib/", "/usr/share/", "/usr/local/include/")
# a state a debugger puts after a thread's name ("left (blocked on a monitor)"), left out where locks say it
_STATE_SUFFIX = re.compile(r" \((?:system, )?[^()]*\b(?:blocked|waiting|running|sleeping|stopped|parked)\b[^()]*\)$")


def fitting(page: list[Variable], budget: int) -> tuple[list[Variable], int]:
    """The first of ``page`` and the value length that fit ``budget`` bytes of listed text: values are cut
    (to ``SHORT_VALUE_CHARS`` at the least) before any variable is left for the next page."""
    def size(v: Variable, limit: int) -> int:
        return len(v.name) + len(v.type or "") + min(len(v.value), limit) + 24  # indent, " (", ") = ", [ref=N]
    limit = VALUE_CHARS
    while limit > SHORT_VALUE_CHARS and sum(size(v, limit) for v in page) > budget:
        limit = max(SHORT_VALUE_CHARS, limit * 3 // 4)
    used, kept = 0, 0
    for v in page:
        used += size(v, limit)
        if kept and used > budget:
            break
        kept += 1
    return page[:kept], limit


# What str.splitlines breaks a line at: a value's own line breaks (a multi-line repr) would break a listing's line.
_LINE_BREAKS = re.compile("\r\n|[\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029]")


def clip(text: str, limit: int) -> tuple[str, bool]:
    if len(text) <= limit:
        return text, False
    return text[: limit - 1] + "…", True


def one_line(text: str) -> str:
    """A value as one line of a listing: each line break it holds written ``\\n``, as a repr writes one."""
    return _LINE_BREAKS.sub(lambda _: "\\n", text)


class Inspector:
    def __init__(self, core: SessionCore) -> None:
        self.core = core

    # -- threads and frames -------------------------------------------------------------------------

    async def threads(self, scope: StopScope) -> list[Thread]:
        """The threads at this stop (asked once per stop)."""
        if scope.threads is None:
            scope.threads = await self.core.read(scope, self.core.backend.threads())
        return scope.threads

    async def _frames_of(self, scope: StopScope, thread_id: int, needed: int) -> list[Frame]:
        frames = scope.frames.get(thread_id)
        if frames is None or (len(frames) < needed and len(frames) >= FRAME_BATCH):
            got, _total = await self.core.read(
                scope, self.core.backend.stack_trace(thread_id, 0, max(FRAME_BATCH, needed)))
            frames = scope.frames[thread_id] = got
        return frames

    async def thread_of(self, scope: StopScope, thread_id: int | None) -> int:
        """``thread_id`` once it is known to exist (refused naming the threads there are), else the current one."""
        if thread_id is None:
            return scope.thread or 0
        threads = await self.threads(scope)
        if thread_id not in {t.id for t in threads}:
            shown = sorted(t.id for t in threads)
            listed = f"{shown[:20]}{f' … ({len(shown):,} threads)' if len(shown) > 20 else ''}"
            left_out = self.core.backend.threads_left_out()
            raise UsageError(f"no thread {thread_id}; threads: {listed} (debug_stack(all_threads=true) lists them)"
                             + (f"; {left_out}" if left_out else ""))
        return thread_id

    async def choose(self, scope: StopScope, thread_id: int) -> None:
        """Make ``thread_id`` the thread later calls default to, at this stop."""
        scope.current_thread = await self.thread_of(scope, thread_id)

    async def frame(self, scope: StopScope, index: int | None, thread_id: int | None = None) -> tuple[FrameRef, Frame]:
        thread = await self.thread_of(scope, thread_id)
        wanted = index or 0
        if wanted < 0:
            raise UsageError("frame_id is a 0-based frame index (0 = innermost); pass 0 or more")
        frames = await self._frames_of(scope, thread, wanted + 1)
        if wanted >= len(frames):
            raise UsageError(f"frame {wanted} does not exist: thread {thread} has {len(frames)} frames "
                             f"(0..{len(frames) - 1}); see debug_stack")
        return FrameRef(thread, wanted), frames[wanted]

    async def top_location(self, scope: StopScope) -> Location:
        _ref, top = await self.frame(scope, 0)
        return Location(file=top.file, line=top.line, function=top.name)

    async def stack(self, thread_id: int | None, start: int, levels: int, all_threads: bool) -> StackResult:
        """One thread's stack (the current one by default; a ``thread_id`` given becomes the current one), or
        every thread's (stacks.py: bounded, threads with the same stack and locks listed once, paged from
        ``thread_id``), with what each holds and waits for, the deadlocks that makes, and pending tasks."""
        scope = self.core.life.stopped_scope()
        threads = await self.threads(scope)
        names = {t.id: t.name for t in threads}
        if thread_id is not None:
            await self.thread_of(scope, thread_id)  # refused naming the threads there are
        backend = self.core.backend
        if all_threads:
            known = scope.stacks.setdefault((start, levels), {})
            await stacks.read_all(threads, lambda tid: self.core.read(scope, backend.stack_trace(tid, start, levels)),
                                  known, (scope.stop.thread_id, thread_id))
            read = [t for t in threads if t.id in known]
            held = await self.locks(scope, [t.id for t in threads])
            page = stacks.paged(read, [known[t.id] for t in read], scope.thread, levels, thread_id, self.core.cwd,
                                unread=len(threads) - len(read), keys=held)
            above = await self._above(scope, scope.stop.thread_id, start)
            owners = locks.owners(held)
            listed = []
            for entry in page.entries:
                shown = stacks.thread_stack(entry, start, page.depth,
                                            above if entry.thread.id == scope.stop.thread_id else [])
                if entry.thread.id in held:
                    shown.locks = locks.state_of(held[entry.thread.id], owners)
                listed.append(shown)
            tasks = await self.core.read(scope, backend.tasks()) if start == 0 and thread_id is None else []
            bare = [entry.thread for entry in page.entries if not entry.frames and start == 0]
            why = f"{stacks.frameless(bare)}: debug_stack(thread_id={bare[0].id}) says why" \
                if bare and backend.frameless(bare[0]) else None
            said = [stacks.more(page, start, levels), why, backend.threads_left_out()]
            return StackResult(session_id=self.core.id, more="; ".join(filter(None, said)) or None, threads=listed,
                               current_thread=scope.thread, deadlocks=await self._said(scope, held, names) or None,
                               tasks=[TaskInfo(name=t.name, awaiting=t.awaiting, frames=[
                                   FrameInfo(index=i, function=f.name, file=f.file, line=f.line)
                                   for i, f in enumerate(t.frames)]) for t in tasks] or None)
        tid = thread_id if thread_id is not None else (scope.thread or (threads[0].id if threads else 0))
        frames, total = await self.core.read(scope, backend.stack_trace(tid, start, levels))
        if thread_id is not None and (frames or start > 0):  # a thread with none to inspect (running on its own,
            # or in library code only) is not made current
            scope.current_thread = thread_id
        thread = Thread(tid, names.get(tid, ""))
        budget = stacks.budget_for(levels)
        fits = stacks.fitting(thread, frames, self.core.cwd, budget)
        entry = stacks.Entry(thread, frames, total, base=self.core.cwd)
        shown = stacks.thread_stack(entry, start, fits, await self._above(scope, tid, start))
        held = await self.locks(scope, [tid])
        if tid in held:
            shown.locks = locks.state_of(held[tid], locks.owners(held))
        if fits == len(frames) and (total is None or start + fits >= total):  # the page that ends the stack
            callers = [AsyncFrame(function=f.name, file=f.file, line=f.line, via=via if i == 0 else None)
                       for via, segment in await self.core.read(scope, backend.async_callers(tid))
                       for i, f in enumerate(segment)]
            kept = stacks.fitting_callers(callers, budget - entry.size(fits))
            shown.async_frames = callers[:kept] or None
            left_out = len(callers) - kept
        else:
            left_out = 0
        result = StackResult(session_id=self.core.id, threads=[shown], current_thread=scope.thread)
        if left_out:
            result.more = f"{left_out} more async callers (outermost) left out"
        if fits < len(frames) or (total is not None and start + fits < total):
            which = f"thread_id={thread_id}, " if thread_id is not None else ""
            result.more = joined(result.more, f"more frames: debug_stack({which}start={start + fits}, levels={levels})")
        elif not frames and start == 0:
            result.more = backend.frameless(thread)
        return result

    async def locks(self, scope: StopScope, thread_ids: list[int]) -> dict[int, ThreadLocks]:
        """What the threads hold and wait for (``Backend.locks``); nothing where the debugger cannot say."""
        try:
            return await self.core.read(scope, self.core.backend.locks(thread_ids))
        except AdapterRequestError:
            return {}

    async def deadlocks(self, scope: StopScope) -> list[str]:
        """The deadlocks among all the threads at this stop, each in a sentence (for a pause's report)."""
        threads = await self.threads(scope)
        held = await self.locks(scope, [t.id for t in threads])
        return await self._said(scope, held, {t.id: t.name for t in threads})

    async def _said(self, scope: StopScope, held: dict[int, ThreadLocks], names: dict[int, str]) -> list[str]:
        """Each deadlock cycle in ``held``, each thread named with its first frame whose source is here (a
        runtime's frames above it name files it does not ship: Java's Unsafe.park), else the first with a line;
        its frames read as deep as that takes (a listing's few may all be the runtime's)."""
        cycles = locks.cycles(held)
        frames_of = {tid: await self._frames_of(scope, tid, 1) for cycle in cycles for tid in cycle}

        def label(tid: int) -> str:
            bare = _STATE_SUFFIX.sub("", names.get(tid, ""))  # the sentence says what the thread waits for
            name = f" ({bare})" if bare else ""
            placed = [f for f in frames_of.get(tid, []) if f.file and f.line]
            here = [f for f in placed if f.file and os.path.isfile(f.file)]
            frame = next((f for f in here if not (f.file or "").startswith(_SYSTEM_SOURCES)),
                         here[0] if here else placed[0] if placed else None)
            place = f" at {stacks.shown_path(frame.file, self.core.cwd)}:{frame.line}" if frame else ""
            return f"thread {tid}{name}{place}"
        return [locks.describe(cycle, held, {tid: label(tid) for tid in cycle}) for cycle in cycles]

    async def _above(self, scope: StopScope, thread_id: int | None, start: int) -> list[Frame]:
        """The library frames a listing shows above frame 0 of ``thread_id`` (``Backend.frames_above``)."""
        if start != 0 or thread_id is None:
            return []
        return await self.core.read(scope, self.core.backend.frames_above(thread_id))

    # -- values -----------------------------------------------------------------------------------------

    def var(self, scope: StopScope, variable: Variable, frame: FrameRef | None, limit: int = VALUE_CHARS) -> Var:
        """A variable as listings show it: its value on one line, cut to ``limit``."""
        value, cut = clip(one_line(variable.value), limit)
        return Var(name=variable.name, value=value, type=variable.type, ref=scope.remember(variable, frame),
                   truncated=cut or None)

    async def children(self, scope: StopScope, ref: int) -> list[Variable]:
        cached = scope.children.get(ref)
        if cached is None:
            cached = scope.children[ref] = await self.core.read(scope, self.core.backend.variables(ref))
        return cached

    async def report_locals(self, scope: StopScope, frame: FrameRef,
                            near: Collection[str] = ()) -> tuple[list[Var], int, list[str]]:
        """The first locals of a frame, short, for the stop report, how many more there are, and what the calls
        just stepped out of or over returned (listed apart: ``add() returned 6``). The locals named in ``near``
        (the code around the stop) come first, so the cut never hides them."""
        scopes = await self.core.read(scope, self.core.backend.scopes(frame))
        first = next((s for s in scopes if not s.expensive), None)
        if first is None:
            return [], 0, []
        backend = self.core.backend
        variables = [v for v in await self.children(scope, first.ref) if not backend.is_noise(v)]
        returned = [f"{outcome} {clip(v.value, RETURNED_CHARS)[0]}" for v in variables
                    if (outcome := backend.returned_by(v)) is not None]
        variables = [v for v in variables if backend.returned_by(v) is None]
        if near and len(variables) > REPORT_LOCALS:
            variables.sort(key=lambda v: v.name not in near)  # stable: the debugger's order otherwise
        shown = [self.var(scope, v, frame, REPORT_VALUE_CHARS) for v in variables[:REPORT_LOCALS]]
        return shown, max(0, len(variables) - REPORT_LOCALS), returned

    def _target(self, scope: StopScope, ref: int) -> tuple[Variable, FrameRef | None, bool]:
        target = scope.refs.get(ref)
        if target is None:
            if scope.refs.is_stale(ref):
                raise UsageError(f"ref {ref} is from an earlier stop: the program has moved since, and refs expire "
                                 "when it moves; take a fresh ref from the latest report or debug_variables")
            raise UsageError(f"ref {ref} was never given out; take a ref from a report or debug_variables")
        return target.variable, target.frame, target.is_scope

    async def variables(self, frame_index: int | None, ref: int | None, scope_name: str | None, start: int,
                        count: int | None, names: list[str] | None, thread_id: int | None = None) -> VariablesResult:
        """A page of a scope's or a value's children: ``count`` of them, or (None) as many of the first
        ``DEFAULT_COUNT`` as fit ``VARIABLES_BYTES`` of text, their values shortened first."""
        scope = self.core.life.stopped_scope()
        if start < 0 or (count is not None and count < 1):
            raise UsageError("start must be ≥ 0 and count ≥ 1")
        budgeted, count = count is None, count or DEFAULT_COUNT
        backend = self.core.backend
        result = VariablesResult(session_id=self.core.id, start=start, variables=[])
        if ref is not None:
            parent, frame, is_scope = self._target(scope, ref)
            result.ref = ref
        else:
            frame, _ = await self.frame(scope, frame_index, thread_id)
            scopes = await self.core.read(scope, backend.scopes(frame))
            result.scopes = [s.name for s in scopes]
            chosen = scopes[0] if scopes and scope_name is None else next(
                (s for s in scopes if scope_name and (s.name.lower().startswith(scope_name.lower())
                                                      or (s.hint or "").lower() == scope_name.lower())), None)
            if chosen is None:
                raise UsageError(f"no scope {echo(scope_name)} in frame {frame_index or 0}; scopes: {result.scopes}")
            parent, is_scope = Variable(name=chosen.name, value="", ref=chosen.ref), True
            result.scope = chosen.name
            result.ref = scope.remember(parent, frame, is_scope=True)
        children = [v for v in await self.children(scope, parent.ref) if not (is_scope and backend.is_noise(v))]
        if names:
            wanted = set(names)
            children = [v for v in children if v.name in wanted]
            missing = wanted - {v.name for v in children}
            if missing and not children:
                raise UsageError(f"no variables named {echo(sorted(missing))} here; call without filter to list them")
        total = self._known_total(parent, children)
        page = children[start:start + count]
        if len(page) < count and total is not None and start + len(page) < total:
            sliced = await self.core.read(scope, backend.child_slice(parent, start, count, frame))
            if sliced:
                page = sliced
        limit = VALUE_CHARS
        if budgeted:
            page, limit = fitting(page, VARIABLES_BYTES)
        result.variables = [self.var(scope, v, frame, limit) for v in page]
        result.total = total if total is not None else len(children)
        end = start + len(page)
        if end < result.total:
            paging = "" if budgeted else f", count={count}"
            result.more = f"{result.total - end} more: debug_variables(ref={result.ref}, start={end}{paging})"
        return result

    def _known_total(self, parent: Variable, children: list[Variable]) -> int | None:
        if parent.indexed_count is not None:
            return parent.indexed_count + (parent.named_count or 0)
        return self.core.backend.length_of(parent, children)

    async def evaluate(self, expression: str, frame_index: int | None, thread_id: int | None = None) -> EvaluateResult:
        scope = self.core.life.stopped_scope()
        if not expression.strip():
            raise UsageError("expression is empty; pass an expression such as 'len(items)'")
        frame, _ = await self.frame(scope, frame_index, thread_id)
        backend = self.core.backend
        with refused(f"cannot evaluate {echo(expression)}"):
            value = await self.core.read(scope, backend.evaluate(expression, frame, backend.evaluate_context))
        scope.forget_values()  # an expression may have side effects
        text, truncated = clip(value.value, EVALUATE_CHARS)
        return EvaluateResult(session_id=self.core.id, expression=expression, value=text, type=value.type,
                              ref=scope.remember(value, frame), truncated=truncated)

    async def set_variable(self, name: str, value: str, frame_index: int | None, ref: int | None,
                           thread_id: int | None = None) -> Var:
        scope = self.core.life.stopped_scope()
        backend = self.core.backend
        if not backend.capabilities.set_variable:
            raise UsageError(f"{self.core.adapter} cannot set variables; use debug_evaluate with an assignment")
        frame: FrameRef | None
        if ref is None:
            frame, _ = await self.frame(scope, frame_index, thread_id)
            container = None
            for candidate in await self.core.read(scope, backend.scopes(frame)):
                if not candidate.expensive and any(v.name == name for v in await self.children(scope, candidate.ref)):
                    container = candidate.ref
                    break
            if container is None:
                raise UsageError(f"no variable {echo(name)} in frame {frame_index or 0}; "
                                 "list them with debug_variables, or pass ref= for a member")
        else:
            parent, frame, _ = self._target(scope, ref)
            container = parent.ref
        what = f"cannot set {echo(name)} = {echo(value)}"
        with refused(f"{what}: the value does not evaluate here"):  # adapters may "succeed" on garbage
            await self.core.read(scope, backend.evaluate(value, frame, "watch"))
        with refused(what):
            updated = await self.core.read(scope, backend.set_variable(container, name, value))
        scope.forget_values()
        return self.var(scope, updated, frame)


def joined(*parts: str | None) -> str | None:
    """Notes as one, in order ("; " between them), or None when there is none."""
    return "; ".join(p for p in parts if p) or None
