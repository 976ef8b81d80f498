"""The security policy on its own: defaults per transport, where settings come from and in which order, what a
bad config says, and each check — paths against the roots (``..``, absolute paths, symlinks), switches, the
variables ``allow_env`` guards, runtime flags, raw-command escapes in expressions, other users' processes."""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from polydbg import policy as security
from polydbg.backends.timecontrol import DEFAULT_RECORD_LIMIT
from polydbg.errors import PolicyError, UsageError
from polydbg.policy import Policy, PolicyConfigError
from polydbg.session import launching
from polydbg.session.breakpoints import BreakpointRequest
from polydbg.session.launching import LaunchRequest

NO_ENV: dict[str, str] = {}


def load(start: Path, flags: list[str] | None = None, environ: dict[str, str] | None = None,
         user: Path | None = None, transport: security.Transport = "http") -> Policy:
    parser = argparse.ArgumentParser()
    security.add_arguments(parser)
    args = parser.parse_args(flags or [])
    return Policy.load(transport, start, args, environ if environ is not None else NO_ENV,
                       str(user or start / "no-user-config.toml"))


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('hi')\n")
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.py").write_text("SECRET = 1\n")
    return root


# -- defaults and sources ------------------------------------------------------------------------------------

def test_stdio_allows_everything_and_http_confines(project: Path) -> None:
    stdio = Policy.defaults("stdio", project)
    assert stdio.roots is None
    assert all(getattr(stdio, key) for key in security.SWITCHES if key != "allow_secrets")
    http = Policy.defaults("http", project)
    assert not stdio.allow_secrets and not http.allow_secrets  # redacted on both transports
    assert http.roots == (os.path.realpath(project),)
    assert (http.allow_build, http.allow_command, http.allow_env) == (False, False, False)
    assert (http.allow_attach, http.allow_memory_write) == (True, True)
    assert "HTTP default" in http.origins["allow_build"]
    assert Policy() == stdio  # what a server built without a policy holds


def test_flags_beat_environment_beat_project_file_beat_user_file(project: Path, tmp_path: Path) -> None:
    user = tmp_path / "user.toml"
    user.write_text("allow_build = true\nallow_command = true\nallow_env = true\nallow_attach = false\n")
    (project / "polydbg.toml").write_text("allow_command = false\nallow_env = false\n")
    environ = {"POLYDBG_ALLOW_ENV": "yes", "POLYDBG_ALLOW_MEMORY_WRITE": "0"}
    policy = load(project, ["--no-allow-build"], environ, user)
    assert policy.allow_build is False and policy.origins["allow_build"] == "--no-allow-build"
    assert policy.allow_env is True and policy.origins["allow_env"] == "POLYDBG_ALLOW_ENV"
    assert policy.allow_command is False and policy.origins["allow_command"] == str(project / "polydbg.toml")
    assert policy.allow_attach is False and policy.origins["allow_attach"] == str(user)
    assert policy.allow_memory_write is False
    assert policy.roots == (os.path.realpath(project),)  # nobody set roots: the HTTP default


def test_the_record_limit_comes_from_a_flag_the_environment_or_a_file(project: Path) -> None:
    assert load(project).record_limit == DEFAULT_RECORD_LIMIT
    (project / "polydbg.toml").write_text("record_limit = 50_000\n")
    from_file = load(project)
    assert (from_file.record_limit, from_file.origins["record_limit"]) == (50_000, str(project / "polydbg.toml"))
    environ = {"POLYDBG_RECORD_LIMIT": "20000"}
    assert load(project, environ=environ).record_limit == 20_000
    flagged = load(project, ["--record-limit", "3000"], environ)
    assert (flagged.record_limit, flagged.origins["record_limit"]) == (3000, "--record-limit")
    assert "record_limit: 3,000 instructions (--record-limit)" in flagged.describe()
    for bad in ("0", "lots", "-5"):
        with pytest.raises(PolicyConfigError, match="record_limit must be a whole number"):
            load(project, environ={"POLYDBG_RECORD_LIMIT": bad})
    (project / "polydbg.toml").write_text("record_limit = true\n")
    with pytest.raises(PolicyConfigError, match="record_limit must be a whole number"):
        load(project)


