from polydbg.backends.kit import thrown


def test_the_name_is_replaced_as_a_whole_token_outside_string_literals() -> None:
    assert thrown.substitute("$exception.args[0]", "E") == "E.args[0]"
    assert thrown.substitute("str($exception) + '$exception'", "E") == "str(E) + '$exception'"
    assert thrown.substitute("$exceptions + a$exception", "E") == "$exceptions + a$exception"
    assert thrown.names_it("len($exception.args)") and not thrown.names_it('"$exception"')
    assert not thrown.names_it("$exceptional")
