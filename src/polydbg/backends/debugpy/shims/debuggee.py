"""Prefixes the launcher's and the debuggee's command lines (debugpy puts its own arguments after ours).

It drops the -X option debugpy appends, sets TCP_NODELAY on the first TCP connect (to the adapter) and
restores ``socket.connect``, registers the tracepoint guard ``_polydbg.v``, lets pydevd find polydbg's value
formatters (the ``pydevd/`` folder ``POLYDBG_VALUES`` names: pydevd's extension package is imported from
debugpy's copy with that folder on sys.path, which is then as it was, so the program's sys.path is its own),
and runs the real entry point as ``python <path>`` would (a ``sys.exit("message")`` exits like Python's does,
printing the message and ending with 1: pydevd would stop on it as an exception, as it ignores only int codes
with ``breakOnSystemExit: []``).
``v`` evaluates a hex-encoded expression in its caller's frame (the logpoint's) and never raises, so one failing
expression cannot swallow a whole trace line; the value is written as pydevd writes it in a listing (with
polydbg's formatters: a row reads ``Row(id=1, …)``, not ``<sqlite3.Row object at 0x…>``, and a long list is
cut). The shim also memoizes pydevd's ``_get_code_lines`` by file, mtime and size: pydevd compiles the whole
file again for every breakpoint of a ``setBreakpoints`` (16 ms for a 2,000-line file: adding one breakpoint to
a file with 2,000 took 22-35 s); a finder patches it when pydevd imports it.
The same finder makes a stack request for a thread that is not stopped (one blocked in C code: a lock, a sleep, a
read, which no trace function reaches) answer at once with the frames the thread is in: pydevd waits 0.5 s for
such a thread to stop first, and as debugpy's adapter handles one request after another, the stacks of 2,000
threads waiting on an Event took 0.63 s each, 21 minutes in all (3 ms each now).
An exception breakpoint on a class pydevd cannot resolve by ``eval`` or import (one of ``__main__``, of a module not
imported yet) is dropped by pydevd (and one it can import, it imports, running the module's code at that moment);
the shim resolves a name only from builtins and modules already imported, and matches the others by name along the
raised class's MRO (``Name``, ``Outer.Name``, ``module.Name``): subclasses too, running none of the program's code.
Such a class stops once, where it is raised (pydevd's "first raise only"), not again in each frame it unwinds.
The log of raised exceptions (``debug_trace(functions=["raised"])``) is an exception breakpoint of its own
(``polydbg.raised``) that pydevd stops for only when no other wants the exception: where pydevd would tell the client,
the shim writes the record to the console with a mark (the backend takes those lines) and skips the stop. It is
recorded once, in the user's innermost frame (where a library raised it for the user's call), with the frame whose
``except`` will take it, read from the bytecode's exception table (Python ≥ 3.11) and each clause's class, looked up
in the frame without running its code; a ``with`` block's ``__exit__`` may swallow it (said so), a ``finally`` passes
it on. 0.8 ms per exception, against ~39 ms for a stop and a resume in each frame it leaves (pydevd's raised mode).
It also keeps pydevd's user-unhandled stop (an exception leaving the user's code into a library: a test runner's)
from stopping at a frame that returned normally: under ``sys.settrace`` (Python ≤ 3.11) a frame's "return" event
looks the same whether it returns or an exception leaves it, and pydevd guesses from its try/except blocks, so an
exception a ``with`` block suppressed (``pytest.raises``, ``contextlib.suppress``) stopped the test at its end.
A frame that returns sits on a return instruction; one an exception leaves, on the instruction that raised. The
veto is made where pydevd tells the client about the stop (``PyDB.send_caught_exception_stack``, whose caller's
frame is the one stopping), and skips that stop's suspension and its messages; 3.12's ``sys.monitoring`` tells
an unwinding apart by itself. A ``SystemExit`` leaving the user's code (``sys.exit("message")``, whose code pydevd
does not ignore) is vetoed the same way: an exit is an exit; so is one the library frame it enters expects
(unittest's ``assertRaises(E, func)`` and pytest's ``raises(E, func)`` call the user's function and catch E).
A user-unhandled stop it lets through gets the ``__exception__`` pydevd puts in the frame of its other exception
stops (``$exception``), which pydevd takes out again when the thread resumes.
A thread resumed or stepped is woken at once. pydevd marks it running and means to set the event its suspended
thread waits on 0.2 s at a time, but ``_update_stepping_info`` sets the event of the thread of the last entry of its
set of all threads' infos (its loop variable shadows the argument, in the Cython build too); which entry comes last
hangs on addresses. So each stop after a ``debug_continue`` (pydevd's ``resume_threads``, from its reader thread) or a
step (a command the stopped thread runs itself, then waits again) arrived 0.2 s late whenever the thread's info was
not last: in a launch that recorded calls (``sq(i)`` in a loop: 210 ms a continue to the next hit or a step over, 6 ms
unrecorded), in a program with four idle threads besides the looping one (209 ms, no trace), in one that maps a
``ThreadPoolExecutor`` (210 ms); all take 5-12 ms now. The shim sets the resumed thread's own event after pydevd's
``internal_run_thread``, and the running thread's after each command it runs (a no-op for one that leaves it stopped:
its loop looks at its state once more).
When the program's main code is done, it waits for pydevd's writer thread to send what it still holds (as long
as it keeps sending): pydevd gives the writer 0.5 s once no thread of the program is alive, then drops the rest
(a trace of 20,000 hits lost 12,000 of them). This runs while the main thread is alive still: in an exit hook
pydevd's tracing would find no thread alive and drop them itself. Passed as ``python -c``.
"""
import sys, os, socket, runpy, types
_m = types.ModuleType('_polydbg')
def _v(h):
    f = sys._getframe(1)
    try:
        x = eval(bytes.fromhex(h).decode(), f.f_globals, f.f_locals)
        p, w = sys.modules.get('_pydevd_bundle.pydevd_xml'), sys.modules.get('_pydevd_bundle.pydevd_safe_repr')
        r = p.get_variable_details(x, to_string=w.SafeRepr())[4] if p and w else repr(x)
    except BaseException as e: r = '<error: %s: %s>' % (type(e).__name__, e)
    return r.replace('\n', '\\n')
