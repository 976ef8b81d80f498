"""Launch and attach preparation: from the tool's arguments to a started session.

Paths are resolved and checked, a ``build`` command runs first, the language and the debugger are
chosen, pending breakpoints and the exception filters are applied, and the session starts. What is
wrong with the arguments is found here, before any debugger is spawned, and said with what to do.
The security policy (``polydbg.policy``, held by the manager) is applied first of all: before a path
is read, a build runs or a process is looked at.
"""

from __future__ import annotations

import dataclasses
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from polydbg import namespaces, testing
from polydbg.backends import registry
from polydbg.backends.base import AttachSpec, LaunchSpec
from polydbg.backends.timecontrol import RecordMode
from polydbg.errors import PolydbgError, UsageError, echo
from polydbg.policy import Policy
from polydbg.session import conditions
from polydbg.session import source as src
from polydbg.session.breakpoints import BreakpointRequest
from polydbg.session.build import run_build
from polydbg.session.core import Progress
from polydbg.session.manager import SessionManager
from polydbg.session.model import StopReport
from polydbg.session.session import Session
from polydbg.session.testrun import TestRun

_HOST = re.compile(r"[A-Za-z0-9._:%\[\]-]{1,255}")  # a host name or an IPv4/IPv6 address, nothing a debugger parses


@dataclass(frozen=True)
class LaunchRequest:
    program: str | None = None
    module: str | None = None
    args: Sequence[str] = ()
    cwd: str | None = None
    env: dict[str, str] | None = None
    language: str | None = None
    adapter: str | None = None
    runtimes: Mapping[str, str] = field(default_factory=dict)  # debug_launch's runtime argument → an executable
    breakpoints: Sequence[BreakpointRequest] = ()
    stop_on_entry: bool = False
    break_on_exception: str = "uncaught"
    core: str | None = None
    build: str | None = None
    stdin: str | None = None
    runtime_args: Sequence[str] = ()
    test: str | None = None  # a test's name, run alone with the project's runner (polydbg.testing)
    trace: Sequence[str] = ()  # functions whose calls are recorded until the first answer (session/calls.py)
    record: RecordMode | None = None  # recorded from the first stop on, to run backwards (backends/timecontrol.py)


@dataclass(frozen=True)
class AttachRequest:
    pid: int | None = None
    host: str | None = None
    port: int | None = None
    path_mappings: dict[str, str] | None = None
    breakpoints: Sequence[BreakpointRequest] = ()
    language: str | None = None
    adapter: str | None = None
    program: str | None = None
    break_on_exception: str = "uncaught"


def _path(value: str, base: str | None = None) -> str:
    """An absolute, normalized path; a NUL byte (which no path can hold) or a line break (which would end a
    command line sent to gdb) is a usage error."""
    if "\0" in value or "\n" in value or "\r" in value:
        raise UsageError(f"{echo(value)} contains a NUL byte or a line break; pass a path")
    return os.path.normpath(os.path.join(base or os.getcwd(), os.path.expanduser(value)))


def existing_dir(path: str | None, what: str) -> str | None:
    if path is None:
        return None
    full = _path(path)
    if not os.path.isdir(full):
        raise UsageError(f"{what} {echo(path)} is not a directory; pass an existing directory")
    return full


def command_on_path(program: str, env: Mapping[str, str] | None, first: Sequence[str] = ()) -> str | None:
    """A program named without a directory (``npm``), looked up as a shell does: in the directories ``first``
    (where the project keeps its commands: its virtualenv, node_modules/.bin — as if it were activated), then
    in the launch's PATH (its ``env``'s, else the server's), the first executable file of that name."""
    if os.sep in program or not program or program in (".", ".."):
        return None
    search = os.pathsep.join([*first, (env or {}).get("PATH", os.environ.get("PATH", os.defpath))])
    found = shutil.which(program, path=search)
    return os.path.abspath(found) if found else None


