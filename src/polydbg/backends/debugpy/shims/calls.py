"""Records the calls of named functions inside the debuggee, for the debugpy backend's ``record_calls``.

The debuggee shim loads this file when ``POLYDBG_CALLS`` names polydbg's socket: a daemon thread (hidden from
pydevd as one of its own) connects, reads commands (JSON lines: ``arm``, ``stop``) from the FIFO beside it and
sends the answers and the records back over the socket, the records every ``FLUSH_S`` (it waits on the FIFO in
between: see ``_serve``). Armed, a profile function runs in each thread: set in the main thread as the program's
code starts (``started``) or by an evaluation in a stopped thread (``here``), in threads started later through
``threading.setprofile``, and in every thread at once where Python can (3.12's ``setprofile_all_threads``). It
looks a code object up once (a dict hit afterwards), records a call of a named function with its arguments, its
callees to the depth asked, and its end: the value returned, or the exception that left it (seen by a frame trace
function wrapped around pydevd's: a profile function sees an exception leave a frame as a return of None, told
apart by the instruction the frame is at). Values are ``repr``s cut to ``chars`` (a long container or string
through ``reprlib``, never written whole), made with the recorder off (a ``__repr__`` that calls traced code
records nothing). A failure of the recorder's own is swallowed: out of a profile function it would be raised in
the program's code. Disarmed, each thread's profile function removes itself
at its next event. Coroutines and generators are one call from their first start to their end. A forked child
records nothing (its parent's socket is not its own).
"""
import collections, difflib, dis, itertools, json, os, reprlib, select, socket, sys, threading, time, types

FLUSH_S = 0.02
NAMES_LISTED = 5
_RETURNS = {dis.opmap[n] for n in ('RETURN_VALUE', 'RETURN_CONST') if n in dis.opmap}
_YIELDS = {dis.opmap[n] for n in ('YIELD_VALUE',) if n in dis.opmap}
_SUSPENDS = 0x20 | 0x80 | 0x200  # generator, coroutine, async generator
_MISS = object()
# 3.12's pydevd (sys.monitoring) suspends a recorder's thread started again at a stop (in its first json.loads), so
# there the thread waits for the next trace instead of ending with one: 50 looks a second at an empty FIFO meanwhile
_MONITORED = sys.version_info >= (3, 12)
_local = threading.local()
_busy = set()  # threads making a repr: their calls are not the program's
_out = collections.deque()  # records to send
_sending = threading.Lock()


class _Spec:
    def __init__(self, command):
        self.id = command['id']
        self.depth = command['depth']
        self.max = command['max']
        self.chars = command['chars']
        self.dotted, self.files = [], []
        self.names = command['functions']
        for name in self.names:
            if ':' in name:
                path, _, func = name.rpartition(':')
                self.files.append((path.replace('\\', '/'), func))
            else:
                self.dotted.append(name)
        self.found = set()
        self.same = {}  # the name a function is recorded under -> the other names it answers to
        self.cache = {}
        self.stacks = {}  # thread id -> the calls open in it
        self.suspended = {}  # a coroutine's or generator's frame -> its open call
        self.count = 0
        self.seq = itertools.count()

    def match(self, code, module):
        """The name the agent gave that ``code`` answers to, else None."""
        return next(self.matches(code, module), None)

    def matches(self, code, module):
        """Each name the agent gave that ``code`` answers to (``fib``, ``dates.fib``, ``dates.py:fib``: one)."""
        q = getattr(code, 'co_qualname', code.co_name)
        full = '%s.%s' % (module, q)
        stem = os.path.splitext(os.path.basename(code.co_filename))[0]
        mine = None
        for name in self.dotted:
            if '.' in name and (name in (q, full, '%s.%s' % (stem, q)) or full.endswith('.' + name)
                                or _exported(name, code)):
                yield name
            elif name in (q, code.co_name):  # a bare name: the program's own code (a library's: qualify it)
                if mine is None:
                    mine = _mine(code.co_filename)
                if mine:
                    yield name
        file = code.co_filename.replace('\\', '/')
        for path, func in self.files:
            if func in (q, code.co_name) and (file == path or file.endswith('/' + path.lstrip('./'))):
                yield '%s:%s' % (path, func)

    def never(self):
        """The names no call answered to: a function called under another of its names (``fib`` and
        ``dates.fib``) was called."""
        called = set(self.found).union(*(self.same.get(name, ()) for name in self.found))
        return [n for n in self.names if n not in called]