_m.v = _v
sys.modules['_polydbg'] = _m
del _m, _v, types
RAISED, RAISED_MARK = 'polydbg.raised', '\x1epolydbg-raised '  # the raised log's breakpoint and output lines
import threading
_seen = threading.local()  # the exception the raised log recorded last on this thread
def _catcher(py_db, f, kind):  # the user's frame whose except clause takes `kind` raised at f, read from the bytecode
    import dis, builtins
    within = None  # the first with block on the way: its __exit__ may swallow it (contextlib.suppress)
    while f is not None and not py_db.apply_files_filter(f, f.f_code.co_filename, True):
        c = f.f_code
        if not hasattr(dis, '_parse_exception_table'): return '?'  # Python < 3.11: no exception table to read
        at = next((e.target for e in dis._parse_exception_table(c) if e.start <= f.f_lasti < e.end), None)
        took = _takes(list(dis.get_instructions(c)), at, f, kind, builtins) if at is not None else False
        where = '%s (%s:%%d)' % (c.co_name, c.co_filename.replace('%', '%%'))  # its path: made relative
        if took: return where % took  # the except clause's line
        if took is None and within is None:
            within = where % f.f_lineno + ", if its with block's __exit__ swallows it"
        f = f.f_back
    return within  # None: it leaves the user's code
def _takes(ins, at, f, kind, builtins):  # the line of the handler at `at` that takes `kind`; None: a with block's
    by = {i.offset: n for n, i in enumerate(ins)}
    n = by.get(at)
    if n is None or ins[n].opname != 'PUSH_EXC_INFO': return False  # a cleanup that raises again
    n, stack = n + 1, []
    line = lambda i: (i.positions.lineno if getattr(i, 'positions', None) else None) or f.f_lineno  # noqa: E731
    while n < len(ins):
        i = ins[n]; o = i.opname
        if o == 'POP_TOP' and not stack: return line(i)  # a bare except
        if o == 'WITH_EXCEPT_START': return None
        if o == 'RERAISE': return False  # a finally, or no clause took it
        if o in ('LOAD_GLOBAL', 'LOAD_NAME'):
            named = f.f_globals.get(i.argval, getattr(builtins, str(i.argval), None))
            stack.append(named if o == 'LOAD_GLOBAL' else f.f_locals.get(i.argval, named))
        elif o in ('LOAD_FAST', 'LOAD_DEREF'): stack.append(f.f_locals.get(i.argval))
        elif o == 'LOAD_ATTR' and stack: stack.append(getattr(stack.pop(), str(i.argval), None))
        elif o == 'BUILD_TUPLE': k = i.argval; stack[-k:] = [tuple(stack[-k:])] if k else [()]
        elif o == 'CHECK_EXC_MATCH':
            try:
                if issubclass(kind, stack[-1]): return line(i)
            except Exception: return line(i)  # a class it cannot read without running code: taken to match
        elif 'JUMP' in o and 'IF_FALSE' in o: n, stack = by.get(i.argval, len(ins)), []; continue
        elif o not in ('CACHE', 'PRECALL', 'NOP', 'PUSH_NULL'): return False  # a finally's own code
        n += 1
    return False
