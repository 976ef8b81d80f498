"""``polydbg serve --http``'s start-up decisions: the token and its file, the host checks, the allow-lists."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from polydbg import cli
from polydbg.mcp import http, tokens
from polydbg.mcp.http import HttpOptions
from polydbg.mcp.tokens import StartupError, Token


@pytest.fixture
def state_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    return tmp_path


def test_the_cli_defaults_are_the_server_s() -> None:
    assert (cli.DEFAULT_HOST, cli.DEFAULT_PORT) == (http.DEFAULT_HOST, http.DEFAULT_PORT)


@pytest.mark.parametrize(("host", "loopback"), [("127.0.0.1", True), ("127.9.9.9", True), ("localhost", True),
                                                ("::1", True), ("[::1]", True), ("0.0.0.0", False), ("::", False),
                                                ("192.168.1.5", False), ("example.com", False)])
def test_loopback(host: str, loopback: bool) -> None:
    assert http.is_loopback(host) is loopback


def test_only_loopback_unless_allowed_and_never_without_a_token() -> None:
    http.check_options(HttpOptions())
    http.check_options(HttpOptions(no_auth=True))
    http.check_options(HttpOptions(host="0.0.0.0", allow_remote=True))
    with pytest.raises(StartupError, match="--allow-remote"):
        http.check_options(HttpOptions(host="0.0.0.0"))
    with pytest.raises(StartupError, match=r"--no-auth .* only allowed on loopback"):
        http.check_options(HttpOptions(host="10.0.0.1", no_auth=True, allow_remote=True))
    with pytest.raises(StartupError, match="--no-auth and --allow-remote"):
        http.check_options(HttpOptions(no_auth=True, allow_remote=True))


def test_the_token_comes_from_the_environment_first(state_home: Path) -> None:
    token = tokens.load_token({"POLYDBG_TOKEN": "  from-the-environment-123  "})
    assert (token.value, token.where, token.shell) == ("from-the-environment-123", "POLYDBG_TOKEN", "$POLYDBG_TOKEN")
    assert "from-the" not in repr(token)
    assert not (state_home / "polydbg").exists()
    with pytest.raises(StartupError, match="at least 16"):
        tokens.load_token({"POLYDBG_TOKEN": "short"})


def test_a_token_is_generated_once_into_a_private_file(state_home: Path) -> None:
    first = tokens.load_token({})
    path = state_home / "polydbg" / "token"
    assert first.where == str(path) and first.shell == f"$(cat {path})"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert len(first.value) >= 40 and path.read_text().strip() == first.value
    assert tokens.load_token({}).value == first.value  # kept, not regenerated


def test_a_token_file_others_can_read_is_refused(state_home: Path) -> None:
    tokens.load_token({})
    path = state_home / "polydbg" / "token"
    path.chmod(0o640)
    with pytest.raises(StartupError, match="can be read by others"):
        tokens.load_token({})
    path.unlink()
    os.symlink("/etc/hostname", path)
    with pytest.raises(OSError):  # never followed
        tokens.load_token({})


def test_a_relative_xdg_state_home_is_ignored(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", "relative/dir")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert tokens.state_dir() == tmp_path / ".local" / "state" / "polydbg"


async def test_the_verifier_accepts_only_the_token() -> None:
    verifier = tokens.TokenVerifier("the-right-token-1234")
    accepted = await verifier.verify_token("the-right-token-1234")
    assert accepted is not None and accepted.client_id == tokens.DEFAULT_CLIENT
    for wrong in ("the-right-token-123", "the-right-token-12345", "", "thé-right-token-1234"):
        assert await verifier.verify_token(wrong) is None


async def test_named_clients_are_told_apart_and_revoked_at_once(state_home: Path) -> None:
    store = tokens.ClientTokens()
    verifier = tokens.TokenVerifier("the-server-token-1234", tokens.ClientTokens())  # a server's own view
    assert await verifier.verify_token("x" * 43) is None
    codex, claude = store.new("codex"), store.new("claude-code")
    path = state_home / "polydbg" / "clients"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600 and store.names() == ["claude-code", "codex"]
    assert (await verifier.verify_token(codex)).client_id == "codex"  # type: ignore[union-attr]
    assert (await verifier.verify_token(claude)).client_id == "claude-code"  # type: ignore[union-attr]
    assert (await verifier.verify_token("the-server-token-1234")).client_id == "default"  # type: ignore[union-attr]
    with pytest.raises(StartupError, match="has a token already"):
        store.new("codex")
    store.revoke("codex")  # the running server's verifier sees it on the next request
    assert await verifier.verify_token(codex) is None
    assert await verifier.verify_token(claude) is not None
    with pytest.raises(StartupError, match=r"no client named 'codex' \(named clients: claude-code\)"):
        store.revoke("codex")
    for bad in ("default", "", "a b", "-x", "x" * 65, "../x"):
        with pytest.raises(StartupError, match="cannot name a client"):
            store.new(bad)


async def test_a_clients_file_others_can_read_is_not_trusted(state_home: Path) -> None:
    store = tokens.ClientTokens()
    token = store.new("codex")
    verifier = tokens.TokenVerifier("the-server-token-1234", tokens.ClientTokens())
    assert await verifier.verify_token(token) is not None
    (state_home / "polydbg" / "clients").chmod(0o644)
    assert await verifier.verify_token(token) is None  # fails closed
    assert await verifier.verify_token("the-server-token-1234") is not None  # the server's own still works
    (state_home / "polydbg" / "clients").chmod(0o600)
    assert await verifier.verify_token(token) is not None
    (state_home / "polydbg" / "clients").write_text("codex short\n")
    assert await verifier.verify_token("short") is None


def test_hosts_and_origins_are_the_bound_port_s_loopback_names() -> None:
    settings = http.security_settings(HttpOptions(), 8765)
    assert settings.enable_dns_rebinding_protection
    assert set(settings.allowed_hosts) == {"127.0.0.1:8765", "localhost:8765", "[::1]:8765"}
    assert set(settings.allowed_origins) == {"http://127.0.0.1:8765", "http://localhost:8765", "http://[::1]:8765"}
    more = http.security_settings(HttpOptions(allowed_hosts=("debug.example",), allowed_origins=("https://x.example",)),
                                  8765)
    assert {"debug.example", "debug.example:*"} <= set(more.allowed_hosts)
    assert "https://x.example" in more.allowed_origins
    remote = http.security_settings(HttpOptions(host="10.1.2.3", allow_remote=True), 9000)
    assert "10.1.2.3:9000" in remote.allowed_hosts


def test_the_banner_says_where_the_token_is_without_printing_it() -> None:
    token = Token("secret-secret-secret", "/home/u/.local/state/polydbg/token",
                       "$(cat /home/u/.local/state/polydbg/token)")
    text = http.banner(HttpOptions(), 8765, token)
    assert "http://127.0.0.1:8765/mcp" in text and "secret-secret" not in text
    assert ('claude mcp add --transport http polydbg http://127.0.0.1:8765/mcp '
            '--header "Authorization: Bearer $(cat /home/u/.local/state/polydbg/token)"') in text
    assert "WARNING: --no-auth" in http.banner(HttpOptions(no_auth=True), 8765, None)
    assert "http://[::1]:8765/mcp" in http.banner(HttpOptions(host="::1"), 8765, token)


def test_a_port_in_use_is_a_clear_start_up_error() -> None:
    taken = http.bind("127.0.0.1", 0)
    try:
        with pytest.raises(StartupError, match=r"cannot listen on 127\.0\.0\.1:"):
            http.bind("127.0.0.1", taken.getsockname()[1])
    finally:
        taken.close()


def test_http_flags_without_http_are_refused(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        cli.main(["serve", "--port", "9000", "--no-auth"])
    assert exited.value.code == 2
    assert "--port, --no-auth: for --http only" in capsys.readouterr().err
