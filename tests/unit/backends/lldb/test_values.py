"""lldb's values in the program's language: frames, pointers, Rust names, container previews, registers
(tests/unit/backends/lldb/test_helpers.py covers rust_type, rust_value, rust_function, split_top, pair_of)."""

from __future__ import annotations

from polydbg.backends.base import Frame, Variable
from polydbg.backends.lldb import values
from polydbg.errors import AdapterRequestError


def test_frames_read_in_the_language() -> None:
    rust = {"name": "app::main::h0123456789abcdef", "line": 3, "column": 1, "source": {"path": "/src/main.rs"},
            "instructionPointerReference": "0x55"}
    assert values.frame(rust, "rust") == Frame("app::main", "/src/main.rs", 3, 1, 0x55)
    cpp = {"name": "f(std::vector<int, std::allocator<int> >)", "line": 1}
    assert values.frame(cpp, "cpp").name == "f(std::vector<int>)"
    disassembly = {"name": "abort", "line": 12, "source": {"name": "libc.so.6`abort", "sourceReference": 4}}
    assert values.frame(disassembly, "c") == Frame("abort", None, None)
    assert values.frame({"instructionPointerReference": "nonsense"}, "c").pc is None


def test_a_pointers_memory_reference_is_where_it_points() -> None:
    pointer = Variable("p", "0x00007ffc1000 \"hi\"", "char *", memory_reference="0x7ffcffff")
    assert values.renamed(pointer, "c").memory_reference == "0x00007ffc1000"


def test_rust_values_are_renamed() -> None:
    var = Variable("v", "size=0", "alloc::vec::Vec<int, alloc::alloc::Global>")
    assert values.renamed(var, "rust").type == "Vec<i32>"
    assert values.renamed(var, "cpp") == var


class FakeChildren:
    """A value tree by ref: each ref's children."""

    def __init__(self, tree: dict[int, list[Variable]]) -> None:
        self.tree = tree
        self.asked: list[tuple[int, int, int]] = []

    async def __call__(self, ref: int, start: int, count: int) -> list[Variable]:
        self.asked.append((ref, start, count))
        if ref not in self.tree:
            raise AdapterRequestError("variables", "gone")
        return self.tree[ref][start:start + count]


async def test_a_vector_preview_is_its_first_children() -> None:
    children = FakeChildren({1: [Variable(f"[{i}]", str(10 * i)) for i in range(3)]})
    shown = await values.shaped(Variable("v", "size=3", "std::vector<int>", ref=1), children, "cpp")
    assert shown.value == "{0, 10, 20}"
    assert children.asked == [(1, 0, 3)]


async def test_a_long_container_says_its_size_and_rust_uses_brackets() -> None:
    children = FakeChildren({1: [Variable(f"[{i}]", str(i)) for i in range(50)]})
    shown = await values.shaped(Variable("v", "size=50", "alloc::vec::Vec<int>", ref=1), children, "rust")
    assert shown.value == "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, …] (len=50)"
    assert shown.type == "Vec<i32>"


async def test_a_maps_entries_are_key_value_pairs_asked_for_when_needed() -> None:
    children = FakeChildren({
        1: [Variable("[0]", '{first:"alice", second:31}'), Variable("[1]", "size=2", ref=2)],
        2: [Variable("first", '"bob"'), Variable("second", "size=1", ref=3)],
        3: [Variable("[0]", "7")],
    })
    shown = await values.shaped(Variable("m", "size=2", "std::map<std::string, int>", ref=1), children, "cpp")
    assert shown.value == '{"alice": 31, "bob": {7}}'


async def test_a_preview_the_debugger_cannot_give_leaves_the_summary() -> None:
    var = Variable("v", "size=2", "std::vector<int>", ref=9)
    assert await values.shaped(var, FakeChildren({}), "cpp") == var
    assert not values.only_size("{1, 2}") and values.only_size("size=0")


def test_general_registers_without_their_sub_registers() -> None:
    found = [Variable("rax", "0x1", "unsigned long"), Variable("eax", "0x1", "unsigned int"),
             Variable("rflags", "0x246", "unsigned int"), Variable("rip", "0x4000", "unsigned long")]
    assert [r.name for r in values.general_registers(found)] == ["rax", "rflags", "rip"]
    assert values.general_registers([]) == []
