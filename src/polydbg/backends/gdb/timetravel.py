"""Running backwards under gdb: process record (``record full``), reverse steps and continues, checkpoints (the
contract: ``backends/timecontrol.py``).

gdb records in software (``record full``): it single-steps every instruction and logs what each changes, about
13,000 instructions a second here (a 10⁵-iteration loop: 133 s recorded, under 1 ms live), so a recording starts
at a stop and keeps the last ``limit`` instructions (the oldest are dropped: memory stays bounded). Running
backwards undoes the logged changes in the program itself; running forward again replays them up to the present,
then the program runs live, still recording. A watchpoint hit while running backwards is the last write before
where the program was: "who wrote this". Every stop while recording asks gdb (``info record``) whether it replays
and how full the log is.

A checkpoint while recording is a bookmark in the recording (``bookmark``/``goto-bookmark``: gdb replays back or
forward to it); without a recording it is gdb's ``checkpoint``/``restart``, a copy of the program made by calling
``fork()`` in it, which a recording cannot follow (gdb discards the recording), and which fails where gdb cannot
call functions in the program.

Quirks (gdb 13.1, Debian 12, on an x86-64 with AVX-512):

==============================================  ================================================================
gdb does                                        so polydbg
==============================================  ================================================================
cannot record AVX and AVX-512 instructions,     launches a program to record with ``GLIBC_TUNABLES`` turning
which glibc's string functions use on such a    them off, so glibc picks its SSE2 routines (``environment``); an
CPU (``__strchrnul_evex`` under printf):        instruction it still cannot record (started at a stop without
"Process record does not support instruction    that, ``rdrand``, a syscall) stops the program: the stop says
0x62 at address 0x7ffff7f3bf00."                where, what, and what to do (``unrecordable``)
never fires a hardware watchpoint while         makes watchpoints software ones while recording
running backwards                               (``can-use-hw-watchpoints 0``: recording single-steps anyway)
reports a watchpoint hit while running          reads them the other way round: the value before the write is
backwards with "old" and "new" in the order     gdb's "new", after it gdb's "old"
it ran
reports the start (and, forward, the end) of    reads a stop without a reason while recording, or after the
the recording by a ``*stopped`` record without  console's "No more reverse-execution history.", as that edge
a reason (no ``no-history``) in MI 3
stops a forward replay at the end of the log    reports it: the present (``HISTORY_END``); on from there is live
asks whether to drop the oldest entries when    sets ``stop-at-limit off``: the oldest are dropped silently,
the log is full                                 and the start of the history says it was cut
moves the program by ``goto-bookmark`` or       reports the stop itself, reason "checkpoint"
``restart N`` without a ``*stopped`` record
checkpoints while recording by discarding the   saves a bookmark of the recording instead
recording ("writing to memory will make the
execution log unusable")
==============================================  ================================================================
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from polydbg.backends.base import LaunchSpec, StopEvent
from polydbg.backends.gdb.calls import NO_CALLS, Calls
from polydbg.backends.gdb.commands import console, watchpoint_of
from polydbg.backends.gdb.state import GdbState
from polydbg.backends.gdb.stops import Stop, watch_text
from polydbg.backends.gdb.values import as_dict
from polydbg.backends.timecontrol import HISTORY_END, HISTORY_START, RecordAction, ReverseKind
from polydbg.errors import AdapterRequestError, UsageError

# glibc picks its SSE2 string routines, which gdb records, over the AVX ones it cannot (glibc ≥ 2.33's names)
RECORDABLE_TUNABLES = "glibc.cpu.hwcaps=-AVX,-AVX2,-AVX512F,-AVX512VL,-AVX512BW,-AVX512DQ,-AVX512CD"
NO_HISTORY = "No more reverse-execution history."
REVERSE_COMMANDS: dict[ReverseKind, str] = {"over": "-exec-next --reverse", "into": "-exec-step --reverse",
                                            "out": "-exec-finish --reverse", "continue": "-exec-continue --reverse"}
COST = ("gdb single-steps the program and logs every instruction's changes (10,000–20,000 instructions a second, "
        "thousands of times slower than live: record just before what you suspect)")
_UNRECORDABLE = re.compile(r"Process record(?: does not support|: inferior program stopped| and replay target "
                           r"doesn't support)[^\n]*")
_EXITING = "inferior program stopped"  # at the exit call, gdb stops the program rather than lose the recording
PRESENT = ("the present: the replay reached the end of the recording, where the program was when it first went "
           "back; debug_continue runs live from here, still recording")
AT_EXIT = ("the program is about to exit: recording, gdb stops it at its exit call so what was recorded can still "
           "be run back through (debug_continue(reverse=true)); debug_continue lets it exit, ending the recording")
_WATCH_REASONS = ("watchpoint-trigger", "read-watchpoint-trigger", "access-watchpoint-trigger")
_BOOKMARK = re.compile(r"Saved bookmark (\d+)")
_CHECKPOINT = re.compile(r"checkpoint (\d+): fork returned pid (\d+)")
_CHECKPOINT_LINE = re.compile(r"^\s*\*?\s*(\d+) process \d+ at (0x[0-9a-f]+)", re.MULTILINE)
NO_CHECKPOINT = ("gdb cannot save a checkpoint here: it saves one by calling fork() in the program, and this gdb "
                 "cannot call functions in the program on this system. Record instead: debug_record(\"start\"), then "
                 "debug_record(\"save\") saves a checkpoint in the recording")
WEDGED = ("gdb could not undo an instruction while running through the recording: it cannot write the program's "
          "vector registers back on this system (\"Couldn't write extended state status: Bad address.\", gdb 13 on "
          "some hosts), and then repeats that without end, so polydbg ended the session. SSE code (the C library's "
          "string functions, printf) changes those registers: debug_launch again, record just before the suspect "
          "code (debug_record(\"start\") at a breakpoint there) and keep reverse runs within the program's own code")
RR_AGAIN = "debug_restart records the program again (a trace given as program is replayed from its start)"
RR_RECORDED = ("rr recorded the whole run already: debug_step(reverse=true) and debug_continue(reverse=true) run back "
               "through it, a breakpoint or watchpoint stops it either way")
_NOT_RUNNING = ("The program is not being run", "does not support this command", "No recording is currently active")


@dataclass(frozen=True)
class Log:
    """What ``info record`` says: whether gdb replays, and how full the log is."""

    replaying: bool = False
    current: int = 0  # the instruction the replay is at
    kept: int = 0  # instructions in the log
    highest: int = 0
    limit: int = 0

    @property
    def full(self) -> bool:
        return self.limit > 0 and self.kept >= self.limit


def read_log(text: str) -> Log:
    def number(pattern: str) -> int:
        match = re.search(pattern, text)
        return int(match.group(1)) if match else 0
    return Log(replaying="Replay mode" in text, current=number(r"Current instruction number is (\d+)"),
               kept=number(r"Log contains (\d+) instructions"),
               highest=number(r"Highest recorded instruction number is (\d+)"),
               limit=number(r"Max logged instructions is (\d+)"))


def environment(spec: LaunchSpec, inherited: str | None) -> tuple[tuple[str, str], ...]:
    """A recorded launch's environment: glibc told to leave out the routines gdb cannot record (added to the
    program's own ``GLIBC_TUNABLES``, or the one it would inherit), and every symbol bound at start (the dynamic
    linker's first-call binding saves and restores every vector register: instructions spent on nothing)."""
    env = dict(spec.env)
    own = env.get("GLIBC_TUNABLES", inherited)
    env["GLIBC_TUNABLES"] = f"{own}:{RECORDABLE_TUNABLES}" if own else RECORDABLE_TUNABLES
    env.setdefault("LD_BIND_NOW", "1")
    return tuple(env.items())


