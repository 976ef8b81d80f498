"""Run inside the debugged program, sent by polydbg in one evaluation at a stop (``debug_continue(reload=true)``): the
user's source files edited since the program loaded them (or since the last reload) put into the running program,
all or none. Defined once per process (``_polydbg_reload``): it keeps what each file was when last compared.

Which files: those of the modules in ``sys.modules`` that are the user's (not the standard library, site-packages or
the debugger's), whose size or mtime changed since the last reload, or, before the first, whose mtime is after the
process started (nothing older can have been edited since it was loaded). Each is compiled (nothing is run) and its
code objects, found by qualified name (``total``, ``Cart.add``, ``outer.<locals>.inner``), compared with the
functions the program has: those reachable from the module (functions, methods, static and class methods,
properties, and what a decorator wraps: ``__wrapped__``, a closure's function). What differs is replaced in place,
``function.__code__ = new``, as pydevd's ``xreload`` does, so the function keeps its identity: a reference held
elsewhere (``functools.partial``, a default argument, a callback registry, a bound method) runs the new code too.
Unlike ``xreload`` it never runs the module's code again (a script's module-level code would run the program again),
and refuses rather than skips: a syntax error, a function whose captured variables changed, a class whose layout
changed (bases, ``__slots__``, a dataclass's or named tuple's fields) raise before anything changed.

What is new in the file is added by running only its statement: a top-level def, class, import or assignment whose
names the module lacks, and a new method of an existing class (its def run in a class of the same name, then moved,
its ``__class__`` cell pointed at the real class). Everything else at module level is not run again: a literal the
file assigns that differs from the program's value is named in the notes.

A running frame keeps the code object it started with (CPython has no way to change ``f_code``, nor to restart a
frame: debugpy offers no ``restartFrame``, and a jump stays in the old code): a call in progress of a replaced
function finishes with the old code, and the notes say so; its next calls run the new code. The same holds for a
generator or coroutine already started. Runs on the program's interpreter (Python 3.8 or later).
"""
import ast
import functools
import gc
import json
import linecache
import os
import sys
import types

_seen = {}  # file -> (mtime_ns, size) when last compared with the program's code
_real = {}  # a code's file name -> its real path
_stored = {}  # file -> what each of its top-level assignments ran when last compared (_stores)
_RUNS_ON = 0x20 | 0x80 | 0x200  # CO_GENERATOR, CO_COROUTINE, CO_ASYNC_GENERATOR: a started one keeps its code
_SHOWN = 4  # names listed per note before "and N more"


class Refused(Exception):
    pass


def reload(skipped):
    """JSON: {"replaced": [a line per file], "notes": [...]}, or {"refused": why} when nothing was changed."""
    try:
        files, stats = _edited(skipped)
        plans = [_plan(path, modules) for path, modules in sorted(files.items())]
        done = _apply(plans)
    except Refused as e:
        return json.dumps({"refused": str(e)})
    _seen.update(stats)
    _stored.update((plan["path"], plan["stores"]) for plan in plans)
    replaced = [line for line in (_said(plan) for plan in plans) if line]
    notes = [n for plan in plans for n in plan["notes"]] + _still_old(done)
    if done:
        _debugger_forgets([plan["path"] for plan in plans])
    return json.dumps({"replaced": replaced, "notes": notes})


# -- which files -------------------------------------------------------------------------------------------


def _edited(skipped):
    """{real path: [modules]} of the user's files edited since last compared, and every user file's stat."""
    libraries = _library_dirs(skipped)
    started = _started()
    files, stats = {}, {}
    for module in list(sys.modules.values()):
        name = getattr(module, "__file__", None)
        if not isinstance(name, str) or not name.endswith(".py") or not isinstance(module, types.ModuleType):
            continue
        path = _realpath(name)
        if path.startswith(libraries) or os.sep + "site-packages" + os.sep in path \
                or os.sep + "dist-packages" + os.sep in path:
            continue
        try:
            s = os.stat(path)
        except OSError:
            continue
        stat = (s.st_mtime_ns, s.st_size)
        stats[path] = stat
        known = _seen.get(path)
        if (stat != known) if known is not None else s.st_mtime >= started:
            files.setdefault(path, []).append(module)
    return files, stats


