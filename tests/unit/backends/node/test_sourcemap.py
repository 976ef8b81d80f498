"""The source-map decoder: base64 VLQ, both lookup directions, and every form a map comes in."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest

from polydbg.backends.node.sourcemap import (
    Generated,
    Original,
    SourceMap,
    SourceMapError,
    decode_mappings,
    decode_vlq,
    load,
    read_data_url,
)


@pytest.mark.parametrize(("segment", "values"), [
    ("A", [0]), ("C", [1]), ("D", [-1]), ("gB", [16]), ("hB", [-16]), ("AAgBC", [0, 0, 16, 1]),
    ("2H", [123]), ("+/D", [2047]), ("//D", [-2047])])
def test_decode_vlq(segment: str, values: list[int]) -> None:
    assert decode_vlq(segment) == values


@pytest.mark.parametrize("bad", ["!", "g"])  # a character outside base64; a continuation with no end
def test_decode_vlq_refuses_garbage(bad: str) -> None:
    with pytest.raises(SourceMapError):
        decode_vlq(bad)


def test_mappings_are_relative_across_segments_and_lines() -> None:
    # line 0: col 0 → src 0 (0,0); col 4 → (0,4). line 1 empty. line 2: col 2 → (1, 0) of source 1
    assert decode_mappings("AAAA,IAAI;;EACJ") == [(0, 0, 0, 0, 0), (0, 4, 0, 0, 4), (2, 2, 0, 1, 0)]
    assert decode_mappings("AAAA,ECAC") == [(0, 0, 0, 0, 0), (0, 2, 1, 0, 1)]


# A tsc-like map: main.js lines 2..4 come from ../src/main.ts lines 0, 2 and 3 (line 1 is blank).
TSC = {"version": 3, "file": "main.js", "sourceRoot": "", "sources": ["../src/main.ts"], "names": [],
       "mappings": ";;AAAA;AAEA,IAAI;AACA"}


def test_both_directions(tmp_path: Path) -> None:
    smap = SourceMap.parse(json.dumps(TSC), str(tmp_path / "dist"))
    main_ts = str(tmp_path / "src" / "main.ts")
    assert smap.sources == [main_ts]
    assert smap.original(2, 0) == Original(main_ts, 0, 0)
    assert smap.original(3, 7) == Original(main_ts, 2, 4)  # the last mapping at or before the column
    assert smap.original(3, 2) == Original(main_ts, 2, 0)
    assert smap.original(0, 0) is None  # generated-only lines ("use strict") map to nothing
    assert smap.generated(main_ts, 0) == (Generated(2, 0), 0)
    assert smap.generated(main_ts, 1) == (Generated(3, 0), 2)  # a blank line binds to the next mapped one
    assert smap.generated(main_ts, 3) == (Generated(4, 0), 3)
    assert smap.generated(main_ts, 4) is None
    assert smap.generated(str(tmp_path / "other.ts"), 0) is None


def test_one_generated_line_holding_a_whole_module_is_told_apart_by_column(tmp_path: Path) -> None:
    # tsx/esbuild style: every original line on generated line 0, at growing columns
    smap = SourceMap.parse(json.dumps({"version": 3, "sources": ["a.ts"], "mappings": "AAAA,UACA,UACA"}),
                           str(tmp_path))
    a_ts = str(tmp_path / "a.ts")
    assert [smap.generated(a_ts, n) for n in range(3)] == [
        (Generated(0, 0), 0), (Generated(0, 10), 1), (Generated(0, 20), 2)]
    assert smap.original(0, 15) == Original(a_ts, 1, 0)


def test_source_root_and_file_urls(tmp_path: Path) -> None:
    rooted = SourceMap.parse(json.dumps({"version": 3, "sourceRoot": "../lib/", "sources": ["x.ts"],
                                         "mappings": "AAAA"}), str(tmp_path / "out"))
    assert rooted.sources == [str(tmp_path / "lib" / "x.ts")]
    url = SourceMap.parse(json.dumps({"version": 3, "sources": ["file:///abs/with%20space/y.ts"],
                                      "mappings": "AAAA"}), str(tmp_path))
    assert url.sources == ["/abs/with space/y.ts"]


def test_inline_data_urls_base64_and_percent_encoded(tmp_path: Path) -> None:
    text = json.dumps({"version": 3, "sources": ["z.ts"], "mappings": "AAAA"})
    encoded = base64.b64encode(text.encode()).decode()
    for url in (f"data:application/json;base64,{encoded}",
                f"data:application/json;charset=utf-8;base64,{encoded}"):
        assert read_data_url(url) == text
        assert load(url, str(tmp_path / "z.js")).sources == [str(tmp_path / "z.ts")]
    assert read_data_url("data:application/json,%7B%7D") == "{}"


def test_an_external_map_next_to_its_script(tmp_path: Path) -> None:
    dist = tmp_path / "dist"
    dist.mkdir()
    (dist / "main.js.map").write_text(json.dumps(TSC))
    smap = load("main.js.map", str(dist / "main.js"))
    assert smap.knows(str(tmp_path / "src" / "main.ts"))
    with pytest.raises(SourceMapError, match="cannot read"):
        load("missing.js.map", str(dist / "main.js"))


def test_index_maps_offset_their_sections(tmp_path: Path) -> None:
    index = {"version": 3, "sections": [
        {"offset": {"line": 0, "column": 0}, "map": {"version": 3, "sources": ["a.ts"], "mappings": "AAAA"}},
        {"offset": {"line": 10, "column": 0}, "map": {"version": 3, "sources": ["b.ts"], "mappings": "AAAA;AACA"}}]}
    smap = SourceMap.parse(json.dumps(index), str(tmp_path))
    assert smap.original(11, 0) == Original(str(tmp_path / "b.ts"), 1, 0)
    assert smap.generated(str(tmp_path / "a.ts"), 0) == (Generated(0, 0), 0)


def test_not_a_map() -> None:
    with pytest.raises(SourceMapError):
        SourceMap.parse("not json", "/")
    with pytest.raises(SourceMapError):
        SourceMap.parse(json.dumps({"version": 3, "sources": []}), "/")