def _exported(name, code):
    """Whether ``name`` reaches ``code`` through a module that re-exports it (``humanize.ordinal`` for
    ``humanize.number.ordinal``: a package's public name), read from the modules' and classes' dicts, running none
    of the program's code (a module's ``__getattr__``, a descriptor)."""
    head, _, path = name.partition('.')
    while path:
        value = sys.modules.get(head)
        for part in path.split('.') if value is not None else ():
            value = vars(value).get(part) if isinstance(value, (type, types.ModuleType)) else None
        value = value.__func__ if isinstance(value, (staticmethod, classmethod)) else value
        if isinstance(value, types.FunctionType) and value.__code__ is code:
            return True
        part, _, path = path.partition('.')
        head = head + '.' + part
    return False


_spec = None
_channel = None
_commands = None
_started = False
_serving = False  # the recorder's thread runs


def _cut(text, chars):
    text = text.replace('\r\n', '\\n').replace('\n', '\\n')
    return text if len(text) <= chars else text[:chars - 1] + '…'


_short = reprlib.Repr()
_short.maxlevel, _short.maxlist, _short.maxtuple, _short.maxdict, _short.maxset = 3, 12, 12, 8, 12
_LARGE = 64  # a container or string longer than this is written by reprlib (its repr is never made whole)
_SIZED = (list, tuple, dict, set, frozenset, str, bytes, bytearray, collections.deque)


def _repr(value, chars):
    me = threading.get_ident()
    _busy.add(me)
    try:
        if type(value) in _SIZED and len(value) > _LARGE:
            _short.maxstring = _short.maxother = chars
            return _cut(_short.repr(value), chars)
        return _cut(repr(value), chars)
    except BaseException as e:
        return '<repr failed: %s>' % type(e).__name__
    finally:
        _busy.discard(me)


def _raised(exc, chars):
    if exc is None:
        return 'an exception'
    me = threading.get_ident()
    _busy.add(me)
    try:
        text = str(exc)
    except BaseException:
        text = ''
    finally:
        _busy.discard(me)
    return _cut('%s: %s' % (type(exc).__name__, text) if text else type(exc).__name__, chars)


def _where(frame):
    if frame is None:
        return None
    code = frame.f_code
    return '%s (%s:%d)' % (getattr(code, 'co_qualname', code.co_name), code.co_filename, frame.f_lineno)


def _args(frame, chars):
    code = frame.f_code
    count = code.co_argcount + code.co_kwonlyargcount + bool(code.co_flags & 4) + bool(code.co_flags & 8)
    values = frame.f_locals
    return [[n, _repr(values[n], chars) if n in values else '<unbound>'] for n in code.co_varnames[:count]]


def _theirs():
    """The thread is pydevd's (its threads started after the recorder was armed get the profile function too)."""
    theirs = getattr(_local, 'theirs', None)
    if theirs is None:
        theirs = _local.theirs = getattr(threading.current_thread(), 'is_pydev_daemon_thread', False)
    return theirs


def _debuggers(caller):
    """A call the debugger makes (pydevd writing its messages with json, say), in the program's threads too."""
    file = caller.f_code.co_filename if caller is not None else ''
    return 'pydevd' in file or '/debugpy/' in file


def _thread_name():
    name = getattr(_local, 'name', None)
    if name is None:
        name = _local.name = threading.current_thread().name
    return name


def _watch(frame, entry):
    """A frame trace function around pydevd's, so the exception that leaves a recorded frame is known."""
    inner = [frame.f_trace]

    def local(f, event, arg):
        if event == 'exception':
            entry[6] = arg[1]
        trace = inner[0]
        if trace is not None:
            inner[0] = trace(f, event, arg)
        return local
    local.polydbg = True
    if inner[0] is None:
        frame.f_trace_lines = False
    frame.f_trace = local


def _keep_watching():
    """pydevd sets its own trace function on a frame and its callers after it handled an exception for an exception
    breakpoint (the raised log's, a filter's): the recorded calls among them are watched again."""
    debugger = getattr(sys.modules.get('pydevd'), 'PyDB', None)
    if debugger is None or getattr(debugger, 'polydbg_watch', False):
        return
    original = debugger.set_trace_for_frame_and_parents

    def again(self, thread_id, frame, *args, **kwargs):
        result = original(self, thread_id, frame, *args, **kwargs)
        spec = _spec
        for entry in list(spec.stacks.get(thread_id, ())) if spec is not None else ():
            if not getattr(entry[0].f_trace, 'polydbg', False):
                _watch(entry[0], entry)
        return result
    debugger.set_trace_for_frame_and_parents = again
    debugger.polydbg_watch = True