def _library_dirs(skipped):
    import sysconfig

    found = [p for p in skipped if p]
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        try:
            found.append(sysconfig.get_paths()[key])
        except Exception:
            pass
    for name in ("debugpy", "pydevd", "_pydevd_bundle"):
        module = sys.modules.get(name)
        if getattr(module, "__file__", None):
            found.append(os.path.dirname(os.path.dirname(_realpath(module.__file__))))
    return tuple(_realpath(p).rstrip(os.sep) + os.sep for p in found)


def _started():
    """When this process started (seconds since the epoch; 0 where /proc cannot tell: every file is compared)."""
    try:
        with open("/proc/self/stat") as f:
            ticks = int(f.read().rpartition(")")[2].split()[19])
        with open("/proc/stat") as f:
            boot = next(int(line.split()[1]) for line in f if line.startswith("btime"))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except Exception:
        return 0.0


def _realpath(name):
    path = _real.get(name)
    if path is None:
        path = _real[name] = os.path.realpath(name)
    return path


def _shown(path):
    """The file as the agent names it: relative to the current directory when under it."""
    try:
        relative = os.path.relpath(path)
    except ValueError:
        return path
    return path if relative.startswith("..") else relative


# -- what changes, decided before anything does -----------------------------------------------------------


def _plan(path, modules):
    import tokenize

    shown = _shown(path)
    try:
        with tokenize.open(path) as f:
            source = f.read()
        tree = ast.parse(source, path)
        compiled = {id(m): _compiled(m, tree, path) for m in modules}
    except SyntaxError as e:
        text = (e.text or "").strip()
        raise Refused("%s:%s: %s%s" % (shown, e.lineno, e.msg, " (%s)" % text[:80] if text else "")) from None
    except (OSError, ValueError) as e:
        raise Refused("%s cannot be read: %s" % (shown, e)) from None
    plan = {"path": path, "shown": shown, "changed": [], "moved": [], "added": [], "notes": [],
            "code": [], "names": [], "members": [], "caches": [], "loaded": _loaded_stores(path),
            "stores": _stores(compiled[id(modules[0])]) if modules else {}}
    for module in modules:
        codes = {}
        _codes(compiled[id(module)], "", codes)
        live = {}
        _live(module.__dict__.values(), path, module.__name__, live, set())
        _match(plan, codes, live)
        _new_names(plan, tree, module, path)
    return plan


def _compiled(module, tree, path):
    """The file's code as the module's loader makes it: pytest's rewrites a test module's asserts (compiled plainly,
    every function of an edited test file would differ)."""
    loader = getattr(module, "__loader__", None)
    if type(loader).__name__ == "AssertionRewritingHook" and getattr(loader, "config", None) is not None:
        try:
            from pathlib import Path
            from _pytest.assertion.rewrite import _rewrite_test

            return _rewrite_test(Path(path), loader.config)[1]
        except SyntaxError:
            raise
        except Exception:
            pass
    return compile(tree, path, "exec", dont_inherit=True)


def _codes(code, prefix, out):
    """The code objects a module's code holds, by qualified name."""
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            name = getattr(c, "co_qualname", None) or prefix + c.co_name
            out.setdefault(name, []).append(c)
            _codes(c, name + (".<locals>." if c.co_flags & 3 == 3 else "."), out)  # CO_OPTIMIZED | CO_NEWLOCALS


def _live(values, path, module_name, out, seen):
    """The program's functions whose code is from ``path``, by qualified name, reachable from ``values``."""
    for value in values:
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, types.FunctionType):
            if _realpath(value.__code__.co_filename) == path:
                out.setdefault(_qualname(value), []).append(value)
            inner = [c.cell_contents for c in value.__closure__ or () if _filled(c)]
            _live([v for v in inner if callable(v)] + [value.__dict__.get("__wrapped__")], path, module_name, out,
                  seen)
        elif isinstance(value, (staticmethod, classmethod, types.MethodType)):
            _live([value.__func__], path, module_name, out, seen)
        elif isinstance(value, property):
            _live([value.fget, value.fset, value.fdel], path, module_name, out, seen)
        elif isinstance(value, type):
            if getattr(value, "__module__", None) == module_name:
                _live(list(vars(value).values()), path, module_name, out, seen)
        elif isinstance(value, functools.partial):
            _live([value.func], path, module_name, out, seen)
        elif value is not None and not isinstance(value, (types.ModuleType, int, str, bytes, float)):
            try:  # what a C wrapper holds (functools.lru_cache), from its own __dict__: no property of the program runs
                wrapped = object.__getattribute__(value, "__dict__").get("__wrapped__")
            except Exception:
                continue
            if isinstance(wrapped, types.FunctionType):
                _live([wrapped], path, module_name, out, seen)