def test_roots_from_each_source_resolve_against_their_base(project: Path, tmp_path: Path) -> None:
    (project / "polydbg.toml").write_text('roots = ["src", "../outside"]\n')
    from_file = load(project)
    assert from_file.roots == (str(project / "src"), str(tmp_path / "outside"))
    from_env = load(project, environ={"POLYDBG_ROOTS": f"src{os.pathsep}{tmp_path / 'outside'}"})
    assert from_env.roots == (str(project / "src"), str(tmp_path / "outside"))
    from_flags = load(project, ["--root", "src", "--root", str(tmp_path), "--no-default-root"])
    assert from_flags.roots == (str(project / "src"), str(tmp_path))
    assert from_flags.origins["roots"].startswith("--root with --no-default-root")


@pytest.mark.parametrize("transport", ["http", "stdio"])
def test_roots_on_the_command_line_add_to_the_start_directory(project: Path, tmp_path: Path,
                                                              transport: security.Transport) -> None:
    """``--root X`` widens what polydbg may reach: the project it was started in stays a root (a cwd there
    is not refused), unless ``--no-default-root`` says the roots are the --root directories alone."""
    shared = tmp_path / "shared"
    shared.mkdir()
    policy = load(project, ["--root", str(shared)], transport=transport)
    assert policy.roots == (str(project), str(shared))
    policy.check_path(str(project / "src"), "cwd")
    policy.check_path(str(shared / "lib.py"), "breakpoint file")
    with pytest.raises(PolicyError) as caught:
        policy.check_path("/etc/passwd", "program")
    assert f"outside the roots ({project}, {shared}; --root, with the directory polydbg was started in; " \
           "--no-default-root leaves that out)" in str(caught.value)
    assert f"roots: {project}, {shared} (--root, with the directory polydbg was started in" in policy.describe()
    alone = load(project, ["--root", str(shared), "--no-default-root"], transport=transport)
    assert alone.roots == (str(shared),)
    with pytest.raises(PolicyError) as caught:
        alone.check_path(str(project / "src"), "cwd")
    text = str(caught.value)
    assert "--root with --no-default-root: without the directory polydbg was started in" in text
    assert "or without --no-default-root for the directory it starts in" in text
    with pytest.raises(PolicyConfigError, match=r"--no-default-root leaves the start directory out.*pass --root DIR"):
        load(project, ["--no-default-root"], transport=transport)


def test_a_transport_table_overrides_the_top_level_for_that_transport(project: Path) -> None:
    (project / "polydbg.toml").write_text("allow_build = false\n[http]\nallow_build = true\n[stdio]\nroots = ['.']\n")
    http = load(project)
    assert http.allow_build is True and http.origins["allow_build"].endswith("polydbg.toml [http]")
    assert http.roots == (os.path.realpath(project),)
    stdio = load(project, transport="stdio")
    assert stdio.allow_build is False
    assert stdio.roots == (os.path.realpath(project),)


@pytest.mark.parametrize(("text", "says"), [
    ("allow_bild = true\n", "unknown setting 'allow_bild'"),
    ("allow_build = 'yes'\n", "allow_build must be true or false"),
    ("allow_build = 1\n", "allow_build must be true or false"),
    ("roots = '.'\n", "roots must be a list"),
    ("roots = []\n", "roots is empty"),
    ("roots = ['nowhere']\n", "is not a directory"),
    ("[http]\nallow_command = 'on'\n", "[http]: allow_command must be true or false"),
    ("[https]\nallow_build = true\n", "unknown setting 'https'"),
    ("[stdio]\nallow_build = 'on'\n", "[stdio]: allow_build must be true or false"),  # checked over HTTP too
    ("allow_build = \n", "cannot read it"),
])
def test_a_bad_config_file_is_a_clear_start_up_error(project: Path, text: str, says: str) -> None:
    (project / "polydbg.toml").write_text(text)
    with pytest.raises(PolicyConfigError) as caught:
        load(project)
    assert says in str(caught.value)
    assert str(project / "polydbg.toml") in str(caught.value)


