"""Backends: one package per debugger, each of the same form.

``base.py`` is the contract every backend implements (the ``Backend`` protocol, its value types, and
``BackendInfo``); ``registry.py`` lists the backends (each package's ``info.py``) and answers what the
layers above ask about a language; ``locate.py`` finds the debuggers on this machine; ``kit/`` holds
the pieces several backends share. Each backend package — ``dap/`` (any DAP adapter), ``debugpy/``,
``lldb/``, ``delve/`` (on ``dap/``), ``gdb/`` (GDB/MI), ``node/`` (the V8 inspector), ``java/`` (JDWP) —
says in its ``__init__`` what the debugger is, how it is started and its quirks; ``info.py`` is what
polydbg knows of it before importing it, ``backend.py`` the class the registry names, ``shims/`` the
code it runs inside other processes.
"""
