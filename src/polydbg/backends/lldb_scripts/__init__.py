"""Python scripts polydbg loads into lldb's own interpreter (``command script import``); they import
lldb's ``lldb`` module and are never imported by polydbg itself."""
