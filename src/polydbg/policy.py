"""The security policy: what an agent may make polydbg do, decided in one place.

A debugger runs programs and evaluates code as the user; the policy narrows the routes that go beyond
debugging the project's own programs (see SECURITY.md for what it can and cannot limit):

``roots``               directories that programs, ``cwd``, core files, breakpoint files, run-to and trace
                        locations and ``debug_source`` reads must lie in, compared as real paths (``..`` and
                        symlinks cannot escape); ``None``: unrestricted
``allow_build``         commands the agent names: ``build`` (a shell command), the ``python`` / ``node``
                        executables, and ``runtime_args`` beyond a short list of harmless flags
``allow_command``       raw debugger commands: ``debug_command``, and the escapes to them inside expressions
                        (lldb's `` ` ``, gdb's ``$_shell(…)``, delve's ``dlv …``)
``allow_attach``        ``debug_attach`` (a pid, or a debug server at host:port); a pid must belong to the
                        server's own user in any case
``allow_memory_write``  ``debug_memory(write=…)``
``allow_env``           ``env`` setting variables that make the loader, a runtime or a build run other code
                        (``LD_PRELOAD``, ``PYTHONSTARTUP``, ``NODE_OPTIONS``, ``JAVA_TOOL_OPTIONS``, ``GOFLAGS``
                        …); ordinary variables are always allowed
``allow_secrets``       values that look like secrets (by their names or their form) shown as they are; off, every
                        answer shows them as ``<redacted …>`` (``session/secrets.py``); off on both transports
``record_limit``        not a permission but a bound, set the same ways: the instructions a recording for
                        running backwards keeps (gdb's ``record full``; the oldest are dropped), so its memory stays
                        bounded; default ``timecontrol.DEFAULT_RECORD_LIMIT``

Defaults: over stdio everything is allowed but secrets (redacted on both transports) and roots are
unrestricted (the one client started the server as the user); over HTTP roots are the directory the server
started in, build, raw commands and injection-prone variables are refused. Settings come from, highest
first: ``polydbg serve`` flags, ``POLYDBG_*`` environment variables, ``polydbg.toml`` in the start directory,
the user's ``$XDG_CONFIG_HOME/polydbg/polydbg.toml``, the transport's defaults. A refusal (``PolicyError``) names the
setting, where its value came from, and how to change it.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from polydbg.backends import registry
from polydbg.backends.timecontrol import DEFAULT_RECORD_LIMIT
from polydbg.errors import PolicyError, echo

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]

Transport = Literal["stdio", "http"]
SWITCHES = ("allow_build", "allow_command", "allow_attach", "allow_memory_write", "allow_env", "allow_secrets")
KEYS = ("roots", *SWITCHES, "record_limit")
CONFIG_NAME = "polydbg.toml"

_DEFAULTS: dict[str, dict[str, bool]] = {
    "stdio": {**dict.fromkeys(SWITCHES, True), "allow_secrets": False},
    "http": {"allow_build": False, "allow_command": False, "allow_attach": True, "allow_memory_write": True,
             "allow_env": False, "allow_secrets": False},
}

# The origins of roots --root gave: with the start directory (see _from_flags), or without it.
ROOT_FLAG_ORIGIN = "--root, with the directory polydbg was started in; --no-default-root leaves that out"
ROOT_FLAG_ALONE_ORIGIN = "--root with --no-default-root: without the directory polydbg was started in"

# What each switch lets the agent do, for --help and `polydbg doctor`.
MEANING = {
    "roots": "directories programs, cwd, core files, breakpoint files and source reads must lie in",
    "allow_build": "shell commands before launch (build) and the runtime command line "
                   f"({', '.join(registry.runtime_arguments())}, runtime_args)",
    "allow_command": f"raw debugger commands (debug_command; {', '.join(registry.command_escape_names())} in "
                     "expressions)",
    "allow_attach": "attach to a process (own user only) or a debug server",
    "allow_memory_write": "debug_memory write",
    "allow_env": "env variables that inject code (LD_PRELOAD, PYTHONSTARTUP, NODE_OPTIONS, …)",
    "allow_secrets": "show values that look like secrets (passwords, tokens, keys) instead of <redacted …>",
    "record_limit": f"instructions a recording keeps to run backwards (default {DEFAULT_RECORD_LIMIT:,}, "
                    "about 30 bytes or more each; the oldest are dropped)",
}

# -- the variables allow_env guards (beyond those each backend's runtime reads: BackendInfo.injecting_env) -----

_INJECTING_PREFIXES = ("LD_", "DYLD_", "GIT_", "LUA_")
_INJECTING_NAMES = frozenset({
    # shells (gdb starts programs through one) and the C library
    "PATH", "SHELL", "BASH_ENV", "ENV", "IFS", "GCONV_PATH", "LOCPATH", "HOSTALIASES", "NLSPATH",
    # other interpreters a program may start
    "PERL5OPT", "PERL5LIB", "PERLLIB", "PERL5DB", "RUBYOPT", "RUBYLIB",
})


def injecting_variable(name: str) -> bool:
    """Whether setting ``name`` can make the loader, a runtime, a shell or a build run code from elsewhere."""
    upper = name.upper()
    return upper in _INJECTING_NAMES or upper.startswith(_INJECTING_PREFIXES) or registry.injecting_env(upper)


class PolicyConfigError(ValueError):
    """A bad flag, environment variable or config file: polydbg does not start."""


@dataclass(frozen=True)
class Policy:
    """What the agent may do (see the module's docstring); ``origins`` says where each setting came from."""

    transport: Transport = "stdio"
    roots: tuple[str, ...] | None = None
    allow_build: bool = True
    allow_command: bool = True
    allow_attach: bool = True
    allow_memory_write: bool = True
    allow_env: bool = True
    allow_secrets: bool = False
    record_limit: int = DEFAULT_RECORD_LIMIT
    origins: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    # -- construction ---------------------------------------------------------------------------------

    @classmethod
    def defaults(cls, transport: Transport, start_dir: str | os.PathLike[str]) -> Policy:
        """The transport's defaults: stdio allows everything; HTTP confines paths to ``start_dir`` and refuses
        build commands, raw debugger commands and injection-prone environment variables."""
        if transport not in _DEFAULTS:
            raise PolicyConfigError(f"unknown transport {transport!r}; pass 'stdio' or 'http'")
        origin = f"the {'HTTP' if transport == 'http' else 'stdio'} default"
        roots = (os.path.realpath(start_dir),) if transport == "http" else None
        origins = dict.fromkeys(KEYS, origin)
        if roots is not None:
            origins["roots"] = f"{origin}: the directory polydbg was started in"
        origins["record_limit"] = "the default"
        return cls(transport=transport, roots=roots, origins=origins, **_DEFAULTS[transport])

    @classmethod
    def load(cls, transport: Transport, start_dir: str | os.PathLike[str],
             flags: argparse.Namespace | Mapping[str, Any] | None = None,
             environ: Mapping[str, str] | None = None, user_config: str | None = None) -> Policy:
        """The policy from, highest first: ``flags`` (``add_arguments``' options), ``environ`` (default
        ``os.environ``: ``POLYDBG_ROOTS``, ``POLYDBG_ALLOW_BUILD`` …), ``polydbg.toml`` in ``start_dir``, the
        user's config file (default ``$XDG_CONFIG_HOME/polydbg/polydbg.toml``), the transport's defaults.
        Raises ``PolicyConfigError`` for an unknown key, a bad value or a root that is not a directory."""
        start = os.path.realpath(start_dir)
        environ = os.environ if environ is None else environ
        layers = [
            _from_flags(flags, start),
            _from_environ(environ, start),
            _from_file(os.path.join(start, CONFIG_NAME), transport),
            _from_file(user_config or user_config_path(environ), transport),
        ]
        base = cls.defaults(transport, start)
        values: dict[str, Any] = {key: getattr(base, key) for key in KEYS}
        origins = dict(base.origins)
        for key in KEYS:
            for layer in layers:
                if key in layer:
                    values[key], origins[key] = layer[key]
                    break
        return cls(transport=transport, origins=origins, **values)

    # -- checks ---------------------------------------------------------------------------------------

    def require(self, setting: str, what: str) -> None:
        """Refuse ``what`` unless the switch ``setting`` is on."""
        if not getattr(self, setting):
            raise PolicyError(self.refusal(setting, what))

    def refusal(self, setting: str, what: str) -> str:
        return (f"refused by the policy: {what} needs {setting}, which is off ({self.origins.get(setting, 'default')})"
                f"; to allow it, {self._how_to_allow(setting)}")

    def check_path(self, path: str, what: str) -> None:
        """Refuse ``path`` (absolute) unless its real path lies in a root. Checked before the path is read, so
        a refusal does not say whether it exists."""
        if self.roots is None:
            return
        real = os.path.realpath(path)
        if any(_within(real, root) for root in self.roots):
            return
        raise PolicyError(
            f"refused by the policy: {what} {echo(path)} is outside the roots ({', '.join(self.roots)}; "
            f"{self.origins.get('roots', 'default')}); paths are compared after following symlinks and '..'. Pass "
            f"a path inside them, or widen roots: {self._how_to_widen()}")

    def check_paths(self, paths: Iterable[str], what: str) -> None:
        for path in paths:
            self.check_path(path, what)

    def check_expressions(self, adapter: str | None, *texts: str | None) -> None:
        """Refuse an expression that escapes to a raw debugger command unless ``allow_command`` is on; with
        ``adapter`` None (no session yet), every debugger's escapes are refused."""
        if self.allow_command:
            return
        escapes = registry.command_escapes(adapter)
        for text in texts:
            if not text:
                continue
            for pattern, why in escapes:
                if pattern.search(text):
                    raise PolicyError(self.refusal("allow_command", f"{echo(text)} {why}: it"))

    def check_command(self, adapter: str | None, text: str) -> None:
        """``debug_command`` needs ``allow_command``, unless ``text`` is a query ``adapter``'s backend declares
        read-only (``BackendInfo.read_only_commands``); with ``adapter`` None (no session to ask), any backend's."""
        if self.allow_command or registry.read_only_command(adapter, text):
            return
        queries = registry.read_only_commands(adapter)
        allowed = "; ".join(f"{name}: {', '.join(words)}" for name, words in queries.items())
        allowed = f"; the read-only queries are allowed: {allowed}" if allowed else ""
        raise PolicyError(self.refusal(
            "allow_command", f"debug_command {echo(text)} (a raw {adapter or 'debugger'} command{allowed})"))

    def check_env(self, env: Mapping[str, str] | None) -> None:
        if self.allow_env or not env:
            return
        bad = sorted(name for name in env if injecting_variable(name))
        if bad:
            raise PolicyError(self.refusal(
                "allow_env", f"env {', '.join(bad)} (variables that make the loader, a runtime or a build load "
                "other code; ordinary variables are allowed)"))

    def check_runtime(self, runtimes: Mapping[str, str], runtime_args: Iterable[str], base: str) -> None:
        """``runtimes`` (debug_launch's ``python``, ``node``: argument → executable) name commands to run, so
        need ``allow_build``; so do ``runtime_args`` beyond the flags the backends call harmless (assertions,
        heap and stack sizes, a classpath inside the roots, …). ``base`` resolves relative path entries."""
        for argument, executable in runtimes.items():
            self.require("allow_build", f"{argument} {echo(executable)} (an executable the agent names)")
        if self.allow_build:
            return
        path_flags = registry.runtime_path_flags()
        args = list(runtime_args)
        index = 0
        while index < len(args):
            arg = args[index]
            name, eq, value = arg.partition("=")
            if arg in path_flags or (eq and name in path_flags):
                flag = arg if arg in path_flags else name
                if not eq:
                    index += 1
                    value = args[index] if index < len(args) else ""
                for entry in value.split(os.pathsep):
                    if entry:
                        entry = entry[:-1] if entry.endswith("*") else entry
                        self.check_path(os.path.normpath(os.path.join(base, entry)),
                                        f"{path_flags[flag]} (runtime_args {flag})")
            elif not registry.harmless_runtime_flag(arg):
                raise PolicyError(self.refusal(
                    "allow_build", f"runtime_args {echo(arg)} (a runtime flag that may run other code; harmless "
                    "ones such as -ea, -Xmx…, -Dname=…, -cp inside the roots, --enable-source-maps are allowed)"))
            index += 1

    def check_attach(self, pid: int | None) -> None:
        """``debug_attach`` needs ``allow_attach``; a pid must belong to the server's own user in any case."""
        self.require("allow_attach", "debug_attach" + (f" to pid {pid}" if pid is not None else ""))
        if pid is not None:
            check_same_user(pid)

    # -- describing ----------------------------------------------------------------------------------

    def describe(self) -> str:
        """The settings, one a line, each with where it came from."""
        lines = [f"policy ({self.transport}):"]
        roots = ", ".join(self.roots) if self.roots is not None else "unrestricted"
        lines.append(f"  roots: {roots} ({self.origins.get('roots', 'default')})")
        for key in SWITCHES:
            lines.append(f"  {key}: {'on' if getattr(self, key) else 'off'} ({self.origins.get(key, 'default')})")
        origin = self.origins.get("record_limit", "default")
        lines.append(f"  record_limit: {self.record_limit:,} instructions ({origin})")
        return "\n".join(lines)

    def _how_to_allow(self, setting: str) -> str:
        flag = "--" + setting.replace("_", "-")
        env = "POLYDBG_" + setting.upper()
        origin = self.origins.get(setting, "")
        if origin.startswith("--"):
            return f"start polydbg with {flag} instead of {origin}"
        if origin.startswith("POLYDBG_"):
            return f"set {env}=1 or start polydbg with {flag}"
        where = origin.split(" [")[0] if CONFIG_NAME in origin else CONFIG_NAME
        return f"start polydbg with {flag}, set {env}=1, or set {setting} = true in {where}"

    def _how_to_widen(self) -> str:
        origin = self.origins.get("roots", "")
        if origin == ROOT_FLAG_ALONE_ORIGIN:
            return "start polydbg with another --root DIR, or without --no-default-root for the directory it starts in"
        if origin.startswith("--"):
            return "start polydbg with another --root DIR"
        if origin.startswith("POLYDBG_"):
            return "add the directory to POLYDBG_ROOTS or start polydbg with --root DIR"
        return (f"start polydbg with --root DIR (added to the directory it starts in), list every root in "
                f"POLYDBG_ROOTS, or add the directory to roots in {CONFIG_NAME}")


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def check_same_user(pid: int) -> None:
    """Refuse a process whose real, effective, saved or filesystem uid is not the server's own (a process
    that does not exist is left to the attach, which says so)."""
    try:
        with open(f"/proc/{int(pid)}/status", encoding="utf-8") as handle:
            status = handle.read()
    except FileNotFoundError:
        return
    except OSError as exc:
        raise PolicyError(f"refused: cannot read the owner of process {pid} ({exc.strerror}); polydbg attaches "
                          "only to processes of its own user") from exc
    match = re.search(r"^Uid:\s+(\d+)\s+(\d+)\s+(\d+)\s+(\d+)", status, re.MULTILINE)
    me = os.geteuid()
    uids = {int(u) for u in match.groups()} if match else set()
    if uids != {me}:
        owner = ", ".join(str(u) for u in sorted(uids)) or "unknown"
        raise PolicyError(f"refused: process {pid} belongs to user {owner}, not to polydbg's user ({me}); polydbg "
                          "attaches only to processes of its own user, whatever the policy says")


# -- sources ------------------------------------------------------------------------------------------------

Layer = dict[str, tuple[Any, str]]  # setting → (value, where it came from)


def user_config_path(environ: Mapping[str, str] | None = None) -> str:
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(base, "polydbg", CONFIG_NAME)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The policy's options on ``polydbg serve`` (read back by ``Policy.load(…, flags=args)``)."""
    group = parser.add_argument_group(
        "security policy", f"flags override POLYDBG_* variables, which override {CONFIG_NAME} (see SECURITY.md)")
    group.add_argument("--root", action="append", dest="roots", metavar="DIR",
                       help=MEANING["roots"] + " (repeatable; added to the directory polydbg starts in, unless "
                            "--no-default-root; default: anywhere over stdio, the start directory over HTTP)")
    group.add_argument("--no-default-root", action="store_true", dest="no_default_root",
                       help="the roots are the --root directories alone, without the directory polydbg starts in")
    for key in SWITCHES:
        group.add_argument("--" + key.replace("_", "-"), dest=key, action=argparse.BooleanOptionalAction,
                           default=None, help=MEANING[key])
    group.add_argument("--record-limit", dest="record_limit", type=int, metavar="N", default=None,
                       help=MEANING["record_limit"])


def _from_flags(flags: argparse.Namespace | Mapping[str, Any] | None, start: str) -> Layer:
    if flags is None:
        return {}
    given = vars(flags) if isinstance(flags, argparse.Namespace) else dict(flags)
    layer: Layer = {}
    roots = given.get("roots")
    alone = bool(given.get("no_default_root"))
    if alone and not roots:
        raise PolicyConfigError("--no-default-root leaves the start directory out of the roots --root gives; pass "
                                "--root DIR too (or leave --no-default-root out)")
    if roots:  # the start directory (the project, the HTTP default's root) stays a root unless left out
        listed = _roots(roots if alone else [start, *roots], start, "--root")
        layer["roots"] = (listed, ROOT_FLAG_ALONE_ORIGIN if alone else ROOT_FLAG_ORIGIN)
    for key in SWITCHES:
        value = given.get(key)
        if value is not None:
            layer[key] = (bool(value), "--" + ("" if value else "no-") + key.replace("_", "-"))
    if given.get("record_limit") is not None:
        layer["record_limit"] = (record_limit(given["record_limit"], "--record-limit"), "--record-limit")
    return layer


def record_limit(value: object, where: str) -> int:
    """A record limit as given (a flag, a variable's text, a file's number): a whole number of instructions ≥ 1."""
    try:
        number = int(str(value).replace("_", "")) if not isinstance(value, bool) else 0
    except ValueError:
        number = 0
    if number < 1:
        raise PolicyConfigError(f"{where}: record_limit must be a whole number of instructions, at least 1 (e.g. "
                                f"{DEFAULT_RECORD_LIMIT}), not {value!r}")
    return number


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def _from_environ(environ: Mapping[str, str], start: str) -> Layer:
    layer: Layer = {}
    roots = environ.get("POLYDBG_ROOTS")
    if roots:
        layer["roots"] = (_roots([r for r in roots.split(os.pathsep) if r], start, "POLYDBG_ROOTS"), "POLYDBG_ROOTS")
    for key in SWITCHES:
        name = "POLYDBG_" + key.upper()
        text = environ.get(name)
        if text is None or not text.strip():
            continue
        word = text.strip().lower()
        if word not in _TRUE | _FALSE:
            raise PolicyConfigError(f"{name}={text!r} is not a boolean; set it to 1 or 0 (true/false, yes/no, on/off)")
        layer[key] = (word in _TRUE, name)
    limit = environ.get("POLYDBG_RECORD_LIMIT")
    if limit is not None and limit.strip():
        layer["record_limit"] = (record_limit(limit.strip(), "POLYDBG_RECORD_LIMIT"), "POLYDBG_RECORD_LIMIT")
    return layer


def _from_file(path: str, transport: Transport) -> Layer:
    """A ``polydbg.toml``: top-level settings for every transport, a ``[stdio]`` or ``[http]`` table overriding
    them for one. Roots are relative to the file's directory."""
    try:
        with open(path, "rb") as handle:
            data = tomllib.load(handle)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise PolicyConfigError(f"{path}: cannot read it: {exc}") from exc
    layers: dict[str, Layer] = {}
    for section in ("", "stdio", "http"):  # every table is checked, whichever transport starts
        table = data if not section else data.get(section, {})
        where = path if not section else f"{path} [{section}]"
        if not isinstance(table, dict):
            raise PolicyConfigError(f"{path}: [{section}] must be a table of settings")
        layer = layers[section] = {}
        for key, value in table.items():
            if not section and key in ("stdio", "http"):
                continue
            if key not in KEYS:
                raise PolicyConfigError(f"{where}: unknown setting {key!r}; the settings are {', '.join(KEYS)} "
                                        "(and the tables [stdio] and [http])")
            if key == "roots":
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    raise PolicyConfigError(f"{where}: roots must be a list of directories, e.g. roots = [\".\"]")
                layer[key] = (_roots(value, os.path.dirname(os.path.abspath(path)), where), where)
            elif key == "record_limit":
                layer[key] = (record_limit(value, where), where)
            elif not isinstance(value, bool):
                raise PolicyConfigError(f"{where}: {key} must be true or false, not {value!r}")
            else:
                layer[key] = (value, where)
    return {**layers[""], **layers[transport]}


def _roots(values: Iterable[str], base: str, where: str) -> tuple[str, ...]:
    out: list[str] = []
    for value in values:
        if "\0" in value:
            raise PolicyConfigError(f"{where}: root {value!r} contains a NUL byte")
        real = os.path.realpath(os.path.join(base, os.path.expanduser(value)))
        if not os.path.isdir(real):
            raise PolicyConfigError(f"{where}: root {value!r} is not a directory ({real})")
        if real not in out:
            out.append(real)
    if not out:
        raise PolicyConfigError(f"{where}: roots is empty; name at least one directory ('/' for anywhere)")
    return tuple(out)

