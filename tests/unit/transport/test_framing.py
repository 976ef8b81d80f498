"""Content-Length framing: the codec alone, fed bytes by hand."""

from __future__ import annotations

import json
from typing import Any

import pytest

from polydbg.errors import FramingError
from polydbg.transport.framing import MAX_HEADER_BYTES, ContentLengthDecoder, encode_message

REQUEST: dict[str, Any] = {"seq": 1, "type": "request", "command": "initialize", "arguments": {"adapterID": "x"}}
EVENT: dict[str, Any] = {"seq": 2, "type": "event", "event": "output", "body": {"output": "héllo → 世界 🐍\n"}}


def frame(body: bytes, header: bytes | None = None) -> bytes:
    """A raw frame with a hand-written header (default: the canonical Content-Length header)."""
    if header is None:
        header = b"Content-Length: %d" % len(body)
    return header + b"\r\n\r\n" + body


def test_encode_message_header_counts_utf8_bytes_not_characters() -> None:
    encoded = encode_message(EVENT)
    header, sep, body = encoded.partition(b"\r\n\r\n")
    assert sep
    text = body.decode("utf-8")
    assert len(body) > len(text)  # multi-byte characters are present, sent unescaped
    assert header == b"Content-Length: %d" % len(body)
    assert json.loads(body) == EVENT


def test_round_trip() -> None:
    messages = [REQUEST, EVENT, {"seq": 3, "type": "response", "request_seq": 1, "success": True, "body": {}}]
    decoder = ContentLengthDecoder()
    assert decoder.feed(b"".join(encode_message(m) for m in messages)) == messages


def test_message_split_at_every_byte_boundary() -> None:
    data = encode_message(EVENT)
    for cut in range(len(data) + 1):
        decoder = ContentLengthDecoder()
        first = decoder.feed(data[:cut])
        second = decoder.feed(data[cut:])
        assert first + second == [EVENT], f"cut at {cut}"
        assert (first == []) == (cut < len(data)), f"cut at {cut}"


def test_message_fed_one_byte_at_a_time() -> None:
    data = encode_message(REQUEST) + encode_message(EVENT)
    decoder = ContentLengthDecoder()
    received: list[dict[str, Any]] = []
    for i in range(len(data)):
        received += decoder.feed(data[i:i + 1])
    assert received == [REQUEST, EVENT]


def test_several_messages_in_one_chunk_with_a_partial_tail() -> None:
    messages = [{"seq": n, "type": "event", "event": f"e{n}"} for n in range(5)]
    data = b"".join(encode_message(m) for m in messages)
    tail = encode_message(EVENT)
    decoder = ContentLengthDecoder()
    assert decoder.feed(data + tail[:7]) == messages
    assert decoder.feed(tail[7:]) == [EVENT]


def test_empty_chunks_are_harmless() -> None:
    decoder = ContentLengthDecoder()
    assert decoder.feed(b"") == []
    data = encode_message(REQUEST)
    assert decoder.feed(data[:5]) == []
    assert decoder.feed(b"") == []
    assert decoder.feed(data[5:]) == [REQUEST]


HEADER_TEMPLATES = [
    b"content-length: %d",
    b"CONTENT-LENGTH:%d",
    b"Content-Length:   %d   ",
    b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\nContent-Length: %d",
    b"Content-Length: %d\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8",
    b"X-Custom: a:b:c\r\ncOnTeNt-LeNgTh: %d\r\nX-Other: 1",
]


def test_extra_headers_and_odd_casing() -> None:
    body = json.dumps(REQUEST).encode()
    for template in HEADER_TEMPLATES:
        data = frame(body, template % len(body))
        assert ContentLengthDecoder().feed(data + data) == [REQUEST, REQUEST], template


def test_utf8_body_length_counts_bytes() -> None:
    body = json.dumps(EVENT, ensure_ascii=False).encode("utf-8")
    assert len(body) != len(body.decode("utf-8"))
    decoder = ContentLengthDecoder()
    # the body is followed directly by the next frame: a character-counting decoder would misalign
    assert decoder.feed(frame(body) + frame(body)) == [EVENT, EVENT]


def test_content_length_shorter_than_body_is_detected_as_bad_json() -> None:
    body = json.dumps(EVENT, ensure_ascii=False).encode("utf-8")
    character_count = len(body.decode("utf-8"))
    with pytest.raises(FramingError):
        ContentLengthDecoder().feed(frame(body, b"Content-Length: %d" % character_count))


BAD_HEADERS = [
    (b"Content-Length 12", "malformed header line"),
    (b"Content-Length: 12\r\nbogus line", "malformed header line"),
    (b"Content-Type: application/json", "without Content-Length"),
    (b"Content-Length: twelve", "not a number"),
    (b"Content-Length: ", "not a number"),
    (b"Content-Length: 1.5", "not a number"),
    (b"Content-Length: -1", "outside"),
    (b"", "malformed header line"),
]


def test_bad_header_raises() -> None:
    for header, fragment in BAD_HEADERS:
        with pytest.raises(FramingError, match=fragment):
            ContentLengthDecoder().feed(header + b"\r\n\r\n{}")


def test_header_without_terminator_is_bounded() -> None:
    decoder = ContentLengthDecoder()
    assert decoder.feed(b"X" * MAX_HEADER_BYTES) == []  # still within the limit: keep waiting
    with pytest.raises(FramingError, match="no header terminator"):
        decoder.feed(b"X")


def test_oversized_body_raises_before_the_body_arrives() -> None:
    decoder = ContentLengthDecoder(max_body=100)
    assert decoder.feed(frame(b"{" + b" " * 98 + b"}")) == [{}]  # exactly max_body is fine
    with pytest.raises(FramingError, match="outside"):
        decoder.feed(b"Content-Length: 101\r\n\r\n")  # no body bytes needed to reject it


def test_non_json_body_raises() -> None:
    for body in (b"not json", b"{\"seq\": 1", b"\xff\xfe\xfd", b""):
        with pytest.raises(FramingError, match="not JSON"):
            ContentLengthDecoder().feed(frame(body))


def test_non_object_body_raises() -> None:
    for body in (b"[1, 2]", b"\"text\"", b"42", b"null", b"true"):
        with pytest.raises(FramingError, match="not a JSON object"):
            ContentLengthDecoder().feed(frame(body))


def test_bad_body_does_not_wait_for_more_input() -> None:
    decoder = ContentLengthDecoder()
    good = encode_message(REQUEST)
    assert decoder.feed(good) == [REQUEST]
    with pytest.raises(FramingError):
        decoder.feed(frame(b"[]"))