def _qualname(function):
    """The qualified name the function's code was compiled under (functools.wraps copies another's __qualname__)."""
    code = function.__code__
    name = getattr(code, "co_qualname", None)
    if name is None:
        name = function.__qualname__
        if name.rpartition(".")[2] != code.co_name:
            name = code.co_name
    return name


def _filled(cell):
    try:
        _ = cell.cell_contents
    except ValueError:  # a cell not filled yet
        return False
    return True


def _match(plan, codes, live):
    for name, functions in live.items():
        new = codes.get(name)
        if not new:
            if "<" not in name:
                plan["notes"].append("%s: %s is no longer in the file; the program keeps it" % (plan["shown"], name))
            continue
        olds = sorted({id(f.__code__): f.__code__ for f in functions}.values(), key=lambda c: c.co_firstlineno)
        if len(new) == 1:
            pairs = {id(c): new[0] for c in olds}
        elif len(new) == len(olds):
            pairs = {id(c): n for c, n in zip(olds, sorted(new, key=lambda c: c.co_firstlineno))}  # noqa: B905 (3.8)
        else:
            plan["notes"].append("%s: %s is defined %d times in the file and %d in the program: not replaced"
                                 % (plan["shown"], name, len(new), len(olds)))
            continue
        for function in functions:
            old, now = function.__code__, pairs[id(function.__code__)]
            if _same(old, now, True):
                continue
            if old.co_freevars != now.co_freevars:
                raise Refused("%s: %s now uses other variables of its enclosing scope (%s, was %s): a function "
                              "made already keeps the variables it captured; debug_restart runs the edited program"
                              % (plan["shown"], name, ", ".join(now.co_freevars) or "none",
                                 ", ".join(old.co_freevars) or "none"))
            plan["code"].append((function, now))
            kind = "moved" if _same(old, now, False) else "changed"
            if "<" not in name and name not in plan[kind]:
                plan[kind].append(name)


def _same(a, b, lines):
    """Whether two code objects do the same (and, with ``lines``, on the same lines)."""
    for attribute in ("co_code", "co_names", "co_varnames", "co_freevars", "co_cellvars", "co_flags", "co_argcount",
                      "co_posonlyargcount", "co_kwonlyargcount", "co_exceptiontable") + (
                          ("co_firstlineno", "co_linetable", "co_lnotab") if lines else ()):
        if getattr(a, attribute, None) != getattr(b, attribute, None):
            return False
    if len(a.co_consts) != len(b.co_consts):
        return False
    for x, y in zip(a.co_consts, b.co_consts):  # noqa: B905 (the program's Python may be 3.8)
        if isinstance(x, types.CodeType) and isinstance(y, types.CodeType):
            if not _same(x, y, lines):
                return False
        elif type(x) is not type(y) or x != y or repr(x) != repr(y):
            return False
    return True


def _new_names(plan, tree, module, path):
    """Statements binding names the module lacks (added by running them), methods new in a class, layouts changed
    (refused), and literals that differ from the program's values (noted). A module whose own code is still running
    (a script stopped in its top-level loop) goes on with its old code: what it has not reached yet is left to it."""
    namespace = module.__dict__
    reached = _running_at(module)
    for statement in tree.body:
        names = _bound(statement)
        if reached is not None and statement.lineno > reached:
            if names:
                plan["notes"].append("%s:%d: the module's own code is running still, its old code: what it defines "
                                     "below this line comes from the old code when it gets there"
                                     % (plan["shown"], reached))
                break
            continue
        if names and not any(n in namespace for n in names):
            plan["names"].append((module, statement, names))
            plan["added"].extend(n for n in names if n not in plan["added"])
        elif isinstance(statement, ast.ClassDef) and isinstance(namespace.get(statement.name), type):
            _class(plan, statement, namespace[statement.name], module)
        elif isinstance(statement, ast.Assign) and len(names) == 1 and names[0] in namespace:
            _literal(plan, statement, names[0], namespace[names[0]], module.__name__)


def _running_at(module):
    """The line a module's own top-level code is at, when a thread runs it still (None: it has finished)."""
    for frame in sys._current_frames().values():
        while frame is not None:
            if frame.f_globals is module.__dict__ and frame.f_code.co_name == "<module>":
                return frame.f_lineno
            frame = frame.f_back
    return None