def test_bad_environment_values_are_start_up_errors(project: Path) -> None:
    with pytest.raises(PolicyConfigError, match="POLYDBG_ALLOW_BUILD='maybe' is not a boolean"):
        load(project, environ={"POLYDBG_ALLOW_BUILD": "maybe"})
    with pytest.raises(PolicyConfigError, match="is not a directory"):
        load(project, environ={"POLYDBG_ROOTS": "/no/such/dir"})
    with pytest.raises(PolicyConfigError, match="is not a directory"):
        load(project, ["--root", "missing"])
    assert load(project, environ={"POLYDBG_ALLOW_BUILD": " "}).allow_build is False  # blank: unset


def test_the_user_file_is_under_xdg_config_home(tmp_path: Path) -> None:
    assert security.user_config_path({"XDG_CONFIG_HOME": str(tmp_path)}) == str(tmp_path / "polydbg" / "polydbg.toml")
    config = tmp_path / "polydbg" / "polydbg.toml"
    config.parent.mkdir()
    config.write_text("allow_memory_write = false\n")
    policy = Policy.load("stdio", tmp_path, None, {"XDG_CONFIG_HOME": str(tmp_path)})
    assert policy.allow_memory_write is False and policy.origins["allow_memory_write"] == str(config)


def test_describe_names_every_setting_and_its_origin(project: Path) -> None:
    text = load(project, ["--allow-command"]).describe()
    assert f"roots: {os.path.realpath(project)} (the HTTP default: the directory polydbg was started in)" in text
    assert "allow_command: on (--allow-command)" in text
    assert "allow_build: off (the HTTP default)" in text
    assert "roots: unrestricted" in Policy.defaults("stdio", project).describe()


# -- debug_command: raw commands, and the queries a backend declares read-only --------------------------------

def test_a_backends_read_only_queries_need_no_allow_command(project: Path) -> None:
    policy = Policy.defaults("http", project)  # allow_command off
    for query in ("threads", "classes demo.*", "methods Basics", "FIELDS Basics", "version", "classpath",
                  "sourcepaths", "help", "  threads  "):
        policy.check_command("java", query)
        policy.check_command(None, query)  # no session yet: some backend's query
    for adapter, command in (("gdb", "threads"), ("gdb", "shell id"), ("lldb-dap", "version"),
                             ("java", "frobnicate"), ("java", ""), (None, "platform shell id"), ("delve", "help")):
        with pytest.raises(PolicyError) as caught:
            policy.check_command(adapter, command)
        text = str(caught.value)
        assert text.startswith(f"refused by the policy: debug_command {command!r} (a raw {adapter or 'debugger'} "
                               "command"), text
        assert "needs allow_command, which is off (the HTTP default)" in text, text
        assert ("read-only queries are allowed: java: classes, methods" in text) == (adapter in ("java", None)), text
    Policy.defaults("stdio", project).check_command("gdb", "shell id")  # on: anything goes


# -- refusals ------------------------------------------------------------------------------------------------

