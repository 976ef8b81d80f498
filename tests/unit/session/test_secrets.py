"""The redactor (``session/secrets.py``): each name rule and each value pattern, the false positives that must
stay as they are (ordinary words, hashes in test data), key-value pairs in previews and output, the models of
every answer that carries program data, and ``reveal``."""

from __future__ import annotations

import pytest

from polydbg.session.model import (
    CallTrace,
    CommandResult,
    EvaluateResult,
    ExceptionInfo,
    Output,
    OutputResult,
    State,
    StopReport,
    TraceHit,
    TraceResult,
    Var,
    VariablesResult,
)
from polydbg.session.secrets import Redactor, secret_name

SECRET_NAMES = [
    "password", "Password", "PASSWORD", "passwd", "db_passwd", "passphrase", "db_pwd", "userPass", "secret",
    "client_secret", "secrets", "token", "accessToken", "refresh_token", "X-Auth-Token", "api_key", "apiKey",
    "API_KEY", "apikey", "x-api-key", "access_key", "AWS_SECRET_ACCESS_KEY", "private_key", "privateKey",
    "secret_key", "credential", "credentials", "auth", "Authorization", "cookie", "cookies", "Set-Cookie",
    "session_id", "sessionId", "session_key", "JSESSIONID", "PHPSESSID", "password_hash", "tokenValue", "jwt",
    "self.password", "config.db.password", "os.environ['API_KEY']", 'headers["Authorization"]', "*token",
    "$password", "@secret", "'password'", "settings->password",
]
ORDINARY_NAMES = [
    "author", "authors", "authority", "authorized_users", "tokenizer", "tokens", "token_type", "token_count",
    "tokenize", "passage", "passenger", "secretary", "password_file", "password_length", "passwords_checked",
    "key", "keys", "monkey", "session", "sessions", "PWD", "pwd", "OLDPWD", "cookie_name", "auth_method",
    "len(password)", "password == 'x'", "hash", "user", "api", "access", "private", "compass", "bypass",
]


@pytest.mark.parametrize("name", SECRET_NAMES)
def test_names_that_say_secret(name: str) -> None:
    assert secret_name(name), name


@pytest.mark.parametrize("name", ORDINARY_NAMES)
def test_ordinary_names_are_not_secret(name: str) -> None:
    assert not secret_name(name), name


GHP = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
JWT = ("eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
       "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c")
