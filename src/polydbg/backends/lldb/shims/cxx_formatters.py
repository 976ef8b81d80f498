"""Formatters loaded into lldb (22.x) for C++ programs, in a category of polydbg's own.

``std::unique_ptr``: lldb 22 cannot parse the ``std::tuple`` behind a GCC ``unique_ptr`` in some
contexts ("DW_TAG_member '_M_t' refers to type … which was unable to be parsed", llvm-project
#204791), and its own libstdc++ formatter then dereferences the missing child and crashes the whole
debugger (#202087, fixed only in lldb 23) — e.g. on any ``std::map<K, std::unique_ptr<T>>``. These
formatters never ask for that tuple: with the default deleter a ``unique_ptr<T>`` is laid out as a
``T*``, so the pointer is read from the value's own storage; with another deleter the tuple is
walked from Python, where a part that does not parse is an invalid value, not a crash.
"""

from __future__ import annotations

import lldb  # type: ignore[import-not-found]


def _head_pointer(value):  # lldb's SB API is untyped
    """The first ``_M_head_impl`` of pointer type below ``value`` (libstdc++'s tuple storage)."""
    pending = [value]
    for _ in range(64):
        if not pending:
            return None
        node = pending.pop(0)
        if not node.IsValid():
            continue
        if node.GetName() == "_M_head_impl" and node.GetType().IsPointerType():
            return node
        pending.extend(node.GetChildAtIndex(i) for i in range(node.GetNumChildren()))
    return None


def managed_pointer(valobj):
    """The pointer a ``std::unique_ptr`` manages, as a value of type ``T*`` (None when unreadable)."""
    raw = valobj.GetNonSyntheticValue()
    kind = raw.GetType().GetCanonicalType()
    pointee = kind.GetTemplateArgumentType(0)
    deleter = kind.GetTemplateArgumentType(1)
    if not pointee.IsValid():
        return None
    pointer_type = pointee.GetPointerType()
    if not deleter.IsValid() or deleter.GetName().startswith("std::default_delete<"):
        address = raw.GetLoadAddress()
        if address != lldb.LLDB_INVALID_ADDRESS:
            return raw.CreateValueFromAddress("pointer", address, pointer_type)
        return raw.CreateValueFromData("pointer", raw.GetData(), pointer_type)
    found = _head_pointer(raw.GetChildMemberWithName("_M_t"))
    return found.Cast(pointer_type) if found is not None else None


class UniquePtr:
    """Children of a ``std::unique_ptr``: the members of the object it owns (a scalar as ``value``),
    none when it is null."""

    def __init__(self, valobj, _internal):
        self.valobj = valobj
        self.owned = None

    def update(self):
        pointer = managed_pointer(self.valobj)
        self.owned = pointer.Dereference() if pointer is not None and pointer.GetValueAsUnsigned(0) else None
        return False

    def has_children(self):
        return True

    def _scalar(self):
        return self.owned is not None and self.owned.GetNumChildren() == 0

    def num_children(self):
        if self.owned is None:
            return 0
        return 1 if self._scalar() else self.owned.GetNumChildren()

    def get_child_index(self, name):
        if self.owned is None:
            return -1
        if self._scalar():
            return 0 if name == "value" else -1
        return self.owned.GetIndexOfChildWithName(name)

    def get_child_at_index(self, index):
        if self.owned is None:
            return None
        if self._scalar():
            return self.owned.Clone("value") if index == 0 else None
        return self.owned.GetChildAtIndex(index)


def unique_ptr_summary(valobj, _internal):
    pointer = managed_pointer(valobj)
    if pointer is None:
        return "unique_ptr (unreadable)"
    address = pointer.GetValueAsUnsigned(0)
    if not address:
        return "nullptr"
    return f"{pointer.GetType().GetPointeeType().GetDisplayTypeName()} @ {address:#x}"


def __lldb_init_module(debugger, _internal_dict):
    pattern = '"^std::unique_ptr<.+>(( )?&)?$"'
    for command in (
        f"type synthetic add -x {pattern} --python-class {__name__}.UniquePtr -w polydbg-cxx",
        f"type summary add -x {pattern} -F {__name__}.unique_ptr_summary -w polydbg-cxx",
        "type category enable polydbg-cxx",
    ):
        debugger.HandleCommand(command)