def check_breakpoint(request: BreakpointRequest, cwd: str | None = None,
                     policy: Policy | None = None) -> BreakpointRequest:
    """The request with an absolute file, checked now: a bad one is refused when it is set, never later."""
    path = _path(request.file, cwd)
    if policy is not None:  # no session yet: every debugger's command escapes are refused
        policy.check_path(path, "breakpoint file")
        policy.check_expressions(None, request.condition, request.hit_condition, request.log_message)
    lines = src.read_lines(path)
    line = src.line_number(path, request.line)
    if not 1 <= line <= len(lines):
        raise UsageError(f"line {line} is outside {echo(path)} (it has {len(lines)} lines); "
                         f"pass a line between 1 and {len(lines)}")
    conditions.check_hit(request.hit_condition)
    conditions.check_file(path, request.condition, request.log_message)
    return BreakpointRequest(path, line, request.condition, request.hit_condition, request.log_message)


async def apply_breakpoints(session: Session, requests: Sequence[BreakpointRequest]) -> None:
    for request in requests:
        await session.add_line_breakpoint(request.file, request.line, request.condition, request.hit_condition,
                                          request.log_message)


def check_launch(policy: Policy, request: LaunchRequest) -> None:
    """The policy's verdict on a launch, before anything is read, built or spawned: the paths against the
    roots, then ``build``, the runtime command line and ``env`` against their switches."""
    cwd = _path(request.cwd) if request.cwd is not None else None
    if cwd is not None:
        policy.check_path(cwd, "cwd")
    program = _path(request.program, cwd) if request.program else None
    if program is not None:
        policy.check_path(program, "program")
    elif cwd is None:
        policy.check_path(os.getcwd(), f"the directory {registry.module_runner()} runs in (the server's; pass cwd)")
    if request.core is not None:
        policy.check_path(_path(request.core), "core")
    base = cwd or (program if program and os.path.isdir(program) else os.path.dirname(program or "")) or os.getcwd()
    policy.check_paths((_path(b.file, base) for b in request.breakpoints), "breakpoint file")
    if request.build is not None:
        policy.require("allow_build", f"build {echo(request.build)} (a shell command run before launch)")
    policy.check_runtime(request.runtimes, request.runtime_args, base)
    policy.check_env(request.env)


def check_host(host: str | None) -> None:
    if host is not None and not _HOST.fullmatch(host):
        raise UsageError(f"host {echo(host)} is not a host name or an address; pass e.g. 127.0.0.1, ::1 or "
                         "build-box.local")


@dataclass(frozen=True)
class _Program:
    path: str
    named: str | None = None  # the language of a program passed by name, not as a file (a JVM main class)
    on_path: bool = False  # found on PATH, as a shell finds a command

    @property
    def home(self) -> str | None:
        """Where the program runs without a cwd: a command from PATH where the server runs, as in a shell; a
        file beside itself (a Go package directory in itself)."""
        if self.on_path:
            return os.getcwd()
        if self.named:
            return None
        return self.path if os.path.isdir(self.path) else os.path.dirname(self.path)


async def _find_program(policy: Policy, request: LaunchRequest, work_dir: str | None, timeout_s: float) -> _Program:
    """The program to launch: a file (relative to cwd), a JVM main class by name, else a command on PATH.
    ``build`` runs first, since it may make the file."""
    assert request.program
    path = _path(request.program, work_dir)
    if request.build:
        await run_build(request.build, work_dir or os.path.dirname(path), timeout_s)
    if os.path.exists(path):
        return _Program(path)
    named = registry.named_program(request.program, request.language, request.runtime_args)
    if named is not None:
        return _Program(request.program, named=named)
    found = command_on_path(request.program, request.env, registry.command_dirs(work_dir, request.runtimes))
    if found is None:
        where = " or on PATH" if os.sep not in request.program else ""
        raise UsageError(f"program {echo(request.program)} not found (looked for {echo(path)}{where}); pass an "
                         "existing file, absolute or relative to cwd, or a command on PATH")
    policy.check_path(found, f"program {echo(request.program)}, found on PATH at")
    return _Program(found, on_path=True)


