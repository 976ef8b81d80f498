"""The pure parts of delve's call traces (calls.py): a function's RETs in delve's disassembly, named results from
a declaration, Go's names as code writes them, and which functions are the program's own."""

from __future__ import annotations

from pathlib import Path

from polydbg.backends.delve import build, calls


def _listing(*texts: str) -> list[dict[str, str]]:
    return [{"address": hex(0x100 + index), "instruction": text} for index, text in enumerate(texts)]


def test_rets_are_the_function_s_own_up_to_its_padding_or_its_stack_growing_tail() -> None:
    assert calls.rets(_listing("MOVQ AX, 0x8(SP)", "RET", "CALL $main.fib(SB)", "RET", "INT $0x3", "RET")) == [
        0x101, 0x103]
    assert calls.rets(_listing("RET", "CALL $runtime.morestack_noctxt(SB)", "JMP $main.fib(SB)", "RET")) == [0x100]


def test_named_results_come_from_the_declaration(tmp_path: Path) -> None:
    source = tmp_path / "x.go"
    declarations = {
        "func parseAll(p *Parser, texts []string) (parsed int) {": ("parsed",),
        "func f(a, b int) (x, y int, err error) {": ("x", "y", "err"),
        "func (p P) Q() (n int) {": ("n",),
        "func f() (int, error) {": (),
        "func (p *P) M(x int) int {": (),
        "func g(x func() (int, error)) {": (),
        "func h() {": ()}
    for declaration, names in declarations.items():
        source.write_text(f"package x\n\n{declaration}\n}}\n")
        assert calls.named_results(str(source), 3) == names, declaration
    assert calls.named_results(str(tmp_path / "gone.go"), 3) == ()


def test_names_as_go_code_writes_them() -> None:
    assert calls.short("polydbg.test/gotests.Total") == "gotests.Total"
    assert calls.short("example.com/a/list.(*List).Len") == "list.(*List).Len"
    assert calls.short("main.(*Parser).Parse") == "main.(*Parser).Parse"
    assert calls.short("example.com/m.Map[go.shape.int]") == "m.Map[go.shape.int]"


def test_the_program_s_own_functions_are_main_s_and_its_modules() -> None:
    assert calls.own_function("main.fib") and calls.own_function("example.com/list.(*List).Len")
    assert not calls.own_function("main.main") and not calls.own_function("main.init.0")
    assert not calls.own_function("bytes.(*Buffer).Len") and not calls.own_function("compress/flate.(*byFreq).Len")


def test_a_panic_s_value_without_its_empty_interface() -> None:
    assert calls.panic_value('interface {}(string) "boom"') == '"boom"'
    assert calls.panic_value('interface {}(*errors.errorString) *{s: "x"}') == '*errors.errorString {s: "x"}'
    assert calls.panic_value("interface {}(runtime.boundsError) {x: 3, y: 3}") == "runtime.boundsError {x: 3, y: 3}"
    assert calls.panic_value("nil") == "nil"


def test_callees_are_the_program_s_own_direct_calls_in_the_function_s_own_code() -> None:
    listing = _listing("CALL $main.clamp(SB)", "CALL $runtime.convT64(SB)", "CALL $fmt.Println(SB)",
                       "CALL $main.(*Parser).Parse(SB)", "CALL $main.clamp(SB)", "CALL AX",
                       "CALL $example.com/shop.Total(SB)", "CALL $runtime.morestack_noctxt(SB)", "JMP $main.f(SB)",
                       "CALL $main.other(SB)")
    assert calls.callees(listing) == ["main.clamp", "main.(*Parser).Parse", "example.com/shop.Total"]


def test_a_named_function_is_known_among_the_callees_by_any_of_its_names() -> None:
    assert all(calls.names_it(name, "main.fib") for name in ("fib", "main.fib"))
    assert calls.names_it("(*Parser).Parse", "main.(*Parser).Parse")
    assert calls.names_it("shop.Total", "example.com/shop.Total")
    assert not calls.names_it("fib", "main.fibonacci") and not calls.names_it("ib", "main.fib")


def test_a_module_without_a_dot_is_the_program_s_own_when_its_go_mod_names_it(tmp_path: Path) -> None:
    (tmp_path / "go.mod").write_text('// a comment\nmodule shop\n\ngo 1.19\n')
    module = build.module_path(str(tmp_path))
    assert module == "shop" and build.module_path(str(tmp_path / "none")) is None and build.module_path(None) is None
    listing = _listing("CALL $shop.Total(SB)", "CALL $shop/internal/cart.Add(SB)", "CALL $shopping.X(SB)",
                       "CALL $strings.Cut(SB)")
    assert calls.callees(listing, module) == ["shop.Total", "shop/internal/cart.Add"]
    assert calls.callees(listing) == []


def test_a_name_refused_at_the_place_another_name_of_the_trace_bound_is_that_function() -> None:
    exists = "Breakpoint exists at /p/comma.go:15 at 592932"
    assert calls.aliased("humanize.Comma", exists, [("Comma", 15)])
    assert calls.aliased("(*Parser).Parse", "Breakpoint exists at /p/p.go:9 at 1f", [("main.(*Parser).Parse", 9)])
    assert not calls.aliased("Comma", exists, [])  # the first name: a breakpoint of the session's is there
    assert not calls.aliased("Comma", exists, [("fib", 15)])  # another function at that line (of another file)
    assert not calls.aliased("humanize.Comma", exists, [("Comma", None)])  # refused too: the session's is there
    assert not calls.aliased("humanize.Comma", "could not find function humanize.Comma", [("Comma", 15)])


def test_a_call_s_results_read_as_a_tuple_each_cut_to_its_share_so_the_error_stays() -> None:
    wide = "*semver.Version {Major: 0, Minor: 0, Patch: 0, " + "x" * 300 + "}"
    assert calls.results_text(["3"], 200) == "3"
    assert calls.results_text(["*version.Version {Major: 1}", "error nil"], 200) == (
        "(*version.Version {Major: 1}, error nil)")
    text = calls.results_text([wide, "error nil"], 200)
    assert len(text) <= 200 and text.startswith("(*semver.Version {Major: 0") and text.endswith("…, error nil)"), text
    assert calls.results_text(["x" * 50, "y" * 50], 60) == f"({'x' * 27}…, {'y' * 27}…)"