def test_a_refusal_names_the_setting_its_origin_and_how_to_change_it(project: Path) -> None:
    with pytest.raises(PolicyError) as caught:
        Policy.defaults("http", project).require("allow_build", "build 'make'")
    text = str(caught.value)
    assert text.startswith("refused by the policy: build 'make' needs allow_build, which is off (the HTTP default)")
    assert "--allow-build" in text and "POLYDBG_ALLOW_BUILD=1" in text and "allow_build = true in polydbg.toml" in text
    assert caught.value.kind == "policy"
    flagged = load(project, ["--no-allow-command"])
    with pytest.raises(PolicyError, match="start polydbg with --allow-command instead of --no-allow-command"):
        flagged.require("allow_command", "debug_command")
    (project / "polydbg.toml").write_text("allow_attach = false\n")
    with pytest.raises(PolicyError, match=f"allow_attach = true in {project / 'polydbg.toml'}"):
        load(project).require("allow_attach", "debug_attach")
    Policy.defaults("stdio", project).require("allow_build", "build")  # on: no error


def test_paths_must_lie_in_the_roots_after_dots_and_symlinks(project: Path, tmp_path: Path) -> None:
    policy = Policy.defaults("http", project)
    policy.check_path(str(project / "src" / "app.py"), "program")
    policy.check_path(str(project / "src" / ".." / "src" / "new.py"), "program")  # need not exist
    policy.check_path(str(project), "cwd")
    escapes = [str(project / ".." / "outside" / "secret.py"), "/etc/passwd", str(tmp_path / "outside"),
               str(tmp_path / "projectx" / "a.py")]  # a sibling whose name starts like the root
    (project / "link.py").symlink_to(tmp_path / "outside" / "secret.py")
    (project / "linkdir").symlink_to(tmp_path / "outside")
    escapes += [str(project / "link.py"), str(project / "linkdir" / "secret.py"), str(project / "linkdir")]
    for path in escapes:
        with pytest.raises(PolicyError, match="is outside the roots") as caught:
            policy.check_path(path, "program")
        assert "--root DIR" in str(caught.value)
    (project / "inner.py").symlink_to(project / "src" / "app.py")
    policy.check_path(str(project / "inner.py"), "program")  # a symlink that stays inside
    Policy.defaults("stdio", project).check_path("/etc/passwd", "source file")
    load(project, ["--root", "/"]).check_path("/etc/passwd", "source file")


def test_env_refuses_code_injecting_variables_when_off(project: Path) -> None:
    policy = Policy.defaults("http", project)
    for name in ("LD_PRELOAD", "LD_LIBRARY_PATH", "PYTHONSTARTUP", "PYTHONPATH", "NODE_OPTIONS", "JAVA_TOOL_OPTIONS",
                 "_JAVA_OPTIONS", "GOFLAGS", "DYLD_INSERT_LIBRARIES", "BASH_ENV", "ld_preload", "PYTHONSOMETHINGNEW"):
        with pytest.raises(PolicyError, match=f"env {name} .* needs allow_env"):
            policy.check_env({"DEBUG": "1", name: "x"})
    policy.check_env({"DEBUG": "1", "NODE_ENV": "test", "PYTHONUNBUFFERED": "1", "RUST_BACKTRACE": "1"})
    policy.check_env(None)
    Policy.defaults("stdio", project).check_env({"LD_PRELOAD": "/tmp/evil.so"})


