"""Go through delve's own DAP server (``dlv dap``; checked against delve 1.20 with Go 1.19).

How the adapter is started: ``dlv dap --listen 127.0.0.1:0`` — delve picks a free port itself (no
race between choosing a port and binding it) and prints ``DAP server listening at: host:port`` as
its first stdout line, which is the readiness signal we wait for (event-driven, with a deadline).
``--client-addr`` (delve dials us) would spare parsing that line, but the line is documented and
stable, and ``--listen`` keeps one code path for our own server and for a user's server.

Quirks handled here:
- Building: mode "debug" runs ``go build`` in dlv's working directory and resolves ``program``
  against it, so dlv is started in the module directory (the nearest go.mod above the program,
  else the program's directory). delve already adds ``-gcflags='all=-N -l'`` in debug mode (and
  splits ``buildFlags`` on spaces, so passing that flag again breaks the build). The binary goes to
  ``output`` in a private temporary directory, never ``__debug_bin`` in the user's tree, and that
  directory is removed at the end. A ``.go`` file is built alone, like ``go run file.go``; a
  directory is built as a package. A build failure is reported with the compiler's messages.
- Program output: delve does not send the debuggee's stdout/stderr as DAP output events; the
  debuggee inherits dlv's own stdout/stderr. Both pipes are read here and forwarded as program
  output, except delve's own lines: everything before the debuggee exists (the listening line,
  start-up warnings) and delve's log lines. Its console events "Type 'dlv help' …" are dropped.
- Exit: delve sends ``terminated`` without ``exited`` when the program ends and logs the exit
  status only while disconnecting; so on ``terminated`` the session is ended here, and the status
  line ("Process N has exited with status S") becomes an ``exited`` event before ``terminated``.
- Debuggee process: delve sends no ``process`` event; the launched program is dlv's child in its
  own process group, found in /proc and tracked so it cannot outlive polydbg.
- Panics: delve always stops on an unrecovered panic or a fatal error (reason "exception", no
  exception filters). Its message (a Go-quoted string) is unquoted, and the runtime frames of the
  panic machinery (runtime.fatalpanic, runtime.gopanic, …) are hidden from the top of the
  panicking goroutine's stack, so frame 0 (the report's location and locals) is the user function
  that panicked. (delve's setVariable always works in the real topmost frame, so setting a local
  at a panic stop may not work.)
- Fatal errors (a deadlock: "all goroutines are asleep") stop on the runtime thread that detected
  them, with no user frame: the stop is moved to a user goroutine (frame 0: the deadlocked line)
  and the error kept for ``exception_info``.
- Pause: delve halts every thread and names whichever it halted first, often a runtime thread
  with no goroutine (sysmon, in runtime.usleep). The stop is moved to a user goroutine, preferably
  one that was running. A running goroutine caught inside the runtime (async preemption, a signal
  handler) sometimes does not unwind to its own frames, so it is resumed and paused again (a few
  times at most), and runtime frames left on top of it are hidden as for panics: an infinite loop
  is reported at its line.
- Values: delve shows at most 64 elements of a slice/map at first; ``child_slice`` pages further
  with ``filter: indexed``. The synthetic children ``len()`` / ``string()`` are dropped. Goroutines
  are DAP threads; runtime-internal goroutines are hidden (``dlv config hideSystemGoroutines
  false`` through ``command`` shows them). ``debug_evaluate`` uses the "clipboard" context, so
  values are not cut at 256 characters and strings load up to 4 KiB.
  Unnamed results (``~r0``) are noise until the function returns. delve honours ``hitCondition``
  without advertising it.
- Native operations: delve answers ``disassemble`` (the generic DAP one is used) but not
  ``readMemory``/``writeMemory``: memory is read and written as a ``[N]uint8`` array cast from the
  address. delve sends no ``memoryReference``, so a pointer's address comes from ``uintptr(expr)``.
  Registers come from delve's "Registers" scope, switched on only while they are read. Raw
  commands go through delve's repl prefix ``dlv <command>``; in DAP mode delve offers only
  ``help``, ``config`` and ``sources``. No data breakpoints in delve 1.20's DAP server.
- Attach: a pid → ``attach`` mode "local". A port → a ``dlv --headless`` server (which speaks DAP
  on its API port) and ``attach`` mode "remote"; a bare ``dlv dap`` server has no session to attach
  to. ``path_mappings`` become ``substitutePath``. Detaching from a remote server first clears this
  client's breakpoints and resumes the program (a multi-client server keeps both, and would leave
  the program halted); delve kills a program that a single-client headless server launched,
  whatever the client asks.
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import json
import logging
import os
import re
import shutil
import tempfile
from typing import Any, ClassVar

from polydbg import procs
from polydbg.backends.base import (
    AttachSpec,
    BackendListener,
    BreakpointResult,
    Configure,
    EvaluateContext,
    ExceptionDetail,
    Frame,
    FrameRef,
    LaunchSpec,
    MemoryBlock,
    SourceBreakpoint,
    Variable,
)
from polydbg.backends.dap.backend import INSPECT_TIMEOUT_S, DapBackend
from polydbg.backends.kit.frames import leading
from polydbg.backends.kit.ordering import OrderedEvents
from polydbg.errors import AdapterRequestError, EnvironmentProblem, UsageError
from polydbg.transport.streams import FramedStream

log = logging.getLogger(__name__)

START_TIMEOUT_S = 10.0
PROGRAM_VANISHED = "the program ended without delve reporting it: it was probably killed from outside"
_LISTENING = re.compile(r"(?:DAP|API) server listening at: *(\S+):(\d+)")
# Lines delve itself writes on the stdout/stderr it shares with the debuggee.
_OWN_LINE = re.compile(
    r"(?:(?:DAP|API) server listening at:"
    r"|\d{4}-\d\d-\d\dT\S+ (?:debug|info|warning|error|fatal|panic) layer="
    r"|could not create config directory"
    r"|Warning: (?:dap mode|accept-multiclient|init file|continue ignored|backend ignored|build flags ignored"
    r"|working directory ignored|debug arguments ignored|program flags ignored))")
_HOUSEKEEPING = re.compile(r"Type 'dlv help'|Detaching(?: and terminating target process)?\n?$")
_LOGPOINT_PREFIX = re.compile(r"> \[Go -?\d+\]: ")
_EXIT_STATUS = re.compile(r"Process (\d+) has exited with status (-?\d+)")
# a goroutine as delve names it: selected?, its topmost user function, and its OS thread when running
_GOROUTINE = re.compile(r"(\* )?\[Go \d+\] (\S+)( \(Thread \d+\))?$")
_PAUSE_ATTEMPTS = 4
_LINES = re.compile(r"[^\n]*\n|[^\n]+")
_METADATA = frozenset({"len()", "string()"})  # delve's synthetic children of maps and byte slices
_NUMBER = re.compile(r"\s*(\d+)")  # delve shows integers as "102 = 0x66"
_DLV_COMMANDS = "help, config, sources"
_INSTALL = ("install delve: `go install github.com/go-delve/delve/cmd/dlv@latest` (then put $(go env GOPATH)/bin "
            "on PATH) or your package manager's delve package")


def module_dir(program: str) -> str:
    """Where ``go build`` must run for ``program`` (a package dir or .go file): its module root, else its dir."""
    start = program if os.path.isdir(program) else os.path.dirname(program)
    directory = os.path.abspath(start)
    while True:
        if os.path.isfile(os.path.join(directory, "go.mod")):
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return os.path.abspath(start)
        directory = parent


def _is_source(program: str) -> bool:
    return os.path.isdir(program) or program.endswith(".go")


def _unquote(text: str) -> str:
    """A Go-quoted string value (``"boom"``) as its text; anything else unchanged."""
    if len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            value = json.loads(text)
        except ValueError:
            return text[1:-1]
        return value if isinstance(value, str) else text
    return text


def _in_runtime(frame: dict[str, Any]) -> bool:
    """A frame of the Go runtime (also its assembly, e.g. gogo in asm_amd64.s)."""
    name = str(frame.get("name", ""))
    path = str((frame.get("source") or {}).get("path") or "").replace(os.sep, "/")
    return frame.get("presentationHint") == "subtle" or name.startswith("runtime.") \
        or ("." not in name and "/src/runtime/" in path)



def _go_env() -> dict[str, str]:
    """This environment, plus a build cache when Go could not place one (no HOME, e.g. under some MCP hosts)."""
    env = dict(os.environ)
    if not env.get("GOCACHE") and not env.get("XDG_CACHE_HOME") and not env.get("HOME"):
        env["GOCACHE"] = os.path.join(tempfile.gettempdir(), "polydbg-gocache")
    return env


class DelveBackend(DapBackend):
    name = "delve"
    adapter_id = "go"
    evaluate_context: ClassVar[EvaluateContext] = "clipboard"  # values not cut at 256 chars; strings to 4 KiB

    def __init__(self, listener: BackendListener, language: str = "go") -> None:
        super().__init__(listener, language)
        self._ordered = OrderedEvents(listener)  # a pause or fatal error is moved to a user goroutine first
        self._listener = self._ordered
        self._workdir: str | None = None  # dlv's working directory (where it builds)
        self._env: dict[str, str] | None = None
        self._build_dir: str | None = None  # our temporary directory for delve's output binary
        self._connect_to: tuple[str, int] | None = None  # a user's dlv --headless server
        self._remote = False
        self._program_started = False  # from here on, dlv's stdout/stderr carry the program's output
        self._build_error: str | None = None
        self._pumps: list[asyncio.Task[None]] = []
        self._stopped = False
        self._trim_thread: int | None = None  # the goroutine that panicked or was paused
        self._at_entry = False  # stopped before the runtime made any goroutine
        self._pause_waiter: asyncio.Future[dict[str, Any]] | None = None
        self._exception_detail: ExceptionDetail | None = None  # a fatal error moved to a user goroutine
        self._breakpoint_files: set[str] = set()  # cleared on detaching from a multi-client server

    # -- starting ---------------------------------------------------------------------------------

    def _launch_arguments(self, spec: LaunchSpec) -> dict[str, Any]:
        if spec.stdin is not None:
            raise UsageError("stdin is not supported with delve: dlv dap cannot redirect a program's input; "
                             "have the program read a file instead (or pass the input as args)")
        if not spec.program:
            raise UsageError("pass program: a Go package directory, a .go file, or a built Go executable")
        program = os.path.abspath(spec.program)
        args: dict[str, Any] = {"request": "launch", "program": program, "args": list(spec.args),
                                "stopOnEntry": spec.stop_on_entry, "hideSystemGoroutines": True}
        if spec.core:
            args.update(mode="core", coreFilePath=os.path.abspath(spec.core))
            self._workdir = os.path.dirname(program)
        elif _is_source(program):
            if shutil.which("go") is None:
                raise EnvironmentProblem("the go command is not on PATH, and delve needs it to build "
                                         f"{program}; install Go, or pass a binary built with "
                                         "go build -gcflags='all=-N -l'")
            self._workdir = module_dir(program)
            self._build_dir = tempfile.mkdtemp(prefix="polydbg-go-")
            args.update(mode="debug", output=os.path.join(self._build_dir, "__debug_bin"))
        else:
            args["mode"] = "exec"
            self._workdir = os.path.dirname(program)
        cwd = spec.cwd or (program if os.path.isdir(program) else os.path.dirname(program))
        args["cwd"] = os.path.abspath(cwd)
        self._env = _go_env()
        self._env.update(dict(spec.env))
        return args

    def _attach_arguments(self, spec: AttachSpec) -> dict[str, Any]:
        args: dict[str, Any] = {"request": "attach", "hideSystemGoroutines": True, "stopOnEntry": False}
        if spec.pid is not None:
            args.update(mode="local", processId=spec.pid)
        else:
            self._remote = True
            self._connect_to = (spec.address, int(spec.port or 0))
            args["mode"] = "remote"
        if spec.path_mappings:
            args["substitutePath"] = [{"from": local, "to": remote} for local, remote in spec.path_mappings]
        self._env = _go_env()
        return args

    async def _start_adapter(self) -> FramedStream:
        if self._connect_to is not None:
            host, port = self._connect_to
            try:
                return await asyncio.wait_for(FramedStream.connect_tcp(host, port, self.name), START_TIMEOUT_S)
            except (OSError, asyncio.TimeoutError) as exc:
                raise UsageError(f"cannot connect to a delve server at {host}:{port} ({exc}); start one with "
                                 f"dlv --headless --listen={host}:{port} --accept-multiclient --api-version=2 "
                                 "exec ./yourbinary") from exc
        dlv = shutil.which("dlv")
        if dlv is None:
            raise EnvironmentProblem(f"dlv is not on PATH; {_INSTALL}")
        process = await self._proc.start([dlv, "dap", "--listen", "127.0.0.1:0"], env=self._env,
                                         cwd=self._workdir, stdin=asyncio.subprocess.DEVNULL, drain_stderr=False)
        assert process.stdout is not None and process.stderr is not None
        loop = asyncio.get_running_loop()
        self._pumps = [loop.create_task(self._pump(process.stderr, "stderr"))]
        try:
            try:
                host, port = await asyncio.wait_for(self._await_listening(process.stdout), START_TIMEOUT_S)
            except asyncio.TimeoutError as exc:
                raise EnvironmentProblem(f"dlv dap did not start listening within {START_TIMEOUT_S:g} s"
                                         f"{self._proc.stderr_hint()}") from exc
            self._pumps.append(loop.create_task(self._pump(process.stdout, "stdout")))
            try:
                return await asyncio.wait_for(FramedStream.connect_tcp(host, port, self.name), START_TIMEOUT_S)
            except (OSError, asyncio.TimeoutError) as exc:
                raise EnvironmentProblem(f"cannot connect to dlv dap at {host}:{port}: {exc}") from exc
        except BaseException:
            await self._end_once(terminate_debuggee=True)  # the session ends only adapters that started
            raise

    async def _await_listening(self, stdout: asyncio.StreamReader) -> tuple[str, int]:
        while True:
            raw = await stdout.readline()
            if not raw:
                code = await procs.reap(self._proc.process, 1.0) if self._proc.process is not None else None
                raise EnvironmentProblem(f"dlv dap exited before listening (exit code {code})"
                                         f"{self._proc.stderr_hint()}")
            line = raw.decode("utf-8", "replace")
            match = _LISTENING.search(line)
            if match:
                return match[1], int(match[2])
            self._proc.remember(line)

    async def _pump(self, reader: asyncio.StreamReader, category: str) -> None:
        """Forward what arrives on dlv's stdout/stderr as program output, minus delve's own lines."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        at_line_start = True
        while True:
            try:
                chunk = await reader.read(64 * 1024)
            except (OSError, ValueError):
                chunk = b""
            text = decoder.decode(chunk, final=not chunk)
            kept = []
            for piece in _LINES.findall(text):
                own = not self._program_started or (at_line_start and _OWN_LINE.match(piece) is not None)
                if own or category == "stderr":
                    self._proc.remember(piece)
                if own:
                    log.debug("%s %s: %s", self.name, category, piece.rstrip())
                else:
                    kept.append(piece)
                at_line_start = piece.endswith("\n")
            if kept:
                self._listener.on_output(category, "".join(kept))
            if not chunk:
                return

    async def launch(self, spec: LaunchSpec, configure: Configure, timeout_s: float) -> None:
        async def configure_started() -> None:
            self._track_debuggee()
            await configure()

        try:
            await super().launch(spec, configure_started, timeout_s)
        except AdapterRequestError as exc:
            raise AdapterRequestError(exc.command, self._launch_failure(exc, spec)) from exc

    async def attach(self, spec: AttachSpec, configure: Configure, timeout_s: float) -> None:
        # An attached program's output never passes through dlv: all dlv prints is its own.
        try:
            await super().attach(spec, configure, timeout_s)
        except AdapterRequestError as exc:
            message = exc.message
            if self._remote and "no debugger found" in message:
                message = ("the delve server has no program to attach to (a `dlv dap` server starts one only on "
                           "launch): start the program under dlv --headless --listen=:PORT --accept-multiclient "
                           "--api-version=2 exec ./yourbinary, or use debug_launch")
            elif spec.pid is not None and ("permitted" in message or "ptrace" in message):
                message += ("; attaching needs ptrace rights: run as the program's user with "
                            "kernel.yama.ptrace_scope=0, or with CAP_SYS_PTRACE")
            raise AdapterRequestError(exc.command, message) from exc

    def _launch_failure(self, exc: AdapterRequestError, spec: LaunchSpec) -> str:
        if self._build_error is None:
            return exc.message
        lines = self._build_error.strip().splitlines()
        body = "\n".join(lines[1:]) if len(lines) > 1 else self._build_error.strip()
        body = re.sub(r"\s*\(exit status \d+\)\s*$", "", body)
        message = f"go build failed:\n{body}"
        if spec.program and spec.program.endswith(".go") and "undefined:" in body:
            message += ("\n(a .go file is built alone, like go run file.go; pass its directory to build the "
                        "whole package)")
        return message

    def _track_debuggee(self) -> None:
        """The launched program is dlv's child (in its own process group): remember it so it is killed with us."""
        self._program_started = True
        dlv = {stat.pid for stat in procs.descendants(self._proc.pid or 0) if stat.name == "dlv"}
        for child in procs.live_processes():
            if child.ppid in dlv:
                self._proc.track_debuggee(child.pid)
                self._proc.watch_debuggee(child.pid, self._report_terminated)

    def _tune_capabilities(self) -> None:
        caps = self.capabilities
        caps.hit_conditional_breakpoints = True  # delve parses hitCondition but does not advertise it
        caps.memory = True  # no readMemory: through [N]uint8 casts
        caps.registers = True
        caps.raw_command = True
        caps.data_breakpoints = False  # delve 1.20's DAP server has no data breakpoints

    # -- events -----------------------------------------------------------------------------------

    def _on_stopped(self, body: dict[str, Any]) -> None:
        self._stopped = True
        self._frames.clear()
        self._exception_detail = None
        self._trim_thread = body.get("threadId") if body.get("reason") == "exception" else None
        self._at_entry = body.get("reason") == "entry"
        if isinstance(body.get("text"), str):
            body["text"] = _unquote(body["text"])
        if self._pause_waiter is not None and not self._pause_waiter.done():
            self._pause_waiter.set_result(body)  # a pause being refined by _report_pause
            return
        if body.get("reason") == "exception" and "no such process" in (body.get("text"), body.get("description")):
            self._report_terminated(PROGRAM_VANISHED)  # delve tried to resume a program killed from outside
            return
        if body.get("reason") == "exception" and body.get("description") != "panic":
            self._ordered.refine(self._report_fatal(body))
        elif body.get("reason") == "pause":
            self._ordered.refine(self._report_pause(body))
        else:
            self._listener.on_stopped(self._stop_event(body))

    def _report_refined(self, body: dict[str, Any]) -> None:
        """A refined stop goes straight to the session (events behind it wait in ``_ordered``)."""
        self._frames.clear()
        self._ordered.target.on_stopped(self._stop_event(body))

    async def _report_pause(self, body: dict[str, Any]) -> None:
        """Report a pause on a user goroutine, preferably one that was running, not on whichever
        thread delve halted first (often the runtime's sysmon thread, in runtime.usleep).

        A running goroutine caught inside the runtime (async preemption, a signal handler) may not
        unwind to its user frames (delve cannot unwind through sigtramp), so it is resumed for a few
        milliseconds and paused again, a few times at most.
        """
        try:
            for attempt in range(_PAUSE_ATTEMPTS):
                goroutine, running = await self._pause_target(body.get("threadId"))
                if goroutine is not None:
                    body["threadId"] = goroutine
                if goroutine is None or not running or attempt + 1 == _PAUSE_ATTEMPTS:
                    break
                top = (await self._request("stackTrace", {"threadId": goroutine, "startFrame": 0, "levels": 1})
                       ).get("stackFrames", [])
                if not top or not _in_runtime(top[0]):
                    break
                waiter = self._pause_waiter = asyncio.get_running_loop().create_future()
                await self._request("continue", {"threadId": goroutine})
                await asyncio.sleep(0.01 * 2 ** attempt)  # let it leave the runtime (re-pausing at once would not)
                await self._request("pause", {"threadId": goroutine})
                body = await asyncio.wait_for(waiter, INSPECT_TIMEOUT_S)
                if body.get("reason") != "pause":
                    break  # it hit a breakpoint (or similar) meanwhile: report that
        except Exception:
            log.debug("delve: could not refine a pause", exc_info=True)
            if self._client is None or self._client.is_closed:
                return
        finally:
            self._pause_waiter = None
        if body.get("reason") == "pause":
            self._trim_thread = body.get("threadId")  # it may be inside asyncPreempt or a signal handler
        self._report_refined(body)

    async def _report_fatal(self, body: dict[str, Any]) -> None:
        """A fatal error (a deadlock, a concurrent map write) stops on the runtime's own thread, with
        no user frame: report it on a user goroutine instead, keeping the error for exception_info."""
        try:
            thread = body.get("threadId")
            frames = (await self._request("stackTrace", {"threadId": thread or 0, "startFrame": 0, "levels": 50})
                      ).get("stackFrames", [])
            if all(_in_runtime(frame) for frame in frames):
                goroutine, _ = await self._pause_target(thread)
                if goroutine is not None and goroutine != thread:
                    self._exception_detail = ExceptionDetail(type=str(body.get("description") or "fatal error"),
                                                             message=str(body.get("text") or ""))
                    body["threadId"] = self._trim_thread = goroutine
        except Exception:
            log.debug("delve: could not place a fatal error on a goroutine", exc_info=True)
        self._report_refined(body)

    async def _pause_target(self, current: int | None) -> tuple[int | None, bool]:
        """The goroutine to report a pause on, and whether it was running (on an OS thread)."""
        ranked: list[tuple[int, int, bool]] = []
        for thread in (await self._request("threads")).get("threads", []):
            match = _GOROUTINE.match(str(thread.get("name", "")))
            if match is None:
                continue
            running, in_user_code = bool(match[3]), not match[2].startswith("runtime.")
            rank = (0 if in_user_code else 1) if running else (2 if match[1] else 3 if in_user_code else 4)
            ranked.append((rank, int(thread["id"]), running))
        if not ranked:
            return None, False
        if any(goroutine == current and rank == 0 for rank, goroutine, _ in ranked):
            return current, True
        _, goroutine, running = min(ranked)
        return goroutine, running

    def _on_continued(self, body: dict[str, Any]) -> None:
        if self._ordered.refining:
            return  # the refinement resuming a goroutine for a moment: not the program moving on
        self._moving()
        super()._on_continued(body)

    def _on_output(self, body: dict[str, Any]) -> None:
        text = str(body.get("output", ""))
        category = str(body.get("category", "console"))
        if text.startswith("Build Error:"):
            self._build_error = text
        if category == "console":
            exited = _EXIT_STATUS.search(text)
            if exited:
                self._listener.on_exited(int(exited[2]))
            if exited or _HOUSEKEEPING.match(text):
                return
        elif "line" in body and _LOGPOINT_PREFIX.match(text):  # delve prefixes logpoint messages
            body = {**body, "output": _LOGPOINT_PREFIX.sub("", text, count=1)}
        super()._on_output(body)

    def _report_terminated(self, cause: str | None) -> None:
        if cause is None and not self._ending and not self._terminated_reported:
            # The program ended: delve reports its exit status only while disconnecting, so end here.
            self._in_background(self._end_once(terminate_debuggee=True))
            return
        super()._report_terminated(cause)

    # -- requests ---------------------------------------------------------------------------------

    def _moving(self) -> None:
        super()._moving()
        self._stopped = False
        self._exception_detail = None
        self._at_entry = False
        self._trim_thread = None

    async def set_breakpoints(self, file: str, breakpoints: list[SourceBreakpoint]) -> list[BreakpointResult]:
        self._breakpoint_files.add(file)
        return await super().set_breakpoints(file, breakpoints)

    async def _hidden_frames(self, thread_id: int) -> int:
        """How many runtime frames top the stack of the goroutine that panicked or was paused (0 elsewhere)."""
        if thread_id != self._trim_thread:
            return 0
        hidden = self._frames.hidden(thread_id)
        if hidden is None:
            body = await self._request("stackTrace", {"threadId": thread_id, "startFrame": 0, "levels": 20})
            hidden = leading(body.get("stackFrames", []), _in_runtime)
            self._frames.hide(thread_id, hidden)
        return hidden

    # At the entry point there is no goroutine yet (delve still names "thread 1"): the current OS
    # thread's stack is listed instead, whose frames past the runtime's entry are unknown ("???").
    def _stack_thread(self, thread_id: int) -> int:
        return 0 if self._at_entry else thread_id

    def _frame(self, raw: dict[str, Any]) -> Frame | None:
        if self._at_entry and raw.get("name") == "???":
            return None
        return super()._frame(raw)

    def _shown_total(self, total: object, hidden: int, start: int, count: int) -> int | None:
        return start + count if self._at_entry else super()._shown_total(total, hidden, start, count)

    def is_noise(self, variable: Variable) -> bool:
        """Unnamed results (~r0, ~r1): garbage until the function returns."""
        return variable.name.startswith("~r")

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        return [_tidy(v) for v in await super().variables(ref, start, count) if v.name not in _METADATA]

    async def child_slice(self, parent: Variable, start: int, count: int,
                          frame: FrameRef | None = None) -> list[Variable] | None:
        """Elements ``start..start+count`` of a slice, array or map (delve loads 64 at first)."""
        if not parent.ref or not parent.indexed_count:
            return None
        body = await self._request("variables", {"variablesReference": parent.ref, "filter": "indexed",
                                                 "start": start, "count": count})
        return [_tidy(_plain(v)) for v in body.get("variables", [])]

    async def evaluate(self, expression: str, frame: FrameRef | None, context: EvaluateContext) -> Variable:
        value = _tidy(await super().evaluate(expression, frame, context))
        if value.memory_reference is None and (value.type or "").startswith(("*", "unsafe.Pointer")):
            # delve shows a pointer as *<target> and sends no memoryReference: ask for the address
            with contextlib.suppress(AdapterRequestError):
                address = _NUMBER.match((await super().evaluate(f"uintptr({expression})", frame, "watch")).value)
                if address is not None:
                    value = value._replace(memory_reference=hex(int(address[1])))
        return value

    async def exception_info(self, thread_id: int) -> ExceptionDetail | None:
        if self._exception_detail is not None and thread_id == self._trim_thread:
            return self._exception_detail  # delve knows it only on the runtime's thread
        detail = await super().exception_info(thread_id)
        if detail is None:
            return None
        return ExceptionDetail(type=detail.type, message=_unquote(detail.message))

    async def read_memory(self, address: int, count: int) -> MemoryBlock:
        if count <= 0:
            return MemoryBlock(address=address, data=b"")
        array = await super().evaluate(f"*(*[{count}]uint8)({address:#x})", None, "watch")
        if not array.ref:
            return MemoryBlock(address=address, data=b"", unreadable=count)
        body = await self._request("variables", {"variablesReference": array.ref, "filter": "indexed",
                                                 "start": 0, "count": count})
        data = bytearray()
        for child in body.get("variables", []):
            match = _NUMBER.match(str(child.get("value", "")))
            if match is None:
                break
            data.append(int(match[1]) & 0xFF)
        return MemoryBlock(address=address, data=bytes(data), unreadable=count - len(data))

    async def write_memory(self, address: int, data: bytes) -> int:
        written = 0
        for offset in range(0, len(data), 64):
            chunk = data[offset:offset + 64]
            array = await super().evaluate(f"*(*[{len(chunk)}]uint8)({address + offset:#x})", None, "watch")
            if not array.ref:
                break
            for index, value in enumerate(chunk):
                try:
                    await self._request("setVariable", {"variablesReference": array.ref, "name": f"[{index}]",
                                                        "value": str(value)})
                except AdapterRequestError:
                    return written
                written += 1
        return written

    async def registers(self, frame: FrameRef) -> list[Variable]:
        """The frame's registers: delve lists them as a scope, switched on just for this read."""
        await self._dlv("config showRegisters true", frame)
        try:
            scopes = await self.scopes(frame)
            scope = next((s for s in scopes if s.name.lower() == "registers"), None)
            if scope is None:
                return []
            return [Variable(name=v.name.strip(), value=v.value, evaluate_name=v.evaluate_name)
                    for v in await super().variables(scope.ref)]
        finally:
            await self._dlv("config showRegisters false", frame)

    async def command(self, text: str, frame: FrameRef | None) -> str:
        command = text.strip()
        if command.startswith("dlv "):
            command = command[4:].strip()
        if not command:
            raise UsageError(f"pass a delve command; delve's DAP server offers: {_DLV_COMMANDS}")
        try:
            return await self._dlv(command, frame)
        except AdapterRequestError as exc:
            if "command not available" in exc.message:
                raise UsageError(f"delve's DAP server has no command {command.split()[0]!r}; it offers "
                                 f"{_DLV_COMMANDS} (e.g. 'config -list', 'sources main'). Goroutines: "
                                 "debug_stack(all_threads=true); memory, registers and disassembly have "
                                 "their own tools") from exc
            raise

    async def _dlv(self, command: str, frame: FrameRef | None) -> str:
        return await super().command(f"dlv {command}", frame)

    # -- ending -----------------------------------------------------------------------------------

    async def _end(self, terminate_debuggee: bool) -> None:
        client = self._client
        if self._remote and not terminate_debuggee and client is not None and not client.is_closed:
            # A multi-client server keeps this client's breakpoints and leaves the program halted.
            with contextlib.suppress(Exception):
                for file in sorted(self._breakpoint_files):
                    await client.request("setBreakpoints", {"source": {"path": file}, "breakpoints": []},
                                         timeout=2.0)
                await client.request("setFunctionBreakpoints", {"breakpoints": []}, timeout=2.0)
                if self._stopped:
                    await client.request("continue", {"threadId": 0}, timeout=2.0)
        try:
            await super()._end(terminate_debuggee)
        finally:
            if self._pumps:
                with contextlib.suppress(asyncio.TimeoutError):
                    await asyncio.wait_for(asyncio.gather(*self._pumps, return_exceptions=True), 1.0)
                for task in self._pumps:
                    task.cancel()
            if self._build_dir is not None:
                shutil.rmtree(self._build_dir, ignore_errors=True)


def _plain(v: dict[str, Any]) -> Variable:
    return Variable(name=str(v.get("name", "")), value=str(v.get("value", "")), type=v.get("type") or None,
                    ref=int(v.get("variablesReference", 0)), evaluate_name=v.get("evaluateName"),
                    indexed_count=v.get("indexedVariables"), named_count=v.get("namedVariables"))


def _tidy(variable: Variable) -> Variable:
    """Containers count only their elements: the metadata children delve adds are dropped."""
    if variable.indexed_count:
        return variable._replace(named_count=None)
    return variable