def _bound(statement):
    """The names a top-level statement binds, when it is one whose running adds them (def, class, import, assign)."""
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return [statement.name]
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        if any(a.name == "*" for a in statement.names):
            return []
        return [(a.asname or a.name).split(".")[0] for a in statement.names]
    targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target] if isinstance(
        statement, ast.AnnAssign) and statement.value is not None else []
    names = [n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name)]
    plain = all(isinstance(t, (ast.Name, ast.Tuple, ast.List)) for t in targets)
    return names if plain else []


def _class(plan, node, cls, module):
    if getattr(cls, "__module__", None) != module.__name__:
        return
    shown, name = plan["shown"], node.name
    _bases(shown, node, cls, module.__dict__)
    slots = next((s.value for s in node.body if isinstance(s, ast.Assign)
                  and any(getattr(t, "id", None) == "__slots__" for t in s.targets)), None)
    wanted = _slots(slots)
    present = _slots(vars(cls).get("__slots__"))
    if wanted != present and wanted is not None:
        _layout(shown, name, "its __slots__ (%s, was %s)" % (", ".join(wanted), ", ".join(present or ["none"])))
    fields = _fields(cls)
    if fields is not None:
        inherited = {n for base in cls.__mro__[1:] for n in getattr(base, "__dataclass_fields__", ())}
        annotated = [s.target.id for s in node.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)
                     and s.target.id not in inherited]
        if annotated != fields:
            _layout(shown, name, "its fields (%s, was %s)" % (", ".join(annotated) or "none",
                                                             ", ".join(fields) or "none"))
    new = [s for s in node.body if _bound(s) and not any(n in vars(cls) for n in _bound(s))
           and not isinstance(s, (ast.Import, ast.ImportFrom, ast.ClassDef))]
    if new:
        plan["members"].append((module, cls, node, new))
        plan["added"].extend("%s.%s" % (name, n) for s in new for n in _bound(s))
    for statement in node.body:
        names = _bound(statement)
        if isinstance(statement, ast.Assign) and len(names) == 1 and names[0] in vars(cls) \
                and names[0] != "__slots__":
            _literal(plan, statement, names[0], vars(cls)[names[0]], module.__name__, name)


def _bases(shown, node, cls, namespace):
    """Refuses a base class added or removed, among the names the module resolves to classes (typing's bases, such as
    NamedTuple or Protocol, are not what the class's __bases__ hold: they are left alone)."""
    named = [namespace.get(b.id) for b in node.bases if isinstance(b, ast.Name)]
    added = [b.__name__ for b in named if isinstance(b, type) and b not in cls.__mro__]
    names = {b.id for b in node.bases if isinstance(b, ast.Name)}
    removed = [b.__name__ for b in cls.__bases__ if namespace.get(b.__name__) is b and b.__name__ not in names
               and getattr(b, "__module__", None) == cls.__module__]
    if added or removed:
        _layout(shown, node.name, "its bases (%s)" % "; ".join(
            ["added " + ", ".join(added)] * bool(added) + ["removed " + ", ".join(removed)] * bool(removed)))


def _fields(cls):
    """A dataclass's fields of its own, or a named tuple's (None: another class)."""
    own = vars(cls)
    if "__dataclass_fields__" in own:
        inherited = {n for base in cls.__mro__[1:] for n in getattr(base, "__dataclass_fields__", ())}
        return [n for n in own["__dataclass_fields__"] if n not in inherited]
    if tuple in cls.__bases__ and isinstance(own.get("_fields"), tuple):
        return list(own["_fields"])
    return None


def _slots(value):
    if isinstance(value, ast.AST):
        try:
            value = ast.literal_eval(value)
        except ValueError:
            return None
    if value is None:
        return None
    return [value] if isinstance(value, str) else [str(v) for v in value]


def _layout(shown, name, what):
    raise Refused("%s: class %s changed %s: its instances are made already, with the old layout, and a running "
                  "program cannot take it; debug_restart runs the edited program" % (shown, name, what))


_LITERALS = (int, float, complex, str, bytes, bool, tuple, list, dict, set, frozenset, type(None))


