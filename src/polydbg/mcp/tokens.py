"""The bearer tokens ``polydbg serve --http`` accepts, and who each one says the caller is.

The server's token is ``POLYDBG_TOKEN`` or, failing that, one generated once and kept in
``$XDG_STATE_HOME/polydbg/token`` (``~/.local/state/polydbg/token``; the file 0600, its directory 0700).
Every holder of it is the client ``default``. Clients on the sessionless 2026-07-28 revision have no MCP
session to tell them apart, so agents that must not see each other's debug sessions each get a named
token (``polydbg token new NAME``), kept as ``NAME TOKEN`` lines in ``$XDG_STATE_HOME/polydbg/clients``
(0600): its holder is the client ``NAME``, with its own sessions and limits. The server looks at that
file's identity (one ``stat``) per request and reads it again when it changed, so a new token works and
a revoked one stops working at once, without a restart. A file anyone else could read or write is not
trusted: its tokens stop working, and the log says why.

Tokens are compared in constant time (``hmac.compare_digest``), each one, whichever matches.
"""

from __future__ import annotations

import hmac
import logging
import os
import re
import secrets
import shlex
import stat
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from mcp.server.auth.provider import AccessToken

log = logging.getLogger(__name__)

TOKEN_ENV = "POLYDBG_TOKEN"
MIN_TOKEN_CHARS = 16
DEFAULT_CLIENT = "default"  # who holds the server's own token
CLIENTS_FILE = "clients"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}")


class StartupError(Exception):
    """Why the server (or a token command) will not go on, said to the user (exit status 2)."""


@dataclass(frozen=True)
class Token:
    value: str = field(repr=False)
    where: str  # "POLYDBG_TOKEN" or the file's path
    shell: str  # how a shell reads it: "$POLYDBG_TOKEN" or "$(cat /path)"


def state_dir() -> Path:
    """``$XDG_STATE_HOME/polydbg`` (an absolute XDG_STATE_HOME only, as the spec says), else
    ``~/.local/state/polydbg``."""
    base = os.environ.get("XDG_STATE_HOME", "")
    root = Path(base) if os.path.isabs(base) else Path.home() / ".local" / "state"
    return root / "polydbg"


def _private_dir(path: Path) -> None:
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    info = path.lstat()
    if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
        raise StartupError(f"{path} is not a directory of yours; remove it, or set {TOKEN_ENV}")
    if stat.S_IMODE(info.st_mode) & 0o077:
        os.chmod(path, 0o700)


def _checked(token: str, where: str) -> str:
    token = token.strip()
    if len(token) < MIN_TOKEN_CHARS or any(c.isspace() for c in token) or not token.isprintable():
        raise StartupError(f"the token in {where} must be at least {MIN_TOKEN_CHARS} printable characters without "
                           "spaces (python -c 'import secrets; print(secrets.token_urlsafe(32))' makes one)")
    return token


def _read_private(path: Path) -> str:
    """A file of this user's that nobody else can read, never through a symlink."""
    fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            raise StartupError(f"{path} is not a regular file of yours; remove it and start again for a new token")
        if stat.S_IMODE(info.st_mode) & 0o077:
            raise StartupError(f"{path} can be read by others (mode {stat.S_IMODE(info.st_mode):04o}); the token may "
                               "have leaked: remove the file and start again for a new one")
        with os.fdopen(os.dup(fd), "r", encoding="utf-8") as file:
            return file.read()
    finally:
        os.close(fd)


def load_token(environ: dict[str, str] | None = None) -> Token:
    """``POLYDBG_TOKEN``, else the token file, made (0600, in a 0700 directory) the first time."""
    env = os.environ if environ is None else environ
    if env.get(TOKEN_ENV):
        return Token(_checked(env[TOKEN_ENV], TOKEN_ENV), TOKEN_ENV, f"${TOKEN_ENV}")
    directory = state_dir()
    _private_dir(directory)
    path = directory / "token"
    shell = f"$(cat {shlex.quote(str(path))})"
    try:
        return Token(_checked(_read_private(path), str(path)), str(path), shell)
    except FileNotFoundError:
        pass
    token = secrets.token_urlsafe(32)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
    except FileExistsError:  # another server made it meanwhile
        return Token(_checked(_read_private(path), str(path)), str(path), shell)
    with os.fdopen(fd, "w", encoding="utf-8") as file:
        file.write(token + "\n")
    return Token(token, str(path), shell)