async def _test_plan(manager: SessionManager, request: LaunchRequest) -> tuple[LaunchRequest, testing.TestPlan]:
    """The launch that runs ``request.test`` alone (the runner's program or module and arguments first, the
    agent's ``args`` after them), checked by the policy as any launch is, and its plan."""
    assert request.test is not None
    if request.program or request.module or request.core:
        raise UsageError("pass test alone, without program, module or core: the project's runner is found for it "
                         "(or pass program/module and args to run a runner yourself)")
    check_launch(manager.policy, request)
    cwd = existing_dir(request.cwd, "cwd") or os.getcwd()
    plan = await testing.plan(request.test, cwd, request.language, request.runtimes, request.env,
                              tuple(request.runtime_args))
    env = {**dict(plan.env), **(request.env or {})} if plan.env else request.env
    runtime_args = request.runtime_args if plan.runtime_args is None else plan.runtime_args
    return dataclasses.replace(request, program=plan.program, module=plan.module, args=(*plan.args, *request.args),
                               cwd=plan.cwd, language=plan.language, env=env, runtime_args=runtime_args), plan


async def launch(manager: SessionManager, request: LaunchRequest, timeout_s: float,
                 progress: Progress | None) -> StopReport:
    plan = None
    agents_runtime_args = request.runtime_args
    if request.test is not None:
        request, plan = await _test_plan(manager, request)
    if bool(request.program) == bool(request.module):
        raise UsageError(f"pass exactly one of program (a path) or module (for {registry.module_runner()}), "
                         "or test (a test's name)")
    # a test plan's own runtime flags (the system's JUnit jars, the classes polydbg compiled in its cache) are not
    # the agent's: only the agent's are the policy's to judge
    check_launch(manager.policy, dataclasses.replace(request, runtime_args=agents_runtime_args))
    work_dir = existing_dir(request.cwd, "cwd")
    program = await _find_program(manager.policy, request, work_dir, timeout_s) if request.program else None
    path = program.path if program else None
    named = program.named if program else None
    core_path = None
    if request.core is not None:
        core_path = _path(request.core)
        if not os.path.isfile(core_path) or path is None:
            raise UsageError(f"core {echo(request.core)} is not a file, or program is missing; pass the executable "
                             "as program and the core dump it produced as core")
    language = named or registry.infer_language(path, request.module, request.language, request.adapter, request.args)
    if path is not None and core_path is None and named is None and not os.path.isdir(path):
        registry.check_launchable(path)
    home = program.home if program else None
    target = os.path.basename(path) if path else f"-m {request.module}"
    session = manager.create(language, request.adapter, target if plan is None else plan.name,
                             work_dir or home or os.getcwd(), request.record)
    session.core.test = TestRun(plan) if plan is not None else None
    if request.build and plan is None:  # run again by debug_restart: the edited program's rebuild
        session.core.build = (request.build, work_dir or os.path.dirname(path or "") or os.getcwd())
    try:
        await apply_breakpoints(session, [*manager.take_pending(), *request.breakpoints])
        filters = registry.break_filters(session.adapter, request.break_on_exception)
        added = plan.exception_filters if plan is not None and filters else ()
        session.exception_filters = list(dict.fromkeys([*filters, *added]))
        if session.core.test is not None:
            session.core.test.filters = tuple(session.exception_filters)
        if request.trace:
            session.trace_at_start(list(request.trace))
    except PolydbgError:
        await manager.remove(session, detach=False)
        raise
    runtime_argument = registry.runtime_argument(session.adapter)
    spec = LaunchSpec(program=path, module=request.module, args=tuple(request.args), cwd=work_dir or home,
                      env=tuple(sorted((request.env or {}).items())), stop_on_entry=request.stop_on_entry,
                      core=core_path, stdin=request.stdin,
                      runtime=request.runtimes.get(runtime_argument) if runtime_argument else None,
                      runtime_args=tuple(request.runtime_args), test=plan is not None, recorded=bool(request.trace),
                      record=request.record, record_limit=manager.policy.record_limit)
    return await manager.start(session, spec, timeout_s, progress)