def _profile(frame, event, arg):
    try:  # never the program's: an exception out of a profile function would be raised in its code
        spec = _spec
        if spec is None:
            sys.setprofile(None)
            return
        if event == 'call':
            if _busy and threading.get_ident() in _busy:
                return
            code = frame.f_code
            name = spec.cache.get(code, _MISS)
            if name is _MISS:
                same = list(spec.matches(code, frame.f_globals.get('__name__', '')))
                name = spec.cache[code] = same[0] if same else None
                if len(same) > 1:
                    spec.same[name] = same
            if code.co_flags & _SUSPENDS and frame in spec.suspended:
                spec.stacks.setdefault(threading.get_ident(), []).append(spec.suspended.pop(frame))  # resumed
                return
            if name is None and not spec.depth:
                return
            stack = spec.stacks.get(threading.get_ident())
            if name is not None:
                if _theirs() or _debuggers(frame.f_back):
                    return
                depth = 0
                spec.found.add(name)
            elif stack and stack[-1][0] is frame.f_back and stack[-1][2] < spec.depth:
                depth = stack[-1][2] + 1
            else:
                return
            if spec.count >= spec.max:
                return
            spec.count += 1
            if stack is None:
                stack = spec.stacks[threading.get_ident()] = []
            # frame, function, depth, args, start, order, exception, caller, thread
            entry = [frame, getattr(code, 'co_qualname', code.co_name), depth, _args(frame, spec.chars),
                     time.perf_counter(), next(spec.seq), None, _where(frame.f_back) if depth == 0 else None,
                     _thread_name()]
            stack.append(entry)
            _watch(frame, entry)
        elif event == 'return':
            stack = spec.stacks.get(threading.get_ident())
            if not stack or stack[-1][0] is not frame:
                return
            entry = stack.pop()
            code = frame.f_code
            op = code.co_code[frame.f_lasti] if frame.f_lasti >= 0 else None
            if code.co_flags & _SUSPENDS and op in _YIELDS:
                spec.suspended[frame] = entry  # suspended, not ended
                return
            if arg is None and op not in _RETURNS:
                _send(spec, entry, None, _raised(entry[6], spec.chars), True)
            else:
                _send(spec, entry, _repr(arg, spec.chars), None, True)
    except Exception:
        pass


def _send(spec, entry, returned, raised, ended):
    frame = entry[0]
    code = frame.f_code
    _out.append([spec.id, entry[1], entry[3], returned, raised, entry[7], entry[8],
                     (time.perf_counter() - entry[4]) * 1e6 if ended else None, entry[2], code.co_filename,
                     code.co_firstlineno, ended, entry[5]])


_LIBRARY = (*(p for p in {sys.prefix, sys.base_prefix, sys.exec_prefix} if p), os.path.dirname(__file__))


def _mine(file):
    """Whether ``file`` is the program's own code: not the standard library's, an installed package's or polydbg's."""
    return file.endswith('.py') and not file.startswith(_LIBRARY) and 'site-packages' not in file


def _user_names(spec=None):
    """The functions and methods of the program's own modules (not the standard library's or installed ones), and
    those its code called while armed (a script's own module is gone from ``sys.modules`` once it has run)."""
    names = set()
    for module in list(sys.modules.values()):
        if not _mine(getattr(module, '__file__', None) or ''):
            continue
        for key, value in list(vars(module).items()):
            if getattr(value, '__module__', None) != module.__name__:
                continue
            if isinstance(value, type):
                names.update('%s.%s' % (key, k) for k, v in vars(value).items() if callable(v) or isinstance(
                    v, (staticmethod, classmethod, property)))
            elif callable(value) and hasattr(value, '__code__'):
                names.add(key)
    for code in list(spec.cache) if spec is not None else ():
        if _mine(code.co_filename) and not code.co_name.startswith('<'):
            names.add(getattr(code, 'co_qualname', code.co_name))
    return sorted(names)


def _closest(names, known, spec=None):
    """The closest of ``known`` to each name; none for a name of the program's functions (not misspelt: only
    never called, as an ``intcomma`` whose tests come after the stop); a bare name of a library's function first
    qualified (``dateutil.easter.easter``: a bare name is the program's own code)."""
    return {name: [] if spec is not None and any(spec.match(c, m) for c, m in _codes_named(name)) else
            (_qualified(name) + [k for k in difflib.get_close_matches(name.rpartition(':')[2], known,
                                                                      NAMES_LISTED + 1, 0.5)
                                 if k != name])[:NAMES_LISTED] for name in names}


