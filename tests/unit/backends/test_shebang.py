"""The command a script's ``#!`` line runs, read as the kernel and ``env`` read it. Nothing runs."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from polydbg.backends.shebang import command


@pytest.mark.parametrize(("line", "words"), [
    ("#!/usr/bin/env node", ["node"]),
    ("#!/usr/bin/python3 -u", ["/usr/bin/python3", "-u"]),
    ("#! /bin/sh", ["/bin/sh"]),
    ("#!/bin/bash\t-e", ["/bin/bash", "-e"]),
    ("#!/usr/bin/env -S node --no-warnings --enable-source-maps", ["node", "--no-warnings", "--enable-source-maps"]),
    ("#!/usr/bin/env -S A=1 'B=two words' python3.11 -X dev", ["python3.11", "-X", "dev"]),
    ("#!/usr/bin/env --split-string=ruby -w", ["ruby", "-w"]),
    ("#!/usr/bin/env -u HOME -i perl", ["perl"]),
    ("#!/usr/bin/env -C /tmp -- deno run", ["deno", "run"]),
    ("#!/usr/bin/env -S npx --yes tsx", ["tsx"]),  # npx runs the command named after its flags
    ("#!/bin/env PYTHONUNBUFFERED=1 python3", ["python3"]),
])
def test_the_command_of_a_shebang_line(tmp_path: Path, line: str, words: list[str]) -> None:
    script = tmp_path / "tool"
    script.write_text(f"{line}\nrest of the script\n")
    assert command(str(script)) == words


@pytest.mark.parametrize("content", [b"", b"#!", b"#!   \n", b"print('no #! line')\n", b"\x7fELF\x02\x01",
                                     b"#!/usr/bin/env\n", b"#!/usr/bin/env -i\n", b"#!/usr/bin/env -S 'unclosed\n"])
def test_no_command(tmp_path: Path, content: bytes) -> None:
    script = tmp_path / "tool"
    script.write_bytes(content)
    assert command(str(script)) is None


def test_only_what_the_kernel_reads_counts(tmp_path: Path) -> None:
    script = tmp_path / "tool"
    script.write_text("#!/usr/bin/env " + " " * 300 + "node\n")  # past the kernel's 256 bytes
    assert command(str(script)) is None


def test_what_is_no_regular_file_is_never_opened(tmp_path: Path) -> None:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    assert command(str(fifo)) is None  # returns at once: a FIFO would block the reader
    assert command(str(tmp_path)) is None
    assert command(str(tmp_path / "missing")) is None