def reversed_watch_text(name: str, payload: dict[str, Any]) -> str:
    """A write found running backwards: gdb's "old" is the value after it (later in time), "new" the one before."""
    value = as_dict(payload.get("value"))
    expression = watchpoint_of(payload).get("exp")
    if "old" in value and "new" in value:
        change = f"{value['new']} → {value['old']}"
    else:
        return f"{name} {watch_text(watchpoint_of(payload), payload)} (running backwards)"
    return (f"{name} {expression} was written here: {change}. Running backwards, this is the last write before "
            "where the program was, and the program is stopped just before it (the value is still the old one); "
            "debug_continue(reverse=true) finds the write before, debug_step runs forward through it")


def unrecordable(message: str, stop: StopEvent, frame: dict[str, Any]) -> Stop:
    """The stop at an instruction gdb cannot record: where, what, and what to do."""
    where = str(frame.get("func") or frame.get("addr") or "??")
    library = not frame.get("line") or str(frame.get("fullname") or "").startswith(("/usr/", "./", "../"))
    why = (" The C library's AVX routines are such instructions: a launch with record=true makes it use ones gdb "
           "records." if library else "")
    text = (f"gdb cannot record the next instruction, in {where} ({message.strip().rstrip('.')}), so the program "
            f"stopped before it, recording kept.{why} debug_continue(reverse=true)/debug_step(reverse=true) go back "
            "through what was recorded; debug_record(\"stop\") ends the recording and the program runs on live")
    return Stop(StopEvent("unrecordable instruction", stop.thread_id, "gdb cannot record this instruction", text))