# (text, the secret part that must be gone, the kind named)
PATTERNS = [
    ("-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA\n-----END RSA PRIVATE KEY-----", "MIIEowIBAAKCAQEA",
     "private key"),
    ("'-----BEGIN OPENSSH PRIVATE KEY-----\\nb3BlbnNzaC1rZXk…", "b3BlbnNzaC1rZXk", "private key"),
    ("id=AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE", "AWS key id"),
    ("ASIAY34FZKBOKMUTVV7A wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "AWS secret key"),
    (f"'{GHP}'", GHP, "GitHub token"),
    ("gho_" + "x" * 36, "gho_" + "x" * 36, "GitHub token"),
    ("github_pat_11ABCDEFG0abcdefghijkl_mnopqrstuvwxyz0123456789", "github_pat_11ABCDEFG0", "GitHub token"),
    ("glpat-abcdefghij1234567890", "glpat-abcdefghij1234567890", "GitLab token"),
    ("xoxb-1234567890-abcdefABCDEF", "xoxb-1234567890", "Slack token"),
    ("xoxp-1234567890-abcdefABCDEF", "xoxp-1234567890", "Slack token"),
    ("sk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc", "Stripe key"),
    ("rk_live_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc", "Stripe key"),
    ("sk-proj-Ab3dEfGhIjKlMnOpQrStUvWx12", "Ab3dEfGhIjKlMnOpQrStUvWx12", "OpenAI key"),
    ("sk-Ab3dEfGhIjKlMnOpQrStUvWx12yZ", "Ab3dEfGhIjKlMnOpQrStUvWx12yZ", "OpenAI key"),
    (f"token {JWT}", "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "JWT"),
    ("Authorization: Bearer abcdef1234567890abcdef", "abcdef1234567890abcdef", "credentials"),
    ("authorization: Basic dXNlcjpodW50ZXIy", "dXNlcjpodW50ZXIy", "credentials"),
    ("curl -H 'X: Bearer abcdef1234567890abcdef'", "abcdef1234567890abcdef", "bearer token"),
    ("postgres://bob:pg-url-secret@db:5432/app", "pg-url-secret", "URL password"),
    ("https://user:p%40ss@example.com/", "p%40ss", "URL password"),
]


@pytest.mark.parametrize(("text", "secret", "kind"), PATTERNS)
def test_values_that_look_like_credentials(text: str, secret: str, kind: str) -> None:
    redactor = Redactor()
    shown = redactor.text(text)
    assert secret not in shown, shown
    assert f": {kind}>" in shown, shown
    assert redactor.count >= 1


NOT_SECRETS = [
    "da39a3ee5e6b4b0d3255bfef95601890afd80709",  # a git sha
    "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",  # a sha256
    "123e4567-e89b-12d3-a456-426614174000",  # a UUID
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==",  # a PNG
    "eyJub3QiOiAiYSBqd3QifQ.eyJzdWIiOiIxIn0.abc",  # three parts, but the header has no "alg"
    "Basic usage: the author's authority, a tokenizer, a passage to the secretary",
    "author=Ada tokenizer=words token_count=3 PWD=/work/app OLDPWD=/ key=7 session=3",
    "https://example.com/a:b@c and http://host:8080/path",
    "sk-this-is-a-long-hyphenated-word-in-text",
    "password=None token='' api_key=null",  # nothing to hide
    "AKIA is a prefix; wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY alone is just base64",
    "{'user': 'bob', 'items': [1, 2, 3]}",
]


@pytest.mark.parametrize("text", NOT_SECRETS)
def test_false_positives_stay_as_they_are(text: str) -> None:
    redactor = Redactor()
    assert redactor.text(text) == text
    assert redactor.count == 0


PAIRS = [
    ("{'user': 'bob', 'password': 'hunter2'}", "{'user': 'bob', 'password': <redacted 7 chars: password>}"),
    ('{"token": "abc123"}', '{"token": <redacted 6 chars: token>}'),
    ("{password: 'hunter2', user: 'bob'}", "{password: <redacted 7 chars: password>, user: 'bob'}"),
    ("PASSWORD=s3cr3t\nHOME=/root", "PASSWORD=<redacted 6 chars: PASSWORD>\nHOME=/root"),
    ('main.Config {User: "bob", Password: "hunter2"}', 'main.Config {User: "bob", Password: <redacted 7 chars: '
                                                       'Password>}'),
    ("Vault{password='x1', user='bob'}", "Vault{password=<redacted 2 chars: password>, user='bob'}"),
    ("HashMap size=1 {\"api_key\"=\"k-123\"}", "HashMap size=1 {\"api_key\"=<redacted 5 chars: api_key>}"),
    ("{:password => \"x1\"}", "{:password => <redacted 2 chars: password>}"),
    ("args password='hunter2… ×2; returned 'ok'", "args password=<redacted 9 chars: password> ×2; returned 'ok'"),
]


@pytest.mark.parametrize(("text", "shown"), PAIRS)
def test_pairs_in_previews_and_output(text: str, shown: str) -> None:
    assert Redactor().text(text) == shown


def test_a_redacted_value_says_its_type_length_and_why() -> None:
    redactor = Redactor()
    assert redactor.named("password", "'hunter2'", "str") == "<redacted str 7 chars: password>"
    assert redactor.named("password", "None", "NoneType") == "None"  # nothing to hide
    assert redactor.named("user", "'bob'", "str") == "'bob'"
    note = redactor.note(lambda what: f"refused: {what} needs allow_secrets")
    assert note is not None and "1 value(s)" in note and "names: password" in note and "reveal=[" in note
    assert Redactor().note(lambda what: what) is None


def test_reveal_shows_the_names_listed() -> None:
    redactor = Redactor(reveal=["PASSWORD", "db_url"])
    assert redactor.named("password", "'hunter2'") == "'hunter2'"
    assert redactor.named("self.password", "'hunter2'") == "'hunter2'"
    assert redactor.named("db_url", "'postgres://a:b@h/x'") == "'postgres://a:b@h/x'"
    shown = redactor.text("{'password': 'x1', 'token': 't1'}")
    assert shown == "{'password': 'x1', 'token': <redacted 2 chars: token>}"
    assert redactor.named("token", "'t'") == "<redacted 1 chars: token>"


def test_every_answer_model_is_redacted_and_left_intact() -> None:
    report = StopReport(
        session_id="s-1", state=State.stopped, source="12  password = 'in the source'",
        locals=[Var(name="password", value="'hunter2'", type="str", ref=7), Var(name="user", value="'bob'")],
        exception=ExceptionInfo(type="ValueError", message=f"bad token {GHP}"),
        output=Output(text="login password=hunter2\n", next_cursor=20), returned=[f"get_token() → '{GHP}'"],
        trace=CallTrace(summary=["f: args password='x1'"], rows=["f(password='x1') → None"]))
    redactor = Redactor()
    shown = redactor.model(report)
    dumped = shown.model_dump_json()
    assert "hunter2" not in dumped and GHP not in dumped and "x1" not in dumped
    assert shown.locals is not None and report.locals is not None
    assert shown.locals[0].ref == 7  # still expands
    assert shown.locals[1] is report.locals[1]  # untouched values are the same objects
    assert shown.source == report.source  # the program's source is the agent's to read, not data
    assert report.locals[0].value == "'hunter2'"  # the original is unchanged
    assert redactor.count == 6
    hits = TraceResult(session_id="s", hits=[TraceHit(file="a.py", line=3, values={"cfg.token": "'t-1'", "n": "2"})],
                       total_hits=1, stopped_because="max_hits", state=State.stopped, values={"cfg.token": "'t-1' ×1"})
    traced = Redactor().model(hits)
    assert traced.hits[0].values == {"cfg.token": "<redacted 3 chars: cfg.token>", "n": "2"}
    assert traced.values == {"cfg.token": "<redacted 8 chars: cfg.token>"}
    assert Redactor().model(EvaluateResult(session_id="s", expression="os.environ['API_KEY']", value="'k'")).value \
        == "<redacted 1 chars: os.environ['API_KEY']>"
    listing = VariablesResult(session_id="s", variables=[Var(name="'secret'", value="'s'")])
    assert Redactor().model(listing).variables[0].value == "<redacted 1 chars: 'secret'>"
    command = CommandResult(session_id="s", command="x/s", output="AKIAIOSFODNN7EXAMPLE")
    assert "AKIA" not in Redactor().model(command).output
    out = OutputResult(session_id="s", text="plain output\n", next_cursor=1, state=State.running)
    assert Redactor().model(out) is out


@pytest.mark.parametrize("flood", [
    "password " + "a" * 200_000, "x://y " + "a." * 100_000, "-----BEGIN PRIVATE KEY-----" * 10_000,
    "token=" * 50_000, "password='" + "\\'" * 100_000, "password.a" * 20_000, "a://" + "b" * 200_000 + ":c" * 100,
])
def test_near_misses_in_a_flood_of_output_cost_linear_time(flood: str) -> None:
    """Each shape took quadratic time before the patterns were anchored (10 s for 20 KB of one word): at
    200 KB it would not finish within the run's time limit."""
    assert Redactor().text(flood)
    assert not secret_name(flood)
