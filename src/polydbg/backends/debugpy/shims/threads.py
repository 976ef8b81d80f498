"""Run inside the debugged program, sent by polydbg in one evaluation at a stop: what its threads hold and wait for,
its asyncio tasks, and the frames of threads debugpy cannot inspect (blocked in C code, they are not stopped).

One evaluation answers for every thread (JSON, read in the ``clipboard`` context, which pydevd does not cut), so a
listing of 200 threads costs one round trip. Read only: the program's code is never called; a lock is found by
evaluating the expression of a ``with`` statement or an ``.acquire(`` call only when it is a plain name, attribute or
subscript (nothing that calls code). Runs on the program's interpreter (Python 3.8 or later).

What Python records, and what is inferred:
- an RLock records its owner (the C one in its repr, ``owner=<ident>``; the pure one in ``_owner``);
- a plain Lock records none: a thread holds it when a ``with`` block of it encloses the line the thread is at in
  one of its frames and the lock is locked (sound unless the body released it by hand); a lock taken by a bare
  ``acquire()`` has no holder found ("owner not recorded");
- a thread waits for a lock when its innermost frame is at a ``with X`` / ``X.acquire(`` line and X cannot be
  taken by it now (acquiring is C code: it adds no frame); a thread in ``Condition.wait()`` waits to be notified,
  not for a lock (the Condition's lock is released meanwhile).
"""
import ast
import json
import linecache
import re
import sys
import threading

_OWNER = re.compile(r"owner=(\d+)")
_trees = {}


_places = {}


def _runtime():
    """Where the debugger's own code is (its frames are not the program's), and the probe's name."""
    if "runtime" in _places:
        return _places["runtime"]
    import os

    found = ["<ipython-polydbg-probe>", "<polydbg-probe>"]
    for name in ("debugpy", "pydevd"):
        module = sys.modules.get(name)
        if getattr(module, "__file__", None):  # debugpy's own reads …/launcher/../../debugpy/__init__.py
            found.append(os.path.dirname(os.path.normpath(module.__file__)) + os.sep)
    _places["runtime"] = tuple(found)
    return _places["runtime"]


def _program_threads():
    """ident → Thread of the program's own threads (pydevd's and the probe are not)."""
    found = {}
    for ident, thread in list(threading._active.items()):
        if getattr(thread, "is_pydev_daemon_thread", False) or thread.name.startswith(("pydevd.", "polydbg-")):
            continue
        found[ident] = thread
    return found


def _frames(top):
    """A thread's frames, innermost first."""
    out = []
    while top is not None:
        out.append(top)
        top = top.f_back
    return out


def _match(wanted, current):
    """The Python thread of each listed one ([id, name, function, line] → ident): by name, and among threads of the
    same name by the frame at the top of its listing."""
    threads, taken, found = _program_threads(), set(), {}
    for tid, name, function, line in wanted:
        same = [i for i, t in threads.items() if t.name == name and i not in taken]
        if len(same) > 1 and function is not None:
            placed = [i for i in same if any(f.f_code.co_name == function and f.f_lineno == line
                                             for f in _frames(current.get(i)))]
            same = placed or same
        if same:
            found[tid] = same[0]
            taken.add(same[0])
    return found


def _statements(filename):
    """The ``with`` items and ``.acquire(`` calls of a file: (kind, first line, body's first line, last line, the
    expression's text, its code when evaluating it calls nothing of the program's)."""
    if filename not in _trees:
        found = []
        try:
            tree = ast.parse("".join(linecache.getlines(filename)))
        except (SyntaxError, ValueError):
            tree = None
        for node in ast.walk(tree) if tree is not None else ():
            if isinstance(node, ast.With):
                found += [("with", node.lineno, node.body[0].lineno, node.end_lineno, item.context_expr)
                          for item in node.items]
            elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "acquire":
                found.append(("acquire", node.lineno, node.end_lineno + 1, node.end_lineno, node.func.value))
        _trees[filename] = [(kind, first, body, last, _text(expression),
                             compile(ast.Expression(expression), "<lock>", "eval") if _plain(expression) else None)
                            for kind, first, body, last, expression in found]
    return _trees[filename]