def _literal(plan, statement, name, value, owner, prefix=""):
    """A note when the file assigns a literal other than the program's value — only when the statement changed since
    the program loaded it: a value the program changed itself (a registry filled at import, a counter) is its own."""
    if type(value) not in _LITERALS or (hasattr(value, "__len__") and len(value) > 100):
        return  # another kind of value (no __eq__ or __repr__ of the program's is run) or a long one
    label = "%s.%s" % (prefix, name) if prefix else name
    loaded = plan["loaded"]
    if loaded is not None and loaded.get(label) == plan["stores"].get(label, ()):
        return  # the statement is as the program ran it
    if loaded is None and isinstance(value, (list, dict, set)):
        return  # unknown what the program ran, and a container it may have filled since
    try:
        wanted = ast.literal_eval(statement.value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return
    if type(wanted) is type(value) and wanted == value:
        return
    plan["notes"].append("%s:%d: %s = %s in the file, %s in the program%s: code outside functions is not run again "
                         "(debug_evaluate(\"__import__('sys').modules[%r].%s = %s\") sets it)"
                         % (plan["shown"], statement.lineno, label, _short(wanted), _short(value),
                            " (which may have changed it itself: set it only if you edited this line)"
                            if loaded is None else "", owner, label, _short(wanted)))


def _loaded_stores(path):
    """What the file's assignments ran when the program loaded it: as the last reload compared it, else as its
    bytecode cache holds it (written when the module was imported: a process importing the edited file since rewrites
    it, and an edited literal goes unnoticed; None when there is none)."""
    known = _stored.get(path)
    if known is not None:
        return known
    try:
        import importlib.util
        import marshal

        with open(importlib.util.cache_from_source(path), "rb") as f:
            data = f.read()
        if data[:4] != importlib.util.MAGIC_NUMBER:
            return None
        return _stores(marshal.loads(data[16:]))
    except Exception:
        return None


def _stores(code, prefix="", out=None):
    """What each assignment of a module's (or a class body's) own code runs, by the name it stores (``LIMIT``,
    ``Config.RETRIES``): the instructions since the previous store, without lines or jump offsets."""
    import dis

    out = {} if out is None else out
    run = []
    for i in dis.get_instructions(code):
        if i.opname in ("STORE_NAME", "STORE_GLOBAL"):
            out.setdefault(prefix + i.argval, tuple(run))
            run = []
        elif isinstance(i.argval, types.CodeType):
            if not i.argval.co_flags & 3:  # a class body (not CO_OPTIMIZED | CO_NEWLOCALS, as a function is)
                _stores(i.argval, prefix + i.argval.co_name + ".", out)
            run.append((i.opname, i.argval.co_name))
        else:
            run.append((i.opname, None if i.opcode in dis.hasjrel or i.opcode in dis.hasjabs else repr(i.argval)))
    return out


def _short(value):
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _ran(plan, module, statements, scratch):
    """Run ``statements`` of the file with the module's globals and ``scratch`` as locals (the module is untouched);
    a statement that fails refuses the reload."""
    for statement in statements:
        try:
            code = compile(ast.Module(body=[statement], type_ignores=[]), plan["path"], "exec", dont_inherit=True)
            exec(code, module.__dict__, scratch)
        except Exception as e:
            raise Refused("%s:%d: the new statement failed when run: %s: %s (nothing was reloaded; fix it, or "
                          "debug_restart)" % (plan["shown"], statement.lineno, type(e).__name__, e)) from None


# -- the change, all or none -------------------------------------------------------------------------------


def _apply(plans):
    """Run the new statements (nothing of the program changes yet), then put everything in; the replaced codes."""
    staged = []  # (holder, name, value): set in a module's namespace or on a class
    for plan in plans:
        for module, statement, names in plan["names"]:
            scratch = {}
            _ran(plan, module, [statement], scratch)
            staged += [(module, n, scratch[n]) for n in names if n in scratch]
        for module, cls, node, statements in plan["members"]:
            scratch = {}
            shell = ast.ClassDef(name=node.name, bases=[], keywords=[], body=statements, decorator_list=[])
            for key in ("lineno", "col_offset", "end_lineno", "end_col_offset"):
                setattr(shell, key, getattr(node, key, None))
            if sys.version_info >= (3, 12):
                shell.type_params = []
            _ran(plan, module, [ast.fix_missing_locations(shell)], scratch)
            made = vars(scratch[node.name])
            for s in statements:
                for n in _bound(s):
                    if n in made:
                        _pointed(made[n], cls)
                        staged.append((cls, n, made[n]))
    done, added = [], []
    try:
        for plan in plans:
            for function, code in plan["code"]:
                old = function.__code__
                function.__code__ = code
                done.append((function, old))
        for holder, name, value in staged:
            if isinstance(holder, type):
                setattr(holder, name, value)
            else:
                holder.__dict__[name] = value
            added.append((holder, name))
    except Exception as e:
        for function, old in reversed(done):
            function.__code__ = old
        for holder, name in added:
            if isinstance(holder, type):
                delattr(holder, name)
            else:
                holder.__dict__.pop(name, None)
        raise Refused("the change could not be put in (%s: %s); nothing was changed: debug_restart runs the edited "
                      "program" % (type(e).__name__, e)) from None
    for plan in plans:
        for function, old in done:
            if not _same(old, function.__code__, False):
                _cleared(plan, function)
    return done


def _pointed(member, cls):
    """A method made in a stand-in class: its ``__class__`` cell (``super()``) names the real class."""
    for function in (member, getattr(member, "__func__", None), getattr(member, "fget", None)):
        code = getattr(function, "__code__", None)
        if code is not None and "__class__" in code.co_freevars:
            function.__closure__[code.co_freevars.index("__class__")].cell_contents = cls


def _cleared(plan, function):
    """A replaced function whose results a cache (functools.lru_cache) keeps: the cache is emptied."""
    for module in sys.modules.values():
        if _realpath(getattr(module, "__file__", None) or "") != plan["path"]:
            continue
        for value in list(vars(module).values()):
            if getattr(value, "__wrapped__", None) is function and callable(getattr(value, "cache_clear", None)):
                value.cache_clear()
                note = "%s: %s's cache was cleared (its results came from the old code)" % (plan["shown"],
                                                                                          _qualname(function))
                if note not in plan["notes"]:
                    plan["notes"].append(note)


def _said(plan):
    parts = []
    if plan["changed"]:
        parts.append(", ".join(plan["changed"]))
    if plan["added"]:
        parts.append("added " + ", ".join(plan["added"]))
    if not parts and plan["moved"]:
        parts.append("lines moved only (%s)" % ", ".join(plan["moved"]))
    return "%s: %s" % (plan["shown"], "; ".join(parts)) if parts else ""


def _still_old(done):
    """Notes on the calls in progress and the generators started that keep running the old code."""
    changed = {id(old): function for function, old in done if not _same(old, function.__code__, False)}
    if not changed:
        return []
    notes, running = [], []
    for thread_frame in sys._current_frames().values():
        frame = thread_frame
        while frame is not None:
            function = changed.get(id(frame.f_code))
            if function is not None:
                running.append("%s (%s:%d)" % (_qualname(function), os.path.basename(frame.f_code.co_filename),
                                               frame.f_lineno))
            frame = frame.f_back
    del thread_frame, frame
    if running:
        notes.append("%s %s running: %s with the old code (Python cannot change the code of a call in progress, "
                     "nor restart it); the next calls run the new code"
                     % (_listed(running), "is" if len(running) == 1 else "are",
                        "this call finishes" if len(running) == 1 else "these calls finish"))
    olds = [old for function, old in done if id(old) in changed and old.co_flags & _RUNS_ON]
    if olds:
        started = {}
        for holder in gc.get_referrers(*olds):
            code = getattr(holder, "gi_code", None) or getattr(holder, "cr_code", None) or getattr(
                holder, "ag_code", None)
            frame = getattr(holder, "gi_frame", None) or getattr(holder, "cr_frame", None) or getattr(
                holder, "ag_frame", None)
            if code is not None and frame is not None and id(code) in changed:
                started[code.co_name] = started.get(code.co_name, 0) + 1
        if started:
            notes.append("generators or coroutines started already keep the old code until they finish (%s); new "
                         "ones run the new code" % _listed(["%s: %d" % (name, n) for name, n in started.items()]))
    return notes


def _listed(items):
    shown = ", ".join(items[:_SHOWN])
    return shown + (" and %d more" % (len(items) - _SHOWN) if len(items) > _SHOWN else "")


def _debugger_forgets(paths):
    """pydevd's caches of what it decided per code object and line (which frames to trace) start again."""
    for path in paths:
        linecache.checkcache(path)
    try:
        from _pydevd_bundle import pydevd_dont_trace
        from _pydevd_bundle.pydevd_constants import get_global_debugger

        pydevd_dont_trace.clear_trace_filter_cache()
        debugger = get_global_debugger()
        if debugger is not None:
            debugger.on_breakpoints_changed()
    except Exception:
        pass
