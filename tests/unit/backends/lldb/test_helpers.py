"""lldb-dap's pure helpers: finding the adapter on PATH, Rust names as Rust spells them, and reading
map entries out of lldb's value summaries. No debugger runs."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest

from polydbg.backends.lldb.values import pair_of, rust_function, rust_type, rust_value, split_top
from polydbg.backends.locate import find_lldb_dap

# -- find_lldb_dap -------------------------------------------------------------------------------------


def _fake(directory: Path, *names: str, executable: bool = True) -> None:
    directory.mkdir(exist_ok=True)
    for name in names:
        (directory / name).write_text("#!/bin/sh\n")
        (directory / name).chmod(0o755 if executable else 0o644)


@pytest.fixture
def path_of(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., list[Path]]:
    """Sets PATH to the given directories (made under tmp_path), in order; returns them."""
    def set_path(*directories: str) -> list[Path]:
        dirs = [tmp_path / d for d in directories]
        for d in dirs:
            d.mkdir(exist_ok=True)
        monkeypatch.setenv("PATH", os.pathsep.join(map(str, dirs)))
        return dirs
    return set_path


def test_plain_lldb_dap_wins_over_any_versioned_one(path_of: Callable[..., list[Path]]) -> None:
    first, second = path_of("a", "b")
    _fake(first, "lldb-dap-22")
    _fake(second, "lldb-dap")
    assert find_lldb_dap() == str(second / "lldb-dap")


def test_the_highest_version_wins_by_number_across_directories(path_of: Callable[..., list[Path]]) -> None:
    first, second = path_of("a", "b")
    _fake(first, "lldb-dap-9", "lldb-vscode")
    _fake(second, "lldb-dap-18")
    assert find_lldb_dap() == str(second / "lldb-dap-18")  # 18 > 9, though "9" > "18" as text


def test_a_dotted_version_counts_by_its_major(path_of: Callable[..., list[Path]]) -> None:
    [only] = path_of("a")
    _fake(only, "lldb-dap-17", "lldb-dap-18.1")
    assert find_lldb_dap() == str(only / "lldb-dap-18.1")


def test_on_a_version_tie_the_earlier_path_entry_wins(path_of: Callable[..., list[Path]]) -> None:
    first, second = path_of("a", "b")
    _fake(first, "lldb-dap-18")
    _fake(second, "lldb-dap-18")
    assert find_lldb_dap() == str(first / "lldb-dap-18")


def test_lldb_vscode_only_without_any_lldb_dap(path_of: Callable[..., list[Path]]) -> None:
    first, second = path_of("a", "b")
    _fake(first, "lldb-vscode-14")
    _fake(second, "lldb-vscode-11")
    assert find_lldb_dap() == str(first / "lldb-vscode-14")
    _fake(second, "lldb-vscode")
    assert find_lldb_dap() == str(second / "lldb-vscode")  # the plain name first, as with lldb-dap
    _fake(second, "lldb-dap-10")
    assert find_lldb_dap() == str(second / "lldb-dap-10")  # any lldb-dap beats lldb-vscode


def test_non_executables_directories_and_lookalike_names_are_skipped(path_of: Callable[..., list[Path]]) -> None:
    [only] = path_of("a")
    _fake(only, "lldb-dap-30", executable=False)
    (only / "lldb-dap-40").mkdir()
    _fake(only, "lldb-dap-50-wrapper", "lldb-dap-x", "my-lldb-dap-60", "lldb-dap-")
    assert find_lldb_dap() is None
    _fake(only, "lldb-dap-12")
    assert find_lldb_dap() == str(only / "lldb-dap-12")


def test_nothing_found_and_missing_path_directories(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", os.pathsep.join([str(tmp_path), str(tmp_path / "missing"), ""]))
    assert find_lldb_dap() is None


# -- rust_type --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("lldb", "rust"), [
    ("alloc::vec::Vec<unsigned char, alloc::alloc::Global>", "Vec<u8>"),
    ("std::collections::hash::map::HashMap<alloc::string::String, int, std::hash::random::RandomState, "
     "alloc::alloc::Global>", "HashMap<String, i32>"),
    ("std::collections::hash::set::HashSet<long, std::hash::random::RandomState, alloc::alloc::Global>",
     "HashSet<i64>"),
    ("alloc::collections::btree::map::BTreeMap<int, double, alloc::alloc::Global>", "BTreeMap<i32, f64>"),
    ("core::option::Option<alloc::string::String>", "Option<String>"),
    ("core::result::Result<int, alloc::string::String>", "Result<i32, String>"),
    ("alloc::sync::Arc<core::cell::RefCell<int>, alloc::alloc::Global>", "Arc<RefCell<i32>>"),
    ("alloc::vec::Vec<alloc::vec::Vec<float, alloc::alloc::Global>, alloc::alloc::Global>", "Vec<Vec<f32>>"),
    ("alloc::collections::vec_deque::VecDeque<short, alloc::alloc::Global>", "VecDeque<i16>"),
    ("alloc::boxed::Box<unsigned short, alloc::alloc::Global>", "Box<u16>"),
])
def test_rust_type_drops_std_paths_and_default_parameters(lldb: str, rust: str) -> None:
    assert rust_type(lldb) == rust


@pytest.mark.parametrize(("c", "rust"), [
    ("int", "i32"), ("long", "i64"), ("long long", "i64"), ("short", "i16"), ("signed char", "i8"),
    ("unsigned char", "u8"), ("unsigned short", "u16"), ("unsigned int", "u32"), ("unsigned long", "u64"),
    ("unsigned long long", "u64"), ("float", "f32"), ("double", "f64"), ("_Bool", "bool"),
    ("__int128", "i128"), ("unsigned __int128", "u128"),
])
def test_rust_type_spells_c_primitives_the_rust_way(c: str, rust: str) -> None:
    # the longest spelling is matched first: "unsigned long long" is u64, not "unsigned i64"
    assert rust_type(f"alloc::vec::Vec<{c}, alloc::alloc::Global>") == f"Vec<{rust}>"


@pytest.mark.parametrize("name", ["&str", "integer_t", "my::long_name::Int", "rustdemo::Shape", "[i32; 3]"])
def test_rust_type_leaves_other_names_alone(name: str) -> None:
    assert rust_type(name) == name  # whole words only: "integer_t" and "long_name" keep their letters


def test_rust_type_passes_no_type_through() -> None:
    assert rust_type(None) is None
    assert rust_type("") == ""


# -- rust_function --------------------------------------------------------------------------------------


@pytest.mark.parametrize(("symbol", "name"), [
    ("rustdemo::main::he09d96793cb75489", "rustdemo::main"),
    ("core::ptr::drop_in_place<alloc::vec::Vec<i32>>::hd00bd7e4f7ba1a1c",
     "core::ptr::drop_in_place<alloc::vec::Vec<i32>>"),
    ("std::rt::lang_start::{{closure}}::h0123456789abcdef", "std::rt::lang_start::{{closure}}"),
    ("_$LT$alloc..vec..Vec$LT$T$C$A$GT$$u20$as$u20$core..ops..deref..Deref$GT$::deref",
     "<alloc::vec::Vec<T,A> as core::ops::deref::Deref>::deref"),
    ("_$LT$rustdemo..Shape$u20$as$u20$core..fmt..Debug$GT$::fmt::h0123456789abcdef",
     "<rustdemo::Shape as core::fmt::Debug>::fmt"),
    ("_$LT$$RF$T$u20$as$u20$core..fmt..Display$GT$::fmt", "<&T as core::fmt::Display>::fmt"),
])
def test_rust_function_drops_the_hash_and_decodes_legacy_escapes(symbol: str, name: str) -> None:
    assert rust_function(symbol) == name


@pytest.mark.parametrize("name", [
    "main", "add(int, int)", "rustdemo::main",
    "rustdemo::main::h123",  # too short for a symbol hash
    "x::h0123456789ABCDEF",  # a symbol hash is lowercase hex
    "x::h0123456789abcdef::y",  # and comes last
])
def test_rust_function_leaves_other_names_alone(name: str) -> None:
    assert rust_function(name) == name


# -- split_top and pair_of ------------------------------------------------------------------------------


@pytest.mark.parametrize(("text", "parts"), [
    ("a, b, c", ["a", "b", "c"]),
    (" a , b ", ["a", "b"]),
    ("single", ["single"]),
    ("", [""]),
    ("a,,b", ["a", "", "b"]),
    ('"a, b", c', ['"a, b"', "c"]),  # commas inside quotes
    ("'a,b', 'c'", ["'a,b'", "'c'"]),
    (r'"esc \" , still", x', [r'"esc \" , still"', "x"]),  # an escaped quote does not end the string
    ("f(1, 2), [3, 4], {5, 6}, <7, 8>", ["f(1, 2)", "[3, 4]", "{5, 6}", "<7, 8>"]),  # commas inside brackets
    ('{a:"}", b:1}, 2', ['{a:"}", b:1}', "2"]),  # a closing bracket inside quotes does not count
])
def test_split_top_splits_on_top_level_commas(text: str, parts: list[str]) -> None:
    assert split_top(text) == parts


@pytest.mark.parametrize(("value", "pair"), [
    ('{first:"alice", second:31}', ('"alice"', "31")),  # a C++ std::pair
    ('{first:"a, second:b", second:31}', ('"a, second:b"', "31")),  # the key's text looks like a field
    ("{first:{1, 2}, second:[3]}", ("{1, 2}", "[3]")),
    ('("alice", 10)', ('"alice"', "10")),  # a Rust tuple
    ('("a)", 1)', ('"a)"', "1")),
    ("(Some(1), None)", ("Some(1)", "None")),
])
def test_pair_of_reads_map_entries(value: str, pair: tuple[str, str]) -> None:
    assert pair_of(value) == pair


@pytest.mark.parametrize("value", [
    "{x:1, y:2}",  # a struct with two fields is not an entry
    "{second:1, first:2}",
    "{first:1}",
    "(1, 2, 3)",
    "()",
    "(",
    "",
    "[1, 2]",
    "{first:1, second:2",
    "42",
])
def test_pair_of_refuses_everything_else(value: str) -> None:
    assert pair_of(value) is None


# -- rust_value: lldb's raw enum layout and char lists through a reference --------------------------------

@pytest.mark.parametrize(("raw", "shown"), [
    ("0x00007fffffffe4b0 Some{$variants$:{$variant$0:{$discr$:93824992595328, value:()}, "
     "$variant$:{value:{0:0x00005555555acd80}}}}", "0x00007fffffffe4b0 Some(0x00005555555acd80)"),
    ("None{$variants$:{$variant$0:{$discr$:0, value:()}}}", "None"),
    ("Ok{$variants$:{$variant$:{value:{0:{x:1, y:2}}}}}", "Ok({x:1, y:2})"),
    ("0x00007fffffffe4b8 {'h', 'e', 'l', 'l', 'o'}", '0x00007fffffffe4b8 "hello"'),
    ("{value:1, next:Some(0x00005555555acd60)}", "{value:1, next:Some(0x00005555555acd60)}"),  # already fine
])
def test_rust_values_read_as_rust_prints_them(raw: str, shown: str) -> None:
    assert rust_value(raw) == shown