def _plain(node):
    """Whether evaluating ``node`` runs no code of the program's (names, attributes, constant subscripts)."""
    if isinstance(node, ast.Name):
        return True
    if isinstance(node, ast.Attribute):
        return _plain(node.value)
    if isinstance(node, ast.Subscript):
        index = node.slice.value if type(node.slice).__name__ == "Index" else node.slice
        return _plain(node.value) and isinstance(index, (ast.Constant, ast.Name))
    return False


def _text(node):
    try:
        return ast.unparse(node)
    except AttributeError:  # Python 3.8
        return type(node).__name__


def _value(code, frame):
    if code is None:
        return None
    try:
        return eval(code, frame.f_globals, frame.f_locals)
    except Exception:
        return None


class _Locks:
    """The locks seen, each under one name (the first expression it was found by)."""

    def __init__(self, idents):
        self.idents = idents  # Python ident → the listing's thread id
        self.seen = {}

    def key(self, obj, text):
        """The lock's id for ``obj`` (a Condition is its lock's), or None when ``obj`` is no lock."""
        kind = type(obj).__name__
        if isinstance(obj, threading.Condition):
            lock, kind = obj._lock, "Condition"
        elif kind in ("lock", "RLock", "_RLock"):
            lock, kind = obj, "Lock" if kind == "lock" else "RLock"
        else:
            return None
        key = str(id(lock))
        if key not in self.seen:
            self.seen[key] = [f"threading.{kind} {text} at {id(lock):#x}", kind, self.owner(lock), lock,
                              type(lock).__name__ == "lock"]  # a plain Lock (a Condition's too) records no owner
        return key

    def owner(self, lock):
        """The listing's id of the thread holding an RLock (None: free, a Lock, or a thread not listed)."""
        if hasattr(lock, "_owner"):
            ident = lock._owner
        else:
            held = _OWNER.search(repr(lock))
            ident = int(held.group(1)) if held else None
        return self.idents.get(ident) if ident else None

    def held_by(self, key, ident):
        """Whether the thread ``ident`` holds the lock, as far as it tells: a locked Lock is taken to be held by the
        thread whose ``with`` encloses its line; an RLock names its owner."""
        lock, plain = self.seen[key][3:5]
        if plain:
            return lock.locked()
        return self.owner(lock) == self.idents.get(ident)

    def blocks(self, key, ident):
        """Whether the thread ``ident`` would block taking the lock now."""
        lock, plain = self.seen[key][3:5]
        if plain:
            return lock.locked()
        return "unlocked" not in repr(lock) and not self.held_by(key, ident) if not hasattr(lock, "_owner") \
            else lock._owner not in (None, ident)


def _library():
    """Where the standard library and installed packages are."""
    if "library" not in _places:
        import os
        import sysconfig

        paths = sysconfig.get_paths()
        _places["library"] = tuple({paths[k] + os.sep for k in ("stdlib", "platstdlib", "purelib", "platlib")
                                    if paths.get(k)})
    return _places["library"]


def _state(thread, frames):
    """What a thread debugpy has not stopped waits in: the library call the program's innermost frame made ("in
    Future.result()", "in Thread.join() of 'left'", "in Condition.wait()"); and the Condition it waits on."""
    info = getattr(thread, "additional_info", None)
    if getattr(info, "is_in_wait_loop", False):  # stopped by pydevd: it is where its frames say
        return None, None
    library, runtime = _library(), _runtime()
    called = condition = None
    for frame in frames:  # innermost first
        file = frame.f_code.co_filename
        if file.startswith(runtime) and called is None:
            continue
        if not file.startswith(library) or file.startswith(runtime) or frame.f_code.co_name == "<module>":
            break
        called, owner = frame, frame.f_locals.get("self")
        if isinstance(owner, threading.Condition) and frame.f_code.co_name == "wait":
            condition = owner
        if frame.f_code.co_name == "_run_once" and hasattr(owner, "_ready"):  # an event loop: what it waits in
            idle = frames[0].f_code.co_name == "select"
            return f"in {type(owner).__name__}.run_forever()" + (": waiting for I/O or a timer" if idle else ""), None
    if called is None:
        return None, None
    owner, name = called.f_locals.get("self"), called.f_code.co_name
    if isinstance(owner, threading.Thread) and name == "join":
        return f"in Thread.join() of {owner.name!r}", condition
    where = type(owner).__name__ if owner is not None else called.f_globals.get("__name__", "?")
    return f"in {where}.{name}()", condition


