"""delve's values as polydbg shows them: types named by their package, as Go code names them."""

from __future__ import annotations

from polydbg.backends.base import Variable
from polydbg.backends.delve.values import short_types, tidy


def test_a_type_is_named_by_its_package_not_its_import_path() -> None:
    """go-semver's Version filled a call trace's value with its import path before Patch, the field that differed."""
    assert short_types('*github.com/coreos/go-semver/semver.Version {Major: 1, Minor: 2, Patch: 3, PreRelease: ""}'
                       ) == '*semver.Version {Major: 1, Minor: 2, Patch: 3, PreRelease: ""}'
    assert short_types("map[string]*example.com/shop/cart.Line [...]") == "map[string]*cart.Line [...]"
    assert short_types("(*github.com/x/y.T)(0xc000012345)") == "(*y.T)(0xc000012345)"
    shown = tidy(Variable("v", "[]example.com/a/b.C len: 1, cap: 1, [{N: 2}]", None))
    assert shown.value == "[]b.C len: 1, cap: 1, [{N: 2}]"


def test_strings_paths_and_package_main_are_left_as_they_are() -> None:
    for value in ['"see github.com/x/y.T"', '`raw example.com/a.B`', '"esc \\"gh.com/a.b\\" x"', "main.Point {X: 1}",
                  "/usr/lib/go/src/fmt.go", "error nil", 'interface {}(*errors.errorString) *{s: "x"}']:
        assert short_types(value) == value