class TimeControl:
    """Recording, running backwards and checkpoints for one gdb (the backend routes gdb's records here)."""

    def __init__(self, gdb: GdbState, calls: Calls) -> None:
        self._gdb = gdb
        self._calls = calls
        self.recording = False  # gdb's =record-started / =record-stopped
        self.start_at_first_stop: int | None = None  # launch(record="full"): the limit to start with
        self._backwards = False  # the last motion ran backwards
        self._held: str | None = None  # "exit" | "unrecordable": what keeps the program from going on recording
        self._no_history = False  # the console said NO_HISTORY since the last stop
        self._unrecordable: str | None = None  # gdb's "Process record does not support …" since the last stop
        self._saved: dict[int, tuple[str, int]] = {}  # checkpoint → ("bookmark" | "checkpoint", gdb's number)
        self.wedged = False  # gdb could not write registers back while replaying: it repeats that forever
        self.rr_ending: str | None = None  # replaying an rr trace (rr.py): the note of its end
        self._at_trace_end = False  # rr's replay stands at the end of its trace

    def replay_rr(self, ending: str) -> None:
        """gdb is connected to rr's replay of a trace (UNTESTED IN CI, rr.py): everything is recorded already, the
        end of the trace is ``ending``, nothing runs live."""
        self.rr_ending = ending

    # -- gdb's news -----------------------------------------------------------------------------------------

    def on_started(self, payload: dict[str, Any]) -> None:
        self.recording = True

    def on_stopped(self, payload: dict[str, Any]) -> None:
        self.recording = False
        self._saved = {n: saved for n, saved in self._saved.items() if saved[0] != "bookmark"}

    def on_text(self, text: str) -> None:
        """Console and log text gdb printed while the program ran (the edges of the history, what it cannot
        record, whether it is wedged)."""
        if self.recording and NO_CALLS in text:
            self.wedged = True
        if NO_HISTORY in text:
            self._no_history = True
        match = _UNRECORDABLE.search(text)
        if match:
            self._unrecordable = match.group(0)

    def claims(self, text: str) -> bool:
        """Console text that must reach ``on_text`` even when a command is pending."""
        return NO_HISTORY in text

    # -- recording ------------------------------------------------------------------------------------------

    async def record(self, action: RecordAction, limit: int) -> str:
        if self.rr_ending is not None:
            raise UsageError(RR_RECORDED)
        if action == "stop":
            return await self._stop()
        if self.recording:
            log = await self._log()
            return (f"already recording ({log.kept:,} instructions kept, at most {log.limit:,}); "
                    "debug_record(\"stop\") ends it")
        limit = max(1, int(limit))
        try:
            await self._gdb.cmds([console(f"set record full insn-number-max {limit}"),
                                  console("set record full stop-at-limit off"), "-gdb-set can-use-hw-watchpoints 0",
                                  console("record full")])
        except AdapterRequestError as exc:
            await self._gdb.cmd("-gdb-set can-use-hw-watchpoints 1")
            if any(words in exc.message for words in _NOT_RUNNING):
                raise UsageError("recording starts at a stop of a running program: debug_launch it (with "
                                 "record=true to record from the first stop), or stop it first") from exc
            raise UsageError(f"gdb could not start recording: {exc.message}") from exc
        self.recording = True
        return (f"recording from here: {COST}. It keeps the last {limit:,} instructions (record_limit); when full, "
                "the oldest are dropped. Watchpoints are software ones while recording (gdb fires only those "
                "running backwards). debug_step(reverse=true) and debug_continue(reverse=true) run back; "
                "debug_record(\"stop\") ends it")

    async def _stop(self) -> str:
        if not self.recording:
            return "nothing was recording"
        log = await self._log()
        try:
            await self._gdb.cmd(console("record stop"))
        finally:
            await self._gdb.cmd("-gdb-set can-use-hw-watchpoints 1")
        self.on_stopped({})
        if log.replaying:
            return ("recording stopped and discarded while replaying its past: the program goes on live from here; "
                    "what it did after this point is undone in it (not outside it: output, files)")
        return "recording stopped and discarded: the program runs live from here"

    async def _log(self) -> Log:
        return read_log((await self._gdb.cmd(console("info record"))).console)

    # -- moving ---------------------------------------------------------------------------------------------

    async def forward(self) -> None:
        """Before the program is sent forward: at its exit call, the recording ends so it can exit; at an
        instruction gdb cannot record it cannot go on (gdb answers "running", then fails, and no stop comes)."""
        if self._at_trace_end:
            raise UsageError(f"the replay stands at the end of the rr trace, and there is no live run after it: "
                             f"debug_continue(reverse=true) or debug_step(reverse=true) run back; {RR_AGAIN}")
        self._backwards = False
        if self._held == "exit":
            await self._stop()
        elif self._held is not None:
            raise UsageError("the program is stopped at an instruction gdb cannot record, so it cannot go on while "
                             "recording: debug_record(\"stop\") ends the recording (then debug_continue runs live), "
                             "or debug_continue(reverse=true) goes back through what was recorded")

    async def reverse(self, thread_id: int, kind: ReverseKind) -> None:
        if not self.recording and self.rr_ending is None:
            raise UsageError("nothing is recorded to run back through: debug_record(\"start\") at a stop records "
                             "from there, or debug_launch(…, record=true) from the first stop")
        self._backwards = True
        self._at_trace_end = False
        thread = f" --thread {thread_id}" if thread_id else ""  # before --reverse: gdb reads what follows as its own
        try:
            await self._gdb.cmd(REVERSE_COMMANDS[kind].replace(" --reverse", thread + " --reverse"))
        except AdapterRequestError as exc:
            self._backwards = False
            if "outermost frame" in exc.message:
                raise UsageError("there is no caller to step back out to (this is the outermost frame); "
                                 "debug_step(kind=\"over\", reverse=true) steps back a line") from exc
            raise

    def involved(self) -> bool:
        """Whether a stop needs this part's word (and a round trip to gdb) before it is reported."""
        return self.recording or self.start_at_first_stop is not None or self.rr_ending is not None

    async def settle(self, stop: Stop, payload: dict[str, Any], interrupting: bool) -> Stop:
        """The stop to report while recording (or to start recording at)."""
        no_history, self._no_history = self._no_history, False
        unrecordable_text, self._unrecordable = self._unrecordable, None
        self._held = None
        if self.start_at_first_stop is not None:
            limit, self.start_at_first_stop = self.start_at_first_stop, None
            try:
                note = await self.record("start", limit)
            except UsageError as exc:
                note = f"recording did not start: {exc}"
            return _with_text(stop, note)
        if self.rr_ending is not None:
            return self._settle_rr(stop, payload, interrupting, no_history)
        if not self.recording:
            return stop
        reason = str(payload.get("reason") or "")
        event = stop.event
        frame = as_dict(payload.get("frame"))
        if reason == "signal-received" and not interrupting and (
                unrecordable_text or str(payload.get("signal-name")) == "0"):
            if _EXITING in (unrecordable_text or "") or str(frame.get("func") or "").endswith("_exit"):
                self._held = "exit"
                return Stop(StopEvent("exiting", event.thread_id, "the program is about to exit", AT_EXIT))
            self._held = "unrecordable"
            return unrecordable(unrecordable_text or "an instruction gdb does not support", event, frame)
        log = await self._log()
        if not interrupting and (reason == "no-history" or no_history or not reason):
            if self._backwards:
                return Stop(StopEvent(HISTORY_START, event.thread_id, "the start of the recording",
                                      _history_start(log)))
            return Stop(StopEvent(HISTORY_END, event.thread_id, "the present", PRESENT))
        if self._backwards and reason in _WATCH_REASONS and event.description:
            return _reversed_watch(stop, payload)
        if log.replaying and not self._backwards:
            return _with_text(stop, f"replaying the recording (instruction {log.current:,} of {log.highest:,}): "
                                    "debug_continue goes on to the present")
        if log.replaying:
            return _with_text(stop, "in the recording's past: debug_continue replays forward to the present")
        return stop

    def _settle_rr(self, stop: Stop, payload: dict[str, Any], interrupting: bool, no_history: bool) -> Stop:
        """A stop in rr's replay: its end comes as a SIGKILL running forward (rr's "synthetic SIGKILL"), its start as
        gdb's "No more reverse-execution history." (or a stop without a reason) running back."""
        reason = str(payload.get("reason") or "")
        event = stop.event
        self._at_trace_end = False
        if interrupting:
            return stop
        if not self._backwards and reason == "signal-received" and payload.get("signal-name") == "SIGKILL":
            self._at_trace_end = True
            return Stop(StopEvent(HISTORY_END, event.thread_id, "the end of the rr trace", self.rr_ending))
        edge = reason == "no-history" or no_history or not reason or (
            reason == "signal-received" and str(payload.get("signal-name")) == "0")
        if self._backwards and edge:
            return Stop(StopEvent(HISTORY_START, event.thread_id, "the start of the rr trace",
                                  f"the start of the rr trace: the program's exec; debug_continue replays forward; "
                                  f"{RR_AGAIN}"))
        if self._backwards and reason in _WATCH_REASONS and event.description:
            return _reversed_watch(stop, payload)
        return stop

    # -- checkpoints ----------------------------------------------------------------------------------------

    async def checkpoint(self, thread_id: int | None) -> int:
        if self.rr_ending is not None:
            raise UsageError(f"polydbg saves no checkpoints in an rr replay; {RR_RECORDED}")
        number = max(self._saved, default=0) + 1
        if self.recording:  # gdb's checkpoint would discard the recording: a bookmark of the recording instead
            result = await self._gdb.cmd(console("bookmark"))
            match = _BOOKMARK.search(result.console)
            if match is None:
                raise UsageError(f"gdb saved no bookmark in the recording: {result.console.strip() or 'no answer'}")
            self._saved[number] = ("bookmark", int(match.group(1)))
            return number
        before = await self._checkpoints()
        try:
            result = await self._calls.run(console("checkpoint"), thread_id)
        except AdapterRequestError as exc:
            await self._drop_broken(before, every=True)  # the fork may have happened, the call failed after it
            if NO_CALLS in exc.message:
                raise UsageError(NO_CHECKPOINT) from exc
            raise
        match = _CHECKPOINT.search(result.console)
        if await self._drop_broken(before) or NO_CALLS in result.console + result.log:
            raise UsageError(NO_CHECKPOINT)
        if match is None:
            raise UsageError(f"gdb saved no checkpoint: {result.console.strip() or 'no answer'}")
        self._saved[number] = ("checkpoint", int(match.group(1)))
        return number

    async def _checkpoints(self) -> dict[int, int]:
        """gdb's checkpoints (not the program itself, 0): number → the address it is at (0 when gdb could not
        read its registers: a fork whose call failed)."""
        listing = await self._gdb.cmd(console("info checkpoints"))
        return {int(n): int(at, 16) for n, at in _CHECKPOINT_LINE.findall(listing.console) if int(n) > 0}

    async def _drop_broken(self, before: dict[int, int], every: bool = False) -> bool:
        """Delete the checkpoints made since ``before`` that gdb cannot return to (all of them with ``every``);
        whether there were any."""
        broken = [n for n, at in (await self._checkpoints()).items() if n not in before and (every or at == 0)]
        for number in broken:
            await self._gdb.cmd(console(f"delete checkpoint {number}"))
        return bool(broken)

    async def restore(self, number: int) -> str:
        """Go back to checkpoint ``number``; the text of the stop there (the caller reports it)."""
        saved = self._saved.get(number)
        if saved is None:
            known = ", ".join(str(n) for n in sorted(self._saved)) or "none"
            raise UsageError(f"no checkpoint {number} (saved: {known}); debug_record(\"save\") saves one"
                             + (" — a recording's checkpoints end with the recording" if not self.recording else ""))
        kind, gdb_number = saved
        if kind == "bookmark":
            await self._gdb.cmd(console(f"goto-bookmark {gdb_number}"))
            self._backwards = True  # forward from here replays
            log = await self._log()
            if not log.replaying:
                return f"back at checkpoint {number}: the present, the end of the recording"
            return (f"back at checkpoint {number}, in the recording (instruction {log.current:,} of {log.highest:,}):"
                    " debug_continue replays forward to the present")
        try:
            await self._gdb.cmd(console(f"restart {gdb_number}"))
        except AdapterRequestError as exc:
            if NO_CALLS in exc.message:
                raise UsageError(NO_CHECKPOINT) from exc
            raise
        return (f"back at checkpoint {number}: the program is the copy saved then (what it did since is gone from "
                "it, not from outside it: output, files)")


def _history_start(log: Log) -> str:
    where = ("the start of what the recording kept: it holds the last "
             f"{log.limit:,} instructions (record_limit) and dropped older ones" if log.full else
             "the start of the recording: nothing before it was recorded (to look further back: a breakpoint "
             "earlier, then debug_restart: a recorded launch records from its first stop)")
    return f"{where}; debug_continue runs forward, replaying the recording up to the present, then live"


def _reversed_watch(stop: Stop, payload: dict[str, Any]) -> Stop:
    name = (stop.event.description or "").removeprefix("watchpoint ")
    return Stop(stop.event._replace(text=reversed_watch_text(name, payload)), stop.facts, stop.watch_gone)


def _with_text(stop: Stop, note: str) -> Stop:
    said = stop.event.text or stop.event.description
    text = f"{said}; {note}" if said else note
    return Stop(stop.event._replace(text=text), stop.facts, stop.watch_gone)