def locks(wanted):
    """JSON of what each listed thread ([id, name, function, line]) holds and waits for, and the locks seen."""
    current = sys._current_frames()
    idents = _match(wanted, current)
    found = _Locks({ident: tid for tid, ident in idents.items()})
    runtime, program = _runtime(), _program_threads()
    threads = {}
    for tid, ident in idents.items():
        frames = _frames(current.get(ident))
        state, condition = _state(program.get(ident), frames)
        holds, waits = [], None
        for depth, frame in enumerate(frames):
            code = frame.f_code
            if code.co_filename == threading.__file__ or code.co_filename.startswith(runtime):
                continue
            line = frame.f_lineno
            for kind, first, body, last, text, value in _statements(code.co_filename):
                if kind == "with" and body <= line <= last:
                    key = found.key(_value(value, frame), text)
                    if key and key not in holds and found.held_by(key, ident):
                        holds.append(key)
                elif depth == 0 and first <= line < body:
                    key = found.key(_value(value, frame), text)
                    if key and found.blocks(key, ident):
                        waits = key
        if condition is not None:  # its lock is released while it waits
            holds = [k for k in holds if k != str(id(condition._lock))]
        threads[tid] = {"holds": holds, "waits": waits, "state": state}
    return json.dumps({"threads": threads, "locks": {k: v[:3] for k, v in found.seen.items()}})


def _frame(thread, frames):
    """The Python frame of a listed thread ([id, name, function, line]) that its listing's frames ([function, line],
    innermost first, hidden ones left out) end at."""
    current = sys._current_frames()
    ident = _match([thread], current).get(thread[0])
    if ident is None:
        raise LookupError(f"thread {thread[1]!r} has ended")
    left = iter(_frames(current.get(ident)))
    found = None
    for function, line in frames:
        name = function.rpartition(".")[2]
        found = next((f for f in left if f.f_code.co_name == name and f.f_lineno == line), None)
        if found is None:
            raise LookupError(f"thread {thread[1]!r} is no longer where it was listed: list its stack again")
    return found


def value_at(thread, frames, expression):
    """``expression`` evaluated in a thread's frame (a statement is run, and None returned)."""
    frame = _frame(thread, frames)
    try:
        code = compile(expression, "<expression>", "eval")
    except SyntaxError:
        exec(compile(expression, "<statement>", "exec"), frame.f_globals, frame.f_locals)
        return None
    return eval(code, frame.f_globals, frame.f_locals)


def scope_at(thread, frames, which):
    """A frame's locals (or globals) as an object whose attributes they are, for a listing of its children."""
    import types

    frame = _frame(thread, frames)
    names = frame.f_locals if which == "Locals" else frame.f_globals
    return types.SimpleNamespace(**{k: v for k, v in names.items() if isinstance(k, str) and k.isidentifier()})


def assign_at(thread, frames, name, expression):
    """Set a local of a thread's frame to ``expression``'s value there; the value set."""
    frame = _frame(thread, frames)
    value = eval(compile(expression, "<value>", "eval"), frame.f_globals, frame.f_locals)
    names = frame.f_locals
    if names is frame.f_globals or name not in names:
        frame.f_globals[name] = value
        return value
    names[name] = value
    import ctypes

    to_fast = getattr(ctypes.pythonapi, "PyFrame_LocalsToFast", None)  # gone in 3.13, where f_locals writes through
    if to_fast is not None:
        to_fast(ctypes.py_object(frame), ctypes.c_int(0))
    return value


def _loops(current):
    """ident → the asyncio loop a thread runs (its ``run_forever`` frame's ``self``)."""
    found = {}
    for ident, top in current.items():
        for frame in _frames(top):
            loop = frame.f_locals.get("self") if frame.f_code.co_name == "run_forever" else None
            if loop is not None and hasattr(loop, "_ready"):
                found[ident] = loop
                break
    return found


