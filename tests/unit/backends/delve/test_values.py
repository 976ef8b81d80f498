"""delve's values as polydbg lists them (values.py): types named as Go prints them."""

from __future__ import annotations

from polydbg.backends.base import Variable
from polydbg.backends.delve.values import short_types, tidy


def test_a_package_is_named_by_its_path_s_last_element_and_an_anonymous_struct_s_fields_by_their_own() -> None:
    long = ("struct { github.com/dustin/go-humanize.name string; github.com/dustin/go-humanize.got string; "
            "github.com/dustin/go-humanize.exp string }")
    assert short_types(long) == "struct { name string; got string; exp string }"
    assert short_types("[]*example.com/shop/cart.Item") == "[]*cart.Item"
    assert short_types("map[string]gopkg.in/yaml.v3.Node") == "map[string]yaml.Node"
    assert short_types("example.com/shop/v2.(*Cart)") == "shop.(*Cart)"
    assert short_types("struct { A int; B string }") == "struct { A int; B string }"
    assert short_types("*testing.T {mu: (*sync.RWMutex)(0xc0)}") == "*testing.T {mu: (*sync.RWMutex)(0xc0)}"


def test_two_paths_that_end_alike_stay_whole_and_strings_are_left_as_they_are() -> None:
    assert short_types("map[a.com/util.T]b.com/util.T") == "map[a.com/util.T]b.com/util.T"
    assert short_types('a.com/x.T {path: "a.com/x.T", raw: `b.com/y.U`}') == \
        'x.T {path: "a.com/x.T", raw: `b.com/y.U`}'
    assert short_types("/tmp/build/main.go") == "/tmp/build/main.go"


def test_tidy_names_a_variable_s_type_and_its_value_s_types_so() -> None:
    shown = tidy(Variable("tl", "github.com/x/humanize.testList len: 2, cap: 2, [...]",
                          "github.com/x/humanize.testList"))
    assert (shown.type, shown.value) == ("humanize.testList", "humanize.testList len: 2, cap: 2, [...]")