def _record(py_db, thread, arg, f):  # the raised log: this raise recorded; True when only the log stopped here
    kind, value, _ = arg
    info = getattr(thread, 'additional_info', None)
    only = getattr(info, 'pydev_message', None) == RAISED
    if only: info.pydev_message = ''
    if RAISED not in py_db.break_on_caught_exceptions or f is None: return only
    import json, threading
    if getattr(_seen, 'last', None) is value: return only  # seen already, in a frame it left
    _seen.last = value  # (held until the thread's next exception: exceptions take no weak references)
    try: message = str(value)
    except Exception as e: message = '<str() failed: %s>' % type(e).__name__
    name = getattr(kind, '__qualname__', getattr(kind, '__name__', str(kind)))
    module = getattr(kind, '__module__', '')
    row = {'type': name if module in ('builtins', '__main__') else module + '.' + name, 'message': message[:200],
           'file': f.f_code.co_filename, 'line': f.f_lineno, 'function': f.f_code.co_name,
           'thread': threading.current_thread().name, 'caught': _catcher(py_db, f, kind)}
    py_db.writer.add_command(py_db.cmd_factory.make_console_message(RAISED_MARK + json.dumps(row) + '\n'))
    return only
def _expected(g, kind):  # the library frame an exception enters expects it: assertRaises' or pytest.raises' callable
    if g is None: return False  # form (``self.expected`` of unittest's context, pytest's ``expected_exception``)
    try:
        ctx = g.f_locals.get('self')
        wanted = getattr(ctx, 'expected', None) if hasattr(type(ctx), '__exit__') else None
        wanted = g.f_locals.get('expected_exception') if wanted is None else wanted
        return wanted is not None and issubclass(kind, wanted)
    except Exception: return False
def _returned(P):  # a user-unhandled exception whose frame returned normally is no stop (see the docstring)
    import dis, threading
    R, t = {dis.opmap[n] for n in ('RETURN_VALUE', 'RETURN_CONST') if n in dis.opmap}, threading.local()
    s0, s1, s2 = P.send_caught_exception_stack, P.set_suspend, P.do_wait_suspend
    s3 = P.send_caught_exception_stack_proceeded
    def send(self, thread, arg, fid):
        f, n = sys._getframe(1), 0
        while f is not None and id(f) != fid and n < 8: f, n = f.f_back, n + 1
        t.v = _record(self, thread, arg, f if f is not None and id(f) == fid else None) or (
            isinstance(arg[0], type) and issubclass(arg[0], SystemExit)) or (  # an exit is an exit
            f is not None and id(f) == fid and f.f_lasti >= 0 and f.f_code.co_code[f.f_lasti] in R) or (
            f is not None and id(f) == fid and isinstance(arg[0], type) and _expected(f.f_back, arg[0]))
        if t.v: return
        if f is not None and id(f) == fid and '__exception__' not in f.f_locals:
            f.f_locals['__exception__'] = arg  # a user-unhandled stop's ($exception); pydevd's removes it after
        return s0(self, thread, arg, fid)
    def suspend(self, *a, **k):
        if not getattr(t, 'v', False): return s1(self, *a, **k)
    def wait(self, *a, **k):
        if not getattr(t, 'v', False): return s2(self, *a, **k)
    def proceeded(self, thread):
        if getattr(t, 'v', False): t.v = False
        else: return s3(self, thread)
    P.send_caught_exception_stack, P.set_suspend, P.do_wait_suspend = send, suspend, wait
    P.send_caught_exception_stack_proceeded = proceeded
