"""Small pure parts of the java backend: array indexes, class scans' filters."""

from __future__ import annotations

import pytest

from polydbg.backends.java import vm as vm_module
from polydbg.backends.java.classes import JavaClass, short_name
from polydbg.backends.java.inspection import array_index
from polydbg.backends.java.stepping import STEP_EXCLUDES
from polydbg.backends.java.vm import LIBRARY_PACKAGES, Vm, is_hidden, is_runtime, program_classes
from polydbg.jdwp.codec import TypeTag
from tests.unit.backends.java.fakevm import FakeVm


def test_an_array_element_is_named_with_or_without_brackets() -> None:
    assert array_index("[3]") == 3
    assert array_index(" 12 ") == 12
    assert array_index("[ 0 ]") == 0
    assert array_index("x") is None
    assert array_index("[-1]") is None


def test_a_step_skips_the_jdk_and_kotlin_s_runtime() -> None:
    assert "kotlin.*" in STEP_EXCLUDES and "java.*" in STEP_EXCLUDES
    assert "kotlin." in LIBRARY_PACKAGES


async def test_the_program_s_classes_leave_out_the_jdk_and_hidden_classes(monkeypatch: pytest.MonkeyPatch) -> None:
    vm = FakeVm()
    mine = vm.load(1, "Ldemo/Main;", "Main.java", {})
    jdk = vm.classes.known(2, TypeTag.CLASS, "Ljava/lang/String;")
    lambda_class = vm.classes.known(3, TypeTag.CLASS, "Ldemo/Main$$Lambda$14/0x0000000800c0b000;")
    assert is_runtime(jdk) and not is_runtime(mine)
    assert is_hidden(lambda_class) and not is_hidden(mine)
    listed = [mine, jdk, lambda_class]

    async def loaded(_vm: Vm) -> list[JavaClass]:
        return list(listed)

    monkeypatch.setattr(vm_module, "loaded_classes", loaded)
    assert await program_classes(vm) == [mine]


def test_a_short_name_dots_nested_classes_but_keeps_a_leading_dollar() -> None:
    assert short_name("Ldemo/User$Inner;") == "User.Inner"
    assert short_name("Ljdk/proxy1/$Proxy7;") == "$Proxy7"  # was: .Proxy7
    assert short_name("Lcom/sun/proxy/$Proxy12;") == "$Proxy12"
    assert short_name("Ldemo/MainKt$main$1;") == "MainKt.main.1"
    assert short_name("LBusy$$Lambda$14/0x0000000800c0b000;") == "Busy.lambda"