def _qualified(name):
    """A bare name's library functions, by their modules' names."""
    if '.' in name or ':' in name:
        return []
    return sorted({'%s.%s' % (module, getattr(code, 'co_qualname', code.co_name)) for code, module in
                   _codes_named(name) if module and not _mine(code.co_filename)})[:NAMES_LISTED]


def _arm(command):
    global _spec
    spec = _Spec(command)
    _spec = spec
    _keep_watching()
    threading.setprofile(_profile)
    everywhere = hasattr(threading, 'setprofile_all_threads')
    if everywhere:
        threading.setprofile_all_threads(_profile)
    else:
        everywhere = _all_threads(_profile)
    wanted = command['functions']
    unknown = [n for n in wanted if not any(spec.match(c, m) for c, m in _codes_named(n))] if _started else []
    return {'armed': spec.id, 'started': _started, 'everywhere': everywhere,
            'closest': _closest(unknown, _user_names()) if unknown else {}}


def _all_threads(profile):
    """Before 3.12: ``profile`` set in every thread as 3.12's ``setprofile_all_threads`` does, CPython's
    ``_PyEval_SetProfile`` on each thread state, so a thread blocked in C code (a socket's accept, a lock's wait), which
    no evaluation reaches, is recorded from its next Python call. The C function ``sys.setprofile`` installs is read
    from this thread's state (the slot before the one holding ``profile``, where 3.8-3.11 keep it). The walk over the
    thread states runs with a switch interval no thread reaches, after a sleep that let every waiting thread start a
    wait with it: no other thread takes the interpreter's lock (nor ends, freeing its state) meanwhile. False where
    it cannot (not CPython, a layout not found): the threads stopped are then armed one by one (``here``)."""
    try:
        import ctypes
        api = ctypes.PyDLL(ctypes.pythonapi._name, handle=ctypes.pythonapi._handle)  # not pythonapi's own settings
        state, first, after, put = (api.PyThreadState_Get, api.PyInterpreterState_ThreadHead, api.PyThreadState_Next,
                                    api._PyEval_SetProfile)
        state.restype = first.restype = after.restype = api.PyInterpreterState_Get.restype = ctypes.c_void_p
        first.argtypes = after.argtypes = [ctypes.c_void_p]
        put.argtypes, put.restype = [ctypes.c_void_p, ctypes.c_void_p, ctypes.py_object], ctypes.c_int
        sys.setprofile(profile)
        try:
            me = state()
            slots = (ctypes.c_void_p * 48).from_address(me)
            at = [n for n in range(2, 46) if slots[n] == id(profile)]
            func = slots[at[0] - 2] if len(at) == 1 else None
        finally:
            sys.setprofile(None)  # the recorder's own thread records nothing
        if not func or slots[at[0] + 1] != (id(sys.gettrace()) if sys.gettrace() is not None else None):
            return False
        interval = sys.getswitchinterval()
        sys.setswitchinterval(100.0)
        try:
            time.sleep(interval + 0.001)  # a wait begun with the old interval has ended
            ts = first(api.PyInterpreterState_Get())
            while ts:
                if ts != me and put(ts, func, profile):
                    return False
                ts = after(ts)
        finally:
            sys.setswitchinterval(interval)
        return True
    except Exception:
        return False


def _codes_named(name):
    """The code objects of the program's functions that could answer to ``name`` (for a refusal's check)."""
    last = name.rpartition(':')[2].rpartition('.')[2]
    for module in list(sys.modules.values()):
        for value in list(vars(module).values()) if hasattr(module, '__dict__') else ():
            funcs = list(vars(value).values()) if isinstance(value, type) else (value,)
            for func in funcs:
                func = getattr(func, '__func__', func)
                code = getattr(func, '__code__', None)
                if code is not None and code.co_name == last:
                    yield code, getattr(func, '__module__', None) or ''


def _stop(command):
    global _spec
    spec = _spec
    if spec is None or spec.id != command['id']:
        return {'stopped': command['id'], 'never': []}
    _spec = None
    threading.setprofile(None)
    if hasattr(threading, 'setprofile_all_threads'):
        threading.setprofile_all_threads(None)
    for stack in list(spec.stacks.values()):
        for entry in list(stack):
            _send(spec, entry, None, None, False)
    never = spec.never()
    return {'stopped': spec.id, 'never': never, 'closest': _closest(never, _user_names(spec), spec) if never else {},
            'bound': spec.count >= spec.max}