def test_runtime_executables_and_flags_need_allow_build(project: Path, tmp_path: Path) -> None:
    policy = Policy.defaults("http", project)
    base = str(project)
    with pytest.raises(PolicyError, match=r"python '/bin/sh' .* needs allow_build"):
        policy.check_runtime({"python": "/bin/sh"}, (), base)
    with pytest.raises(PolicyError, match=r"node '/usr/bin/node' .* needs allow_build"):
        policy.check_runtime({"node": "/usr/bin/node"}, (), base)
    for flag in ("--require", "-r", "--import=data:text/javascript,1", "-e", "--eval", "-XX:OnError=id",
                 "-javaagent:/tmp/a.jar", "-agentpath:/tmp/a.so", "-Djava.library.path=/tmp", "--inspect",
                 "-Xbootclasspath/a:/tmp", "--experimental-loader=./x.mjs"):
        with pytest.raises(PolicyError, match=r"runtime_args .* needs allow_build"):
            policy.check_runtime({}, [flag, "x"], base)
    policy.check_runtime({}, ["-ea", "-Xmx512m", "-Dapp.mode=test", "--enable-source-maps",
                          "--stack-size=2000", "-cp", f"classes{os.pathsep}lib/*",
                          "--class-path=classes"], base)
    with pytest.raises(PolicyError, match=r"classpath entry \(runtime_args -cp\) .* outside the roots"):
        policy.check_runtime({}, ["-cp", str(tmp_path / "outside")], base)
    with pytest.raises(PolicyError, match=r"classpath entry \(runtime_args --class-path\) .* outside the roots"):
        policy.check_runtime({}, [f"--class-path=classes{os.pathsep}{tmp_path / 'outside'}"], base)
    policy.check_runtime({}, ["-S", "127.0.0.1:8000", "-t", "public"], base)  # PHP's document root, inside
    with pytest.raises(PolicyError, match=r"refused by the policy: document root \(runtime_args -t\) '/etc'"):
        policy.check_runtime({}, ["-S", "127.0.0.1:8000", "-t", "/etc"], base)
    Policy.defaults("stdio", project).check_runtime({"python": "/bin/sh", "node": "/bin/sh"}, ["-e", "x"], base)


@pytest.mark.parametrize(("adapter", "expression"), [
    ("lldb-dap", "`platform shell id"),
    ("lldb-dap", "  `script import os"),
    ("gdb", '$_shell("id")'),
    ("gdb", 'x + $_shell ("id")'),
    ("delve", "dlv config substitute-path"),
    (None, '$_shell("id")'),
    (None, "`shell id"),
])
def test_raw_command_escapes_in_expressions_need_allow_command(project: Path, adapter: str | None,
                                                               expression: str) -> None:
    with pytest.raises(PolicyError, match="needs allow_command"):
        Policy.defaults("http", project).check_expressions(adapter, "x", expression)
    Policy.defaults("stdio", project).check_expressions(adapter, expression)


def test_ordinary_expressions_pass_and_escapes_are_per_debugger(project: Path) -> None:
    policy = Policy.defaults("http", project)
    policy.check_expressions("gdb", "a + b", "sizeof(int)", "$rip", "$_exitcode", None)
    policy.check_expressions("lldb-dap", "s.field", "*p", "a ? b : c")
    policy.check_expressions("debugpy", "$_shell", "`x`")  # not debugger escapes in Python
    policy.check_expressions("node", "$_shell('x')")