# -- named client tokens -----------------------------------------------------------------------------------


def check_name(name: str) -> str:
    if not _NAME.fullmatch(name) or name == DEFAULT_CLIENT:
        raise StartupError(f"{name!r} cannot name a client: use 1-64 letters, digits, '.', '_' or '-' "
                           f"(starting with a letter or digit), and not {DEFAULT_CLIENT!r} (the server's own token)")
    return name


def _parse(text: str, where: Path) -> dict[str, str]:
    tokens: dict[str, str] = {}
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2:
            raise StartupError(f"{where}:{number}: expected 'NAME TOKEN'; fix or remove the line")
        name, token = parts
        tokens[check_name(name)] = _checked(token, f"{where}:{number}")
    return tokens


class ClientTokens:
    """The named tokens file, read again whenever it changes (new and revoked tokens apply at once)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path if path is not None else state_dir() / CLIENTS_FILE
        self._seen: tuple[int, int, int, int] | None = None
        self._tokens: dict[str, str] = {}

    def current(self) -> dict[str, str]:
        """Name → token; empty when there is no file, or when it cannot be trusted (logged)."""
        try:
            info = os.stat(self.path, follow_symlinks=False)
        except FileNotFoundError:
            self._seen, self._tokens = None, {}
            return self._tokens
        identity = (info.st_ino, info.st_mtime_ns, info.st_size, info.st_mode)
        if identity != self._seen:
            self._seen = identity
            try:
                self._tokens = self._read()
            except (OSError, StartupError) as exc:
                log.error("named client tokens not accepted: %s", exc)
                self._tokens = {}
        return self._tokens

    def _write(self, tokens: dict[str, str]) -> None:
        _private_dir(self.path.parent)
        fd, temp = tempfile.mkstemp(dir=self.path.parent, prefix=".clients.")  # 0600
        with os.fdopen(fd, "w", encoding="utf-8") as file:
            file.write("# polydbg's named client tokens: NAME TOKEN (polydbg token new/list/revoke)\n")
            file.writelines(f"{name} {token}\n" for name, token in sorted(tokens.items()))
        os.replace(temp, self.path)

    def _read(self) -> dict[str, str]:
        try:
            text = _read_private(self.path)
        except FileNotFoundError:
            return {}
        return _parse(text, self.path)

    def new(self, name: str) -> str:
        tokens = self._read()
        if check_name(name) in tokens:
            raise StartupError(f"client {name!r} has a token already; 'polydbg token revoke {name}' first to replace "
                               "it")
        tokens[name] = secrets.token_urlsafe(32)
        self._write(tokens)
        return tokens[name]

    def revoke(self, name: str) -> None:
        tokens = self._read()
        if name not in tokens:
            known = ", ".join(sorted(tokens)) or "none"
            raise StartupError(f"no client named {name!r} (named clients: {known})")
        del tokens[name]
        self._write(tokens)

    def names(self) -> list[str]:
        return sorted(self._read())


class TokenVerifier:
    """The SDK's ``TokenVerifier``: the server's token (client ``default``) or a named client's."""

    def __init__(self, token: str, clients: ClientTokens | None = None) -> None:
        self._token = token
        self._clients = clients

    async def verify_token(self, token: str) -> AccessToken | None:
        offered = token.encode()
        candidates = [(DEFAULT_CLIENT, self._token)]
        if self._clients is not None:
            candidates += self._clients.current().items()
        found = None
        for name, expected in candidates:  # every one compared: the time says nothing about which matched
            if hmac.compare_digest(offered, expected.encode()) and found is None:
                found = name
        return AccessToken(token=token, client_id=found, scopes=[]) if found is not None else None
