"""Java (and Kotlin) over JDWP, straight to the JVM's built-in ``jdwp`` agent.

The debugger is the JVM itself: every HotSpot JVM carries the ``jdwp`` agent
(``-agentlib:jdwp=…``), which speaks the Java Debug Wire Protocol over a socket. There is no debugger
process in between; polydbg's JDWP client (``polydbg.jdwp``) talks to the agent directly.

How it is started:

- launch: polydbg listens on a loopback port and starts the JVM with
  ``-agentlib:jdwp=transport=dt_socket,server=n,address=127.0.0.1:PORT,suspend=y``; the JVM connects
  back (so no banner is parsed, no port raced for, nothing listens on a debug port) and waits at its
  start while breakpoints are set, then polydbg resumes it. A ``.java`` file is compiled with
  ``javac -g`` first, a ``.kt`` file with ``kotlinc`` (launcher.py, kotlin.py).
- attach: the JVM was started with ``server=y`` (``suspend=n``, or ``suspend=y`` to wait for a
  debugger); polydbg connects to its address (given, or read from process ``pid``'s command line),
  suspends it while breakpoints are set, and resumes it (attach.py).

The package, one job a module: backend.py (lifecycle, the connection, event routing), vm.py (the
connection the parts share, the class scan), sources.py (source files), threads.py (threads, frames,
the current stop), breakpoints.py (line breakpoints, stop_on_entry), methods.py (method breakpoints),
watch.py (field watchpoints), exceptions.py (exception filters and details), conditions.py (conditions
and logpoints), stepping.py (steps), stops.py (composite events → stops), inspection.py (scopes,
variables, set_variable), evaluator.py/expr.py/scope.py/values.py/collections.py (expressions and
values), classes.py (class, method, line and variable tables), commands.py (``debug_command``),
launcher.py, kotlin.py and mainclass.py (starting a program; a main class the JVM cannot load), calls.py
(methods an evaluation called, and those still running past their deadline), monitors.py (the locks each
thread holds and waits for, their owners), calltrace.py (a call trace: every call of named methods, recorded
from JDWP's events without stopping).

Quirks of the agent and what polydbg does about them (checked against OpenJDK 17.0.21, Debian 12, and
Kotlin 2.4.20):

=============================================================  ===============================================
quirk                                                          what polydbg does
=============================================================  ===============================================
The JDK's single-file launcher (``java Main.java``) compiles    Compiles with ``javac -g`` into a private
without ``-g``: no local variable table, so no locals.         directory and runs the class from there.
JDWP sets breakpoints in classes, not files, and only in       Finds a file's classes by ``SourceFile`` and
loaded ones.                                                   package (inner, anonymous, lambda classes too);
                                                               a ``ClassPrepare`` request per file binds the
                                                               rest when they load.
No conditions, hit counts or logpoints in JDWP.                Evaluates them at each hit (conditions.py,
                                                               kit.hits); a hit that does not stop resumes.
A composite event can hold a ``ClassPrepare`` (loading thread  Resumes that thread once more after binding.
suspended) and a stop (whole VM suspended): the thread is
suspended twice.
Methods can be invoked only on a thread suspended by an        After debug_pause (``VirtualMachine.Suspend``),
event.                                                         and in another thread's frames than the event's,
                                                               calls are refused saying so and what works:
                                                               reading, ``Thread.currentThread()`` (read).
An invoke resumes its thread: the thread's frame ids become    Frames are re-found by (thread, depth) after
invalid, and the invoked code may hit breakpoints.             every invoke; events of an invoking thread are
                                                               not stops (the VM is resumed).
A main class not on the classpath: the JVM prints an error     The launch waits until the main class loads:
and exits with status 1, like a program that failed.           an exit first is the launch's error, naming the
                                                               classpath and classes like it (mainclass.py).
An invoked method cannot be cancelled (an endless loop, a     Left running past 5 s (calls.py): the
``toString()`` that sleeps).                                   evaluation says so, the thread's values are
                                                               refused saying what runs, the other threads
                                                               stay readable, the stop is whole again when it
                                                               returns (after a resume, it runs on); a step
                                                               on its thread is refused at once (it would
                                                               wait for the call: 30 s, then "running").
``ThreadReference.Frames`` on a thread started after the stop  Such a thread has no frames.
fails (error 13, not suspended).
A caught-exception request also fires for the JDK's own        Stops only when the program's code throws or
throw-and-catch (a class loader's ClassNotFoundException).     catches it.
An exception's ``detailMessage`` may be null where its class   Calls ``getMessage()`` on the thread stopped at
overrides ``getMessage()``.                                    the exception (not after a pause).
Lambdas run through hidden classes (``Foo$$Lambda$14/0x…``)    Leaves those frames out; no breakpoints or
without source, between the caller and the lambda's body.      watchpoints are bound in them.
``Method.VariableTable`` lists ``this`` (javac -g, kotlinc);   Drops it (``StackFrame.ThisObject`` reads it);
without ``-g`` it fails with ABSENT_INFORMATION (101).         says "no variable table" instead of locals.
A ``java.util.concurrent`` lock is no monitor: JDWP knows no   Reads ``Thread.parkBlocker`` and the owner field
owner, and no lock a thread holds.                             of ``AbstractOwnableSynchronizer``; a holder is
                                                               known from the threads parked on its lock.
Field ids are offsets (HotSpot): another class's field id      Reads a field only of an object whose class
reads whatever its object has there.                           descends from the field's.
``DestroyJavaVM`` is in the ``main`` thread group, though the  Marks it a JVM thread (``system``) like those
JVM's own.                                                     outside ``main``.
The agent reports VM death, never the exit status.             A launched JVM's status comes from its process;
                                                               an attached one exits with no status, and a
                                                               closed connection without VM death is a kill.
A JVM waiting at its start (``suspend=y``) has every thread    Resumes it twice after an attach.
suspended; polydbg's own ``Suspend`` adds one.
An agent serves one debugger at a time and stops listening     A refused connection says so.
while one is attached.
Kotlin's inline functions put their code at lines past the     Reads the class's SMAP (``SourceDebugExtension``):
caller's file's end; ``fun main()`` gets a synthetic bridge    such frames show the call site and a step steps
without lines; the compiler adds locals (``$i$f$…``, ``…$iv``)  on; the added locals are left out (kotlin.py).
A step stops in the JDK's and Kotlin's runtime classes.        ``ClassExclude`` ``java.*``, ``javax.*``,
                                                               ``jdk.*``, ``sun.*``, ``com.sun.*``,
                                                               ``kotlin.*``.
=============================================================  ===============================================
"""