def test_attach_needs_the_switch_and_the_same_user(project: Path) -> None:
    with pytest.raises(PolicyError, match="debug_attach to pid 1 needs allow_attach"):
        load(project, ["--no-allow-attach"]).check_attach(1)
    policy = Policy.defaults("http", project)
    policy.check_attach(os.getpid())
    policy.check_attach(None)
    policy.check_attach(2 ** 22 + 12345)  # no such process: the attach says so


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root and setpriv")
def test_a_process_of_another_user_is_refused_whatever_the_policy() -> None:
    other = subprocess.Popen(["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "sleep", "30"])
    try:
        for _ in range(100):  # until setpriv has become the other user
            with open(f"/proc/{other.pid}/status") as handle:
                if "Uid:\t65534" in handle.read():
                    break
            subprocess.run(["sleep", "0.05"], check=True)
        with pytest.raises(PolicyError, match=f"process {other.pid} belongs to user 65534"):
            Policy().check_attach(other.pid)
    finally:
        other.kill()
        other.wait()


# -- the launch as a whole (what launching checks before anything runs) -------------------------------------

def test_check_launch_applies_every_rule_before_anything_runs(project: Path, tmp_path: Path) -> None:
    policy = Policy.defaults("http", project)
    app = str(project / "src" / "app.py")
    launching.check_launch(policy, LaunchRequest(program=app, env={"DEBUG": "1"}))
    launching.check_launch(policy, LaunchRequest(program="app.py", cwd=str(project / "src")))
    refused = {
        "program": LaunchRequest(program="/etc/passwd"),
        "../": LaunchRequest(program="../outside/secret.py", cwd=str(project)),
        "cwd": LaunchRequest(program="secret.py", cwd=str(tmp_path / "outside")),
        "core": LaunchRequest(program=app, core=str(tmp_path / "outside" / "secret.py")),
        "breakpoint": LaunchRequest(program=app, breakpoints=[BreakpointRequest("/etc/passwd", 1)]),
        "build": LaunchRequest(program=app, build="touch pwned"),
        "python": LaunchRequest(program=app, runtimes={"python": "/bin/sh"}),
        "node": LaunchRequest(program=app, runtimes={"node": "/bin/sh"}),
        "runtime_args": LaunchRequest(program=app, runtime_args=("--require", "/tmp/x.js")),
        "env": LaunchRequest(program=app, env={"LD_PRELOAD": "/tmp/x.so"}),
    }
    for name, request in refused.items():
        with pytest.raises(PolicyError, match="refused by the policy"):
            launching.check_launch(policy, request)
            pytest.fail(f"{name} was not refused")
        launching.check_launch(Policy(), request)  # stdio: all allowed
    with pytest.raises(PolicyError, match=r"cwd .* outside the roots"):
        launching.check_launch(policy, refused["cwd"])
    launching.check_launch(policy, LaunchRequest(module="app", cwd=str(project / "src")))
    if not os.getcwd().startswith(str(tmp_path)):  # python -m without cwd runs where the server does
        with pytest.raises(PolicyError, match="the directory python -m runs in"):
            launching.check_launch(policy, LaunchRequest(module="app"))


def test_check_breakpoint_refuses_before_reading(project: Path) -> None:
    policy = Policy.defaults("http", project)
    with pytest.raises(PolicyError, match="breakpoint file '/etc/passwd' is outside the roots"):
        launching.check_breakpoint(BreakpointRequest("/etc/passwd", 1), policy=policy)
    with pytest.raises(PolicyError, match="needs allow_command"):
        launching.check_breakpoint(BreakpointRequest(str(project / "src" / "app.py"), 1, '$_shell("id")'),
                                   policy=policy)
    assert launching.check_breakpoint(BreakpointRequest("/etc/passwd", 1)).file == "/etc/passwd"


def test_paths_and_hosts_that_would_break_a_debugger_command_line_are_refused() -> None:
    for value in ("/tmp/core\n-interpreter-exec console \"shell id\"", "a\rb", "a\0b"):
        with pytest.raises(UsageError, match="NUL byte or a line break"):
            launching.check_launch(Policy(), LaunchRequest(program=value))
    for host in ("127.0.0.1:1\n-interpreter-exec console \"shell id\"", "host name", "a;b", ""):
        with pytest.raises(UsageError, match="is not a host name or an address"):
            launching.check_host(host)
    for host in ("127.0.0.1", "::1", "[::1]", "build-box.local", "fe80::1%eth0"):
        launching.check_host(host)


# -- the command line ---------------------------------------------------------------------------------------

def test_serve_refuses_to_start_with_a_bad_config(tmp_path: Path) -> None:
    (tmp_path / "polydbg.toml").write_text("allow_everything = true\n")
    done = subprocess.run([sys.executable, "-m", "polydbg", "serve"], cwd=tmp_path, capture_output=True, text=True,
                          stdin=subprocess.DEVNULL, timeout=60,
                          env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "none")})
    assert done.returncode == 2
    assert "unknown setting 'allow_everything'" in done.stderr
    (tmp_path / "polydbg.toml").unlink()
    done = subprocess.run([sys.executable, "-m", "polydbg", "serve", "--root", "missing"], cwd=tmp_path,
                          capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=60,
                          env={**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "none")})
    assert done.returncode == 2 and "root 'missing' is not a directory" in done.stderr