def _api(m):  # pydevd's breakpoint lines memoized; a stack request does not wait for a thread that is not stopped
    f, memo = m._get_code_lines, {}
    def lines(code):
        if not isinstance(code, str): return f(code)
        s = os.stat(code); k = (code, s.st_mtime_ns, s.st_size)
        if k not in memo: memo[k] = tuple(f(code))
        return iter(memo[k])
    m._get_code_lines = lines
    try:
        r = m.PyDevdAPI.request_stack; c = r.__code__; d = list(r.__defaults__)
        i = c.co_varnames.index('timeout') - c.co_argcount + len(d)
        if 0 <= i < len(d): d[i] = 0; r.__defaults__ = tuple(d)
    except Exception: pass
def _by_name(m):  # an exception class pydevd cannot import matches by name along the raised class's MRO
    g = m.get_exception_breakpoint
    def match(exctype, exceptions):
        log = exceptions.get(RAISED) if exceptions else None
        if log is not None:  # the raised log's breakpoint only when no other wants it
            found = match(exctype, {k: b for k, b in exceptions.items() if k != RAISED})
            return log if found is None else found
        found = g(exctype, exceptions)
        if found is not None or not exceptions or not isinstance(exctype, type): return found
        for c in exctype.__mro__:
            q = getattr(c, '__qualname__', c.__name__)
            for n in (q, '%s.%s' % (c.__module__, q), c.__name__):
                b = exceptions.get(n)
                if b is not None and b.type is None: return b
        return None
    m.get_exception_breakpoint = match
def _classes(m):  # a class name resolves from builtins or a module already imported; pydevd would import it
    import builtins
    def resolve(name):
        if name == RAISED: return BaseException
        c = getattr(builtins, name, None)
        if c is None and '.' in name:
            module, _, attribute = name.rpartition('.')
            c = getattr(sys.modules.get(module), attribute, None)
        return c if isinstance(c, type) else None
    m.get_exception_class = resolve
    init = m.ExceptionBreakpoint.__init__
    def once(self, qname, *a):  # a class named stops where it is raised, not again in each frame it leaves
        init(self, qname, *a)
        if qname not in ('BaseException', RAISED): self.notify_on_first_raise_only = True  # (the log: _seen)
    m.ExceptionBreakpoint.__init__ = once
def _pydevd(m):
    try: _returned(m.PyDB)
    except Exception: pass
    try: _by_name(m)
    except Exception: pass
def _wakes(m):  # a resumed thread is woken by its own event, not the last info's pydevd iterated (see the docstring)
    try: from _pydevd_bundle.pydevd_constants import get_global_debugger
    except ImportError: return
    run, key = getattr(m, 'internal_run_thread', None), getattr(m, 'get_thread_id', None)
    if run is None or key is None: return
    def resumed(thread, *a, **k):
        run(thread, *a, **k)
        py_db = get_global_debugger()
        if py_db is not None and not py_db.pydb_disposed: py_db.get_internal_queue_and_event(key(thread))[1].set()
    m.internal_run_thread = resumed
def _looks(m):  # a command a stopped thread ran (a step) is followed by a look at its state, not a 0.2 s wait
    try: from _pydevd_bundle.pydevd_constants import get_current_thread_id
    except ImportError: return
    import threading
    def then_looks(do):
        def do_it(self, py_db, *a, **k):
            try: return do(self, py_db, *a, **k)
            finally: py_db.get_internal_queue_and_event(get_current_thread_id(threading.current_thread()))[1].set()
        return do_it
    base = getattr(m, 'InternalThreadCommand', None)
    for c in list(vars(m).values()):
        if isinstance(c, type) and base is not None and issubclass(c, base) and 'do_it' in vars(c):
            c.do_it = then_looks(c.do_it)
_patches = {'_pydevd_bundle.pydevd_api': _api, 'pydevd': _pydevd, '_pydevd_bundle.pydevd_breakpoints': _classes,
            '_pydevd_bundle.pydevd_thread_lifecycle': _wakes, '_pydevd_bundle.pydevd_comm': _looks}
class _Patch:
    def find_spec(self, name, path=None, target=None):
        patch = _patches.pop(name, None)
        if patch is None: return None
        if not _patches: sys.meta_path.remove(self)
        import importlib.util
        spec = importlib.util.find_spec(name)
        run = spec and spec.loader and getattr(spec.loader, 'exec_module', None)
        if run:
            def exec_module(m): run(m); patch(m)
            spec.loader.exec_module = exec_module
        return spec
sys.meta_path.insert(0, _Patch())
a = sys.argv[1:]
if a[:2] == ['-X', 'frozen_modules=off']: a = a[2:]
if sys.path and sys.path[0] == '': del sys.path[0]
_c = socket.socket.connect
def connect(self, address):
    r = _c(self, address)
    if self.family in (socket.AF_INET, socket.AF_INET6):
        socket.socket.connect = _c
        try: self.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError: pass
    return r