def _chain(coroutine):
    """A coroutine's awaits, outermost first ([function, file, line] each), and the awaitable past the last one."""
    frames, past = [], None
    while coroutine is not None:
        frame = getattr(coroutine, "cr_frame", None) or getattr(coroutine, "gi_frame", None)
        if frame is None:
            break
        name = getattr(coroutine, "__qualname__", None) or frame.f_code.co_name
        frames.append([name, frame.f_code.co_filename, frame.f_lineno])
        inner = getattr(coroutine, "cr_await", None) or getattr(coroutine, "gi_yieldfrom", None)
        if inner is None or not (hasattr(inner, "cr_frame") or hasattr(inner, "gi_frame")):
            past = inner
            break
        coroutine = inner
    return frames, past


def _awaiting(task, frames, running):
    """What a pending task waits for: another task, a gather of tasks, or the innermost coroutine of its chain."""
    import asyncio
    import os

    if task in running:
        return f"nothing: it is running on thread {running[task]!r}"
    waiter = getattr(task, "_fut_waiter", None)
    if isinstance(waiter, asyncio.Task):
        return f"task {waiter.get_name()!r}"
    children = getattr(waiter, "_children", None)
    if children is not None:
        return "gather of " + ", ".join(f"task {c.get_name()!r}" if isinstance(c, asyncio.Task) else repr(c)[:60]
                                        for c in children)
    if frames:
        name, file, line = frames[-1]
        return f"{name} at {os.path.basename(file)}:{line}"
    return repr(waiter)[:120] if waiter is not None else "nothing: it is scheduled to run"


def _tasks(current):
    """Every pending task of every running loop, and the task each thread runs (task → its thread's name)."""
    import asyncio

    names = {i: t.name for i, t in _program_threads().items()}
    pending, running = [], {}
    for ident, loop in _loops(current).items():
        now = asyncio.current_task(loop)
        if now is not None:
            running[now] = names.get(ident, str(ident))
        pending += [task for task in asyncio.all_tasks(loop) if not task.done()]
    return pending, running


def tasks():
    """JSON of the program's pending asyncio tasks: name, what each awaits, its chain of coroutines."""
    if "asyncio" not in sys.modules:
        return "[]"
    pending, running = _tasks(sys._current_frames())
    out = []
    for task in pending:
        frames, _ = _chain(task.get_coro())
        out.append({"name": task.get_name(), "awaiting": _awaiting(task, frames, running), "frames": frames})
    return json.dumps(out)


def _awaited_by(task, pending):
    """The task that awaits ``task`` (directly, or through a gather), or None."""
    for other in pending:
        waiter = getattr(other, "_fut_waiter", None)
        if waiter is task or task in (getattr(waiter, "_children", None) or ()):
            return other
    return None


def async_callers(thread):
    """JSON of the tasks awaiting the one a listed thread runs, outward: [[how, [[function, file, line], …]], …],
    each task's coroutines innermost first."""
    if "asyncio" not in sys.modules:
        return "[]"
    import asyncio

    current = sys._current_frames()
    loop = _loops(current).get(_match([thread], current).get(thread[0]))
    pending, _ = _tasks(current)
    task = asyncio.current_task(loop) if loop is not None else None
    out, seen = [], set()
    while task is not None and id(task) not in seen:
        seen.add(id(task))
        caller = _awaited_by(task, pending)
        if caller is None:
            break
        frames, _ = _chain(caller.get_coro())
        out.append([f"awaited by task {caller.get_name()!r}", frames[::-1]])
        task = caller
    return json.dumps(out)


def stopped(thread):
    """JSON: whether pydevd holds a listed thread stopped (it waits in pydevd's loop), and what else it waits in."""
    current = sys._current_frames()
    ident = _match([thread], current).get(thread[0])
    info = getattr(_program_threads().get(ident), "additional_info", None)
    return json.dumps({"stopped": bool(getattr(info, "is_in_wait_loop", False)),
                       "state": _state(None, _frames(current.get(ident)))[0]})