def attach_language(pid: int | None, language: str | None, adapter: str | None, program: str | None) -> str:
    """The language of an attach target: explicit, else from the process's executable or the adapter."""
    if language:
        return registry.normalize_language(language)
    if pid is not None:
        if pid <= 0:
            raise UsageError(f"pid {pid} is not a process id; pass the pid of a running process (ps shows it)")
        try:
            os.kill(pid, 0)
            exe = os.readlink(f"/proc/{pid}/exe")
        except ProcessLookupError as exc:
            raise UsageError(f"no process {pid}; pass the pid of a running process") from exc
        except OSError:
            exe = ""
        return registry.language_of_process(exe)
    if program:
        return registry.infer_language(program, None, None)
    if adapter:
        return registry.info(adapter).languages[0]
    return registry.info(registry.DEFAULT_ADAPTER).languages[0]


async def attach(manager: SessionManager, request: AttachRequest, timeout_s: float,
                 progress: Progress | None) -> StopReport:
    engine = namespaces.engine_of(request.program)
    if engine is not None:  # program="docker://name": the container's main process, by its host pid
        if request.pid is not None:
            raise UsageError(f"pass pid or program={echo(request.program)}, not both: the container's main pid is "
                             "looked up from its name")
        manager.policy.check_attach(None)  # before the engine is asked about it
        request = dataclasses.replace(request, pid=await namespaces.container_pid(*engine), program=None)
    if request.pid is None and request.port is None:
        raise UsageError("pass pid (a running process) or port (and host) of a listening debug server, e.g. one "
                         f"started with {registry.attach_hint()}")
    manager.policy.check_attach(request.pid)  # before the process is looked at
    check_host(request.host)
    if request.program:
        manager.policy.check_path(_path(request.program), "program")
    language = attach_language(request.pid, request.language, request.adapter, request.program)
    host = request.host or "127.0.0.1"
    host = f"[{host}]" if ":" in host and not host.startswith("[") else host  # an IPv6 address: [::1]:5678
    target = f"pid {request.pid}" if request.pid is not None else f"{host}:{request.port}"
    target += f" port {request.port}" if request.pid is not None and request.port is not None else ""
    # The program's own directory may be elsewhere (another process, another machine): an attached session's
    # paths are relative to where polydbg runs, which is where its relative arguments are taken from.
    session = manager.create(language, request.adapter, target, os.getcwd())
    mappings = sorted((request.path_mappings or {}).items())
    inside = namespaces.of(request.pid) if request.pid is not None else None
    if request.pid is not None and request.port is not None:
        _check_port_inside(request, inside)
    if inside is not None and inside.root is not None:
        # the container's paths are read through its root on the host; the agent's own mappings come first
        session.core.root, session.core.root_keeps = inside.root, tuple(local for local, _ in mappings)
        mappings.append((inside.root, "/"))
    try:
        await apply_breakpoints(session, request.breakpoints)
    except PolydbgError:
        await manager.remove(session, detach=True)
        raise
    session.exception_filters = registry.break_filters(session.adapter, request.break_on_exception)
    pid, port = request.pid, request.port
    if pid is not None and port is not None:  # a debug server in the container: its port, reached inside
        session.core.forwarder = namespaces.Forwarder(pid, port)
        if not await session.core.forwarder.probe():
            await manager.remove(session, detach=True)
            raise UsageError(f"nothing listens on 127.0.0.1:{port} inside the container of pid {pid}; start the "
                             f"program there under its debug server on that port ({registry.attach_hint()}), or "
                             f"pass pid alone to attach to the process")
        pid, port = None, await session.core.forwarder.start()
    spec = AttachSpec(pid=pid, host=request.host, port=port,
                      path_mappings=tuple(mappings),
                      program=_path(request.program) if request.program else None, namespaces=inside)
    return await manager.start(session, spec, timeout_s, progress)


def _check_port_inside(request: AttachRequest, inside: namespaces.Namespaces | None) -> None:
    """pid with port: a debug server listening on 127.0.0.1:port in the container of pid (its network
    namespace), reached without a published port; said when pid is not in a container or host is given."""
    if request.host is not None:
        raise UsageError(f"pass host or pid with port, not both: with pid, port is looked for on 127.0.0.1 inside "
                         f"the network namespace of pid {request.pid} (its container); with host, on that host")
    if inside is None or not inside.net:
        raise UsageError(f"pid {request.pid} shares polydbg's network, so pid with port has nothing to reach "
                         f"inside a container: pass port alone (debug_attach(port={request.port})) for a debug "
                         f"server, or pid alone to attach to the process")
