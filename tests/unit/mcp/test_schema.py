"""compact_schema: what the agent is spared in tools/list."""

from __future__ import annotations

import copy
import json
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field

from polydbg.mcp.server import compact_schema


def test_titles_removed_everywhere() -> None:
    schema = {
        "title": "Args", "type": "object",
        "properties": {
            "line": {"title": "Line", "type": "integer"},
            "where": {"title": "Where", "type": "array", "items": {"title": "Item", "type": "string"}},
        },
        "additionalProperties": {"title": "Extra", "type": "string"},
    }
    assert compact_schema(schema) == {
        "type": "object",
        "properties": {
            "line": {"type": "integer"},
            "where": {"type": "array", "items": {"type": "string"}},
        },
        "additionalProperties": {"type": "string"},
    }


def test_property_named_title_is_kept() -> None:
    schema = {
        "title": "Issue", "type": "object",
        "properties": {
            "title": {"title": "Title", "type": "string", "description": "the issue's title"},
            "body": {"title": "Body", "type": "string"},
        },
        "required": ["title"],
    }
    assert compact_schema(schema) == {
        "type": "object",
        "properties": {
            "title": {"type": "string", "description": "the issue's title"},
            "body": {"type": "string"},
        },
        "required": ["title"],
    }


@pytest.mark.parametrize("variants", [
    [{"type": "integer", "multipleOf": 2}, {"type": "null"}],
    [{"type": "null"}, {"type": "integer", "multipleOf": 2}],
])
def test_optional_collapsed_to_its_type(variants: list[dict[str, Any]]) -> None:
    schema = {"anyOf": variants, "default": None, "title": "Count", "description": "how many"}
    assert compact_schema(schema) == {"type": "integer", "multipleOf": 2, "description": "how many"}


def test_collapsed_variant_is_compacted_too_and_outer_keys_win() -> None:
    schema = {"anyOf": [{"type": "string", "title": "Inner", "description": "inner"}, {"type": "null"}],
              "description": "outer", "default": "x"}
    assert compact_schema(schema) == {"type": "string", "description": "outer", "default": "x"}


def test_defs_inlined_and_dropped() -> None:
    schema = {
        "type": "object",
        "properties": {
            "at": {"anyOf": [{"$ref": "#/$defs/Location"}, {"type": "null"}], "default": None,
                   "description": "where"},
            "all": {"type": "array", "items": {"$ref": "#/$defs/Location"}},
        },
        "$defs": {"Location": {"title": "Location", "type": "object",
                               "properties": {"file": {"title": "File", "type": "string"}}, "required": ["file"]}},
    }
    location = {"type": "object", "properties": {"file": {"type": "string"}}, "required": ["file"]}
    assert compact_schema(schema) == {
        "type": "object",
        "properties": {"at": {**location, "description": "where"}, "all": {"type": "array", "items": location}},
    }


def test_server_checked_ranges_dropped() -> None:
    schema = {"type": "integer", "minimum": 1, "maximum": 9, "exclusiveMinimum": 0, "exclusiveMaximum": 10,
              "multipleOf": 1}
    assert compact_schema(schema) == {"type": "integer", "multipleOf": 1}


def test_real_unions_are_kept() -> None:
    two = {"anyOf": [{"type": "integer"}, {"type": "string"}]}
    assert compact_schema(two) == two
    nullable_two = {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]}
    assert compact_schema(nullable_two) == nullable_two  # more than one real type: nothing to collapse
    only_null = {"anyOf": [{"type": "null"}]}
    assert compact_schema(only_null) == only_null


def test_null_and_false_defaults_dropped_other_defaults_kept() -> None:
    schema = {"type": "object", "properties": {
        "a": {"type": "integer", "default": None},
        "b": {"type": "integer", "default": 5},
        "c": {"type": "boolean", "default": False},
        "c2": {"type": "boolean", "default": True},
        "d": {"type": "string", "default": "over"},
        "e": {"type": "array", "default": []},
    }}
    assert compact_schema(schema)["properties"] == {
        "a": {"type": "integer"},
        "b": {"type": "integer", "default": 5},
        "c": {"type": "boolean"},
        "c2": {"type": "boolean", "default": True},
        "d": {"type": "string", "default": "over"},
        "e": {"type": "array", "default": []},
    }


def test_non_string_title_value_is_not_a_title() -> None:
    # where a name maps to a schema (here patternProperties) "title" can be a name, not an annotation
    schema = {"patternProperties": {"title": {"type": "string", "title": "T"}}}
    assert compact_schema(schema) == {"patternProperties": {"title": {"type": "string"}}}


def test_input_not_mutated_and_idempotent() -> None:
    schema = {"title": "A", "type": "object", "properties": {
        "x": {"anyOf": [{"type": "integer"}, {"type": "null"}], "default": None, "title": "X"}}}
    before = copy.deepcopy(schema)
    once = compact_schema(schema)
    assert schema == before
    assert compact_schema(once) == once


class Where(BaseModel):
    file: str
    line: int = Field(ge=1)


class Args(BaseModel):
    title: str
    count: int | None = None
    where: Where | None = None
    kind: Literal["over", "into", "out"] = "over"
    tags: list[str] = []
    verbose: bool = False


def test_pydantic_schema_end_to_end() -> None:
    raw = Args.model_json_schema()
    compact = compact_schema(raw)
    assert compact == {
        "type": "object",
        "properties": {
            "title": {"type": "string"},
            "count": {"type": "integer"},
            "where": {"type": "object", "properties": {"file": {"type": "string"}, "line": {"type": "integer"}},
                      "required": ["file", "line"]},
            "kind": {"enum": ["over", "into", "out"], "type": "string", "default": "over"},
            "tags": {"type": "array", "items": {"type": "string"}, "default": []},
            "verbose": {"type": "boolean"},
        },
        "required": ["title"],
    }
    assert len(json.dumps(compact)) < len(json.dumps(raw))


def test_zero_default_is_not_false() -> None:
    assert compact_schema({"type": "integer", "default": 0}) == {"type": "integer", "default": 0}


def test_ref_siblings_survive_inlining() -> None:
    schema = {"properties": {"at": {"$ref": "#/$defs/L", "description": "where to stop"}},
              "$defs": {"L": {"type": "object"}}}
    assert compact_schema(schema) == {"properties": {"at": {"type": "object", "description": "where to stop"}}}


def test_default_values_are_data_not_schema() -> None:
    schema = {"type": "object", "default": {"title": "Untitled", "note": None},
              "examples": [{"title": "Example"}]}
    assert compact_schema(schema) == schema