socket.socket.connect = connect
sys.argv = a
del connect
_i = os.environ.pop('POLYDBG_STDIN', None) if '--connect' in a else None
if _i:
    _f = os.open(_i, os.O_RDONLY); os.dup2(_f, 0); os.close(_f)
del _i
_w = os.environ.pop('POLYDBG_PROBE', None) if '--connect' in a else None
_first = []  # run in the main thread as the program's code starts (once)
def _starts(m):  # pydevd's runpy: its entry points run _first before the program's code, hidden as pydevd's
    def started(run):
        def first(*args, **kwargs):
            while _first:
                f = _first.pop(0); f.__code__ = f.__code__.replace(co_filename=m.__file__); f()
            return run(*args, **kwargs)
        first.__code__ = first.__code__.replace(co_filename=m.__file__)  # pydevd's frame: hidden as its own
        return first
    for n in ('run_path', 'run_module', '_run_module_as_main'):
        if hasattr(m, n): setattr(m, n, started(getattr(m, n)))
_patches['_pydevd_bundle.pydevd_runpy'] = _starts
if _w:  # the probe starts with the program, once pydevd traces new threads
    def _probing(w=_w):
        import threading
        # it waits in library code (a step into "my code" never stops there); woken, it runs a line of
        # "user" code (named <ipython…), where a pause stops
        g = {'os': os}
        exec(compile('def ran():\n    pass  # a pause stops here\n\ndef wake(fd):\n'
                     '    while os.read(fd, 1):\n        ran()\n', '<polydbg-probe>', 'exec'), g)
        g['ran'].__code__ = g['ran'].__code__.replace(co_filename='<ipython-polydbg-probe>')
        threading.Thread(target=g['wake'], args=(os.open(w, os.O_RDWR),), name='polydbg-probe',
                         daemon=True).start()
    _first.append(_probing)
del _w
_p = os.environ.pop('POLYDBG_VALUES', None) if '--connect' in a else None
_k = os.environ.pop('POLYDBG_CALLS', None) if '--connect' in a else None
_shims = os.path.dirname(_p or '')
def _calls_at(path, running=True, shims=_shims):  # the recorder of calls (shims/calls.py), started
    m = sys.modules.get('_polydbg_calls')
    if m is None:
        import importlib.util
        s = importlib.util.spec_from_file_location('_polydbg_calls', os.path.join(shims, 'calls.py'))
        m = importlib.util.module_from_spec(s); s.loader.exec_module(m)
        m._started = running; m.start(path)
        sys.modules['_polydbg_calls'] = sys.modules['_polydbg'].calls = m
    else: m.serve()
    return 'recording'
sys.modules['_polydbg'].calls_at = _calls_at  # evaluated by polydbg at a stop, to record calls from there
_calls = None
if _k and _p:  # a launch's trace: the recorder listens from the start
    try: _calls_at(_k, False); _calls = sys.modules['_polydbg_calls']; _first.append(_calls.started)
    except OSError: _calls = None
del _k, _shims
if _p:
    _d = os.path.abspath(os.path.join(a[0], '_vendored', 'pydevd'))  # as debugpy names its copy
    sys.path[:0] = [_d, _p]
    try: __import__('pydevd_plugins.extensions')
    except Exception: pass
    for _x in (_d, _p):
        if _x in sys.path: sys.path.remove(_x)
    del _d, _x
del _p
def _drain():
    import time
    d = sys.modules.get('pydevd')
    w = getattr(d.get_global_debugger(), 'writer', None) if d else None
    q = getattr(w, '_cmd_queue', None)
    left, moved = (q.qsize() if q is not None else 0), time.monotonic()
    while left and w.is_alive() and time.monotonic() - moved < 10:  # as long as the writer keeps sending
        time.sleep(0.005)
        if q.qsize() < left: moved = time.monotonic()
        left = q.qsize()
try: runpy.run_path(a[0], run_name='__main__')
except SystemExit as e:
    if e.code is None or isinstance(e.code, int): raise
    print(e.code, file=sys.stderr)
    raise SystemExit(1) from None
finally:  # the recorder's pending records, whether a launch or a stop started it (its thread dies with us)
    if '_polydbg_calls' in sys.modules: sys.modules['_polydbg_calls'].drain()
    _drain()
