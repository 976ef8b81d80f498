"""Secrets stay out of the model: values whose names or whose form say secret are shown as ``<redacted …>``.

Everything polydbg answers goes to a model provider. A ``Redactor`` rewrites an answer's model (the pydantic
objects of ``model.py``) before it is rendered, so the text and ``structuredContent`` hide the same values;
the program is never touched (``debug_set_variable`` and conditions see real values, and a redacted
variable's ``ref`` still expands: its children are judged by their own names and values).

**Names that say secret** (``secret_name``): a name is split into words (``db_password``, ``apiKey``,
``X-Auth-Token``, ``self.password``, ``os.environ['API_KEY']`` → its last part); its last word, after dropping
qualifiers such as ``hash``, ``value``, ``b64``, must be one of ``SECRET_WORDS``, or its last two words one of
``SECRET_PAIRS``, or the whole name one of ``SECRET_NAMES``. So ``password``, ``db_passwd``, ``accessToken``,
``client_secret``, ``API_KEY``, ``private_key``, ``credentials``, ``auth``, ``Authorization``, ``cookie``,
``session_id``, ``JSESSIONID`` are secret; ``author``, ``authority``, ``tokenizer``, ``tokens`` (a lexer's
list), ``token_type``, ``token_count``, ``passage``, ``secretary``, ``password_file``, ``key``, ``session``,
and ``pwd`` / ``PWD`` alone (the shell's working directory) are not, while ``db_pwd`` is.

**Values that look like credentials**, wherever they appear (``PATTERNS``): PEM private keys, AWS access key ids
(``AKIA…``/``ASIA…``) and a 40-character secret key beside one, GitHub (``ghp_`` ``gho_`` ``ghs_`` ``ghu_``
``ghr_`` ``github_pat_``), GitLab ``glpat-``, Slack ``xox[abpr]-``, Stripe ``sk_live_``/``rk_live_`` (and
``_test_``), OpenAI ``sk-…``/``sk-proj-…``, JWTs (three base64url parts whose header decodes to JSON with
``alg``), ``Authorization: Bearer …``/``Basic …``, and the password of a URL ``scheme://user:pass@host``.
Inside a collection's preview or program output, a key-value pair whose key says secret
(``{'password': 'hunter2'}``, ``password=hunter2`` in an env dump, ``Password: "x"`` in a Go struct) has its
value redacted. Hashes are not credentials: a git sha, a sha256, a UUID or base64 data stay as they are.

A redacted value is short (it may appear many times): ``<redacted str 7 chars: password>`` (by name) or
``<redacted 40 chars: github token>`` (by form); how to allow it is said once per answer (``note``).
``allow_secrets`` (the policy) turns redaction off; a session's ``reveal`` names are always shown.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from pydantic import BaseModel

from polydbg.session.model import EvaluateResult, Var

M = TypeVar("M", bound=BaseModel)

# -- names ---------------------------------------------------------------------------------------------------

SECRET_WORDS = frozenset({
    "password", "passwords", "passwd", "passphrase", "secret", "secrets", "token", "credential", "credentials",
    "auth", "authorization", "cookie", "cookies", "apikey", "accesskey", "privatekey", "secretkey", "sessionid",
    "sessionkey", "jwt", "bearer", "oauth", "passcode",
})
SECRET_PAIRS = frozenset({
    ("api", "key"), ("access", "key"), ("private", "key"), ("secret", "key"), ("session", "key"),
    ("session", "id"), ("signing", "key"), ("encryption", "key"), ("master", "key"), ("sess", "id"),
})
SECRET_NAMES = frozenset({"jsessionid", "phpsessid", "set-cookie", "x-api-key"})
# Words that follow a secret word and still name the secret itself (password_hash, token_value, apiKeyB64).
QUALIFIERS = frozenset({"hash", "hashed", "value", "val", "str", "string", "b64", "base64", "hex", "raw", "enc",
                        "encoded", "bytes", "data", "header", "env", "plain", "plaintext", "text", "txt"})
PART_WORDS = frozenset({"pwd", "pw", "pass"})  # secret only beside other words: db_pwd, userPass; PWD is a dir

_WORD = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
_LAST_NAME = re.compile(r"(?<![\w$@-])[A-Za-z_$@][\w$-]*(?=['\"\]]*\s*$)")
_NAME_LIKE = re.compile(r"[\s*&$@('\"]*[A-Za-z_$@][\w$@.\[\]'\"\->:]*\)?\s*")


def secret_name(name: str) -> bool:
    """Whether a variable, field, key or expression named ``name`` holds a secret (see the module's docstring)."""
    if not _NAME_LIKE.fullmatch(name):
        return False  # an expression that computes something (len(password)) is judged by its value alone
    last = _LAST_NAME.search(name)
    if last is None:
        return False
    ident = last.group().lstrip("$@")
    if ident.lower() in SECRET_NAMES:
        return True
    words = [w.lower() for w in _WORD.findall(ident)]
    while len(words) > 1 and words[-1] in QUALIFIERS:
        words.pop()
    if not words:
        return False
    if words[-1] in SECRET_WORDS or (len(words) > 1 and words[-1] in PART_WORDS):
        return True
    return len(words) > 1 and (words[-2], words[-1]) in SECRET_PAIRS


# -- values --------------------------------------------------------------------------------------------------

def _jwt(text: str) -> bool:
    header = text.split(".", 1)[0]
    try:
        decoded = json.loads(base64.urlsafe_b64decode(header + "=" * (-len(header) % 4)))
    except (ValueError, binascii.Error):
        return False
    return isinstance(decoded, dict) and "alg" in decoded


# Every pattern is linear in the text: a name starts only where a name can (the lookbehinds), and the runs
# inside a URL are bounded, so output a program floods with near-misses costs no more than other output.
# (kind, what the text must hold for the pattern to be tried, pattern, the group redacted, a check of the match);
# group 0 is the whole match. The hints keep the cost of text with no credential in it to a few substring tests.
PATTERNS: list[tuple[str, tuple[str, ...], re.Pattern[str], int, Callable[[str], bool] | None]] = [
    ("private key", ("PRIVATE KEY",), re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY(?: BLOCK)?-----(?:.*?-----END "
                                                 r"[A-Z ]*PRIVATE KEY(?: BLOCK)?-----|.*)", re.S), 0, None),
    ("AWS key id", ("AKIA", "ASIA"), re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), 0, None),
    ("GitHub token", ("gh", "github_pat_"),
     re.compile(r"\b(?:gh[opsur]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{22,})"), 0, None),
    ("GitLab token", ("glpat-",), re.compile(r"\bglpat-[A-Za-z0-9_-]{20,}"), 0, None),
    ("Slack token", ("xox",), re.compile(r"\bxox[abpr]-[A-Za-z0-9-]{10,}"), 0, None),
    ("Stripe key", ("k_live_", "k_test_"), re.compile(r"\b[sr]k_(?:live|test)_[A-Za-z0-9]{16,}"), 0, None),
    ("OpenAI key", ("sk-",), re.compile(r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"), 0,
     lambda t: any(ch.isdigit() for ch in t) and any(ch.isupper() for ch in t)),
    ("JWT", ("eyJ",), re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*"), 0, _jwt),
    ("credentials", ("uthorization", "UTHORIZATION"), re.compile(
        r"\b(?:Proxy-)?Authorization['\"]?\s*[:=]\s*['\"]?(?:(?:Bearer|Basic|Token|Digest|Negotiate)\s+)?"
        r"([^\s'\",;}]{4,})", re.I), 1, None),
    ("bearer token", ("Bearer",), re.compile(r"\bBearer\s+([A-Za-z0-9._~+/-]{16,}=*)"), 1, None),
    ("URL password", ("://",),
     re.compile(r"\b[A-Za-z][A-Za-z0-9+.-]{0,30}://[^\s:/@'\"]{0,256}:([^\s@/'\"]{1,256})@"), 1, None),
]
_AWS_SECRET = re.compile(r"(?<![A-Za-z0-9/+])[A-Za-z0-9/+]{40}(?![A-Za-z0-9/+=])")
# key = value, key: value, 'key': 'value', "key" => "value" inside a preview or output
_POINTER = r"(?:0x[0-9a-fA-F]+\s+)?"  # gdb's and lldb's char *: 0x5555… "text"
_PAIR = re.compile(r"(?P<q>['\"]?)(?<![\w$.@-])(?P<key>[A-Za-z_$@][\w$.-]*)(?P=q)\s*(?::|=>|=(?!=))\s*(?P<val>"
                   + _POINTER + r"'(?:[^'\\\n…]|\\.)*['…]|" + _POINTER + r"\"(?:[^\"\\\n…]|\\.)*[\"…]|"
                   r"[^\s,;&}\])'\"{\[(<=][^\s,;&}\])'\"]*)")
# Text is searched only when it holds one of the patterns' hints, or a word a secret's name is made of (for the
# pairs): most previews hold neither, and these two searches are then all they cost.
_ANY_HINT = re.compile("|".join(re.escape(hint) for _, hints, _, _, _ in PATTERNS for hint in hints))
_NAME_HINTS = ("pass", "pw", "secret", "token", "key", "cred", "auth", "cookie", "sess", "jwt", "bearer")


def _named_pairs(text: str) -> bool:
    """Whether ``text`` may hold a pair whose key says secret (a case-insensitive regex costs 10 times more)."""
    lower = text.lower()
    return any(hint in lower for hint in _NAME_HINTS)
_EMPTY = frozenset({"", "''", '""', "None", "null", "nil", "undefined", "NULL", "<nil>"})
_SCHEMES = frozenset({"bearer", "basic", "token", "digest", "negotiate"})  # Authorization: Bearer <the secret>
_REDACTED = "<redacted"


class Redactor:
    """Redacts one answer; ``count`` says how many values it hid, ``names`` which names (for the note)."""

    def __init__(self, reveal: Iterable[str] = ()) -> None:
        self.reveal = frozenset(r.lower() for r in reveal)
        self.count = 0
        self.names: list[str] = []

    # -- single values ---------------------------------------------------------------------------------

    def revealed(self, name: str) -> bool:
        if not self.reveal:
            return False
        last = _LAST_NAME.search(name)
        return name.lower() in self.reveal or (last is not None and last.group().lower() in self.reveal)

    def hide(self, value: str, why: str, type_: str | None = None, name: str | None = None) -> str:
        self.count += 1
        if name is not None and name not in self.names:
            self.names.append(name)
        length = len(value) - 2 if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"" else len(value)
        return f"<redacted{' ' + type_ if type_ else ''} {length} chars: {why}>"

    def named(self, name: str, value: str, type_: str | None = None) -> str:
        """``value`` of a variable, field, key or expression called ``name``."""
        if self.revealed(name):
            return value
        if secret_name(name) and value.strip() not in _EMPTY and not value.startswith(_REDACTED):
            return self.hide(value, name, _short_type(type_), name)
        return self.text(value)

    def text(self, text: str) -> str:
        """``text`` with every credential-looking value and every secret-named pair's value redacted."""
        if not text:
            return text
        if _ANY_HINT.search(text) is None:
            return _PAIR.sub(self._pair, text) if _named_pairs(text) else text
        aws = False
        for kind, hints, pattern, group, check in PATTERNS:
            if not any(hint in text for hint in hints):
                continue
            found = pattern.sub(self._replacer(kind, group, check), text)
            aws = aws or (kind == "AWS key id" and found != text)
            text = found
        if aws:
            text = _AWS_SECRET.sub(lambda m: self.hide(m.group(), "AWS secret key"), text)
        return _PAIR.sub(self._pair, text) if _named_pairs(text) else text

    def _replacer(self, kind: str, group: int, check: Callable[[str], bool] | None) -> Callable[[re.Match[str]], str]:
        return lambda match: self._sub(match, kind, group, check)

    def _sub(self, match: re.Match[str], kind: str, group: int, check: Callable[[str], bool] | None) -> str:
        whole = match.group()
        if check is not None and not check(whole):
            return whole
        start, end = match.span(group)
        secret = match.group(group)
        if secret.startswith(_REDACTED):
            return whole
        offset = match.start()
        return whole[:start - offset] + self.hide(secret, kind) + whole[end - offset:]

    def _pair(self, match: re.Match[str]) -> str:
        key, value = match.group("key"), match.group("val")
        if (_REDACTED in value or value.strip() in _EMPTY or value.lower() in _SCHEMES or self.revealed(key)
                or not secret_name(key)):
            return match.group()
        start = match.start("val") - match.start()
        return match.group()[:start] + self.hide(value, key, name=key)

    # -- answers ---------------------------------------------------------------------------------------

    def model(self, model: M) -> M:
        """A copy of ``model`` with its program data redacted (the same object when nothing changed)."""
        return self._walk(model)  # type: ignore[no-any-return]

    def _walk(self, value: Any, field: str | None = None) -> Any:
        if isinstance(value, Var):
            changed = self.named(value.name, value.value, value.type)
            return value if changed == value.value else value.model_copy(update={"value": changed})
        if isinstance(value, EvaluateResult):
            changed = self.named(value.expression, value.value, value.type)
            return value if changed == value.value else value.model_copy(update={"value": changed})
        if isinstance(value, BaseModel):
            update = {}
            for name in type(value).model_fields:
                if name in SKIPPED:
                    continue
                old = getattr(value, name)
                new = self._walk(old, name)
                if new is not old:
                    update[name] = new
            return value.model_copy(update=update) if update else value
        if isinstance(value, str):
            new_text = self.text(value)
            return value if new_text == value else new_text
        if isinstance(value, list):
            items = [self._walk(item, field) for item in value]
            return value if all(a is b for a, b in zip(items, value, strict=True)) else items
        if isinstance(value, dict) and field in NAMED_DICTS:
            pairs = {k: self.named(k, v) if isinstance(v, str) else v for k, v in value.items()}
            return value if pairs == value else pairs
        return value

    def note(self, refusal: Callable[[str], str]) -> str | None:
        """What the answer hid and how to show it, said once (``refusal``: the policy's wording for a switch
        that is off); None when nothing was hidden."""
        if not self.count:
            return None
        names = f"; names: {', '.join(self.names[:8])}" if self.names else ""
        what = f"showing the {self.count} value(s) marked <redacted …> (they look like secrets{names})"
        return f"{refusal(what)}; or name them in debug_launch/debug_attach(reveal=[…])"


# Fields that are polydbg's own words, the agent's input or places, never the program's data.
SKIPPED = frozenset({"session_id", "file", "state", "language", "adapter", "target", "note", "more", "by_file",
                     "source", "runner", "stopped_because", "condition", "hit_condition", "log_message",
                     "expression", "command", "scope", "scopes", "cause", "kind", "watch", "access"})
NAMED_DICTS = frozenset({"values"})  # TraceHit.values, TraceResult.values: expression → value


def _short_type(type_: str | None) -> str | None:
    if not type_ or len(type_) > 24:
        return None
    return type_