def here():
    """Record in this thread too (evaluated by polydbg in a stopped thread, on a Python without all-threads)."""
    if _spec is not None:
        sys.setprofile(_profile)
    return 'recording'


def started():
    """The program's code starts in this (the main) thread: it is recorded from here when armed, else the
    recorder's thread ends (``serve`` starts it again at a stop; on 3.12 and later it waits: ``_MONITORED``)."""
    global _started, _serving
    _started = True
    if _spec is not None:
        sys.setprofile(_profile)
    elif not _MONITORED:
        _serving = False


def serve():
    """Start the recorder's thread again (evaluated by polydbg in a stopped thread, to arm a trace)."""
    global _serving
    if _channel is not None and not _serving:
        _serving = True
        _thread()
    return 'serving'


def _thread():
    thread = threading.Thread(target=_serve, args=(_commands, _channel), name='polydbg-calls', daemon=True)
    thread.pydev_do_not_trace = True
    thread.is_pydev_daemon_thread = True
    thread.start()


def _flush(sock):
    me = threading.get_ident()
    _busy.add(me)  # the recorder's own calls (json's) are not the program's
    try:
        with _sending:
            lines = []
            while _out:
                lines.append(json.dumps(_out.popleft()))
            if lines:
                sock.sendall(('\n'.join(lines) + '\n').encode('utf-8', 'replace'))
    finally:
        _busy.discard(me)


def _serve(commands, sock):
    """Commands from polydbg's FIFO, answered over the socket as they come, and the records sent, every ``FLUSH_S``
    (the thread waits on the FIFO in between: one write a batch)."""
    global _spec, _serving
    pending = b''
    me = threading.get_ident()
    _busy.add(me)  # this thread's calls are never the program's
    try:
        while _serving:
            select.select([commands], [], [], FLUSH_S)  # a command at once, the records every FLUSH_S
            try:
                pending += os.read(commands, 65536)
            except BlockingIOError:
                pass
            while b'\n' in pending:
                line, pending = pending.split(b'\n', 1)
                command = json.loads(line)
                answer = _arm(command) if command['op'] == 'arm' else _stop(command)
                _flush(sock)  # a stop's records before its answer
                _busy.add(me)
                with _sending:
                    sock.sendall((json.dumps(answer) + '\n').encode())
                if command['op'] == 'stop' and _started and not _MONITORED:
                    _serving = False  # until the next trace (``serve``): see ``_hide``
            if _out:
                _flush(sock)
                _busy.add(me)
    except (OSError, ValueError):
        _spec = None
    finally:
        _serving = False
        _busy.discard(me)


def drain():
    """At the program's end: what is recorded goes out before the interpreter does, with the functions never
    called (the program's end may come before polydbg asks)."""
    spec = _spec
    if _channel is None:
        return
    me = threading.get_ident()
    try:
        _flush(_channel)
        _busy.add(me)
        if spec is not None:
            never = spec.never()
            final = {'final': spec.id, 'closest': _closest(never, _user_names(spec), spec) if never else {},
                     'bound': spec.count >= spec.max}
            with _sending:
                _channel.sendall((json.dumps(final) + '\n').encode())
    except OSError:
        pass
    finally:
        _busy.discard(me)


def _forked():
    """A forked child has its parent's recorder and socket, not its thread: it records nothing."""
    global _spec, _channel
    _spec = _channel = None
    _out.clear()


def start(path):
    """Connect to polydbg's socket ``path`` and read commands from the FIFO beside it until the program's code
    starts (a launch's trace is armed before that) or, armed, until the trace stops."""
    global _channel, _commands, _serving
    _commands = os.open(os.path.join(os.path.dirname(path), 'commands'), os.O_RDWR | os.O_NONBLOCK)  # never at EOF
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(path)
    _channel = sock
    if hasattr(os, 'register_at_fork'):
        os.register_at_fork(after_in_child=_forked)
    _serving = True
    _thread()


def _hide():
    """The recorder's code is pydevd's to pydevd (a file name it never traces, steps into nor shows): its thread is
    marked as pydevd's own, but pydevd's patched ``threading.enumerate`` hides such threads from the list it leaves
    untraced too, so it set tracing on the thread's frame when breakpoints changed."""
    name = os.path.join(os.path.dirname(__file__), 'pydevd_daemon_thread.py')
    for value in list(globals().values()):
        functions = vars(value).values() if isinstance(value, type) else (value,)
        for function in functions:
            code = getattr(function, '__code__', None)
            if code is not None and code.co_filename == __file__:
                function.__code__ = code.replace(co_filename=name)


_hide()
