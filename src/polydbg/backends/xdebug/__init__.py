"""The xdebug backend: PHP through Xdebug 3's DBGp (``polydbg.dbgp``).

**The debugger.** Xdebug is a Zend extension inside PHP (Debian's ``php-xdebug``); it is the debug engine, and
polydbg is the IDE end of DBGp. There is no adapter process: PHP connects *to* polydbg.

**How it is started.** polydbg listens on a loopback port and starts ``php -dxdebug.mode=debug
-dxdebug.start_with_request=yes -dxdebug.client_host=127.0.0.1 -dxdebug.client_port=N [runtime_args] program
args`` (``launcher``): a script connects once, as it starts. A script runs with ``xdebug.mode=debug,trace``
started by its trigger (``XDEBUG_SESSION`` in its environment: the debugger, not the trace), for call traces
(``tracing``, ``calltrace``). With ``runtime_args=["-S", "127.0.0.1:8000"]`` the
program is the router of PHP's built-in web server (a directory: its document root) and every request connects
anew. ``debug_attach(language="php", port=N)`` only listens, for PHP started elsewhere (the CLI, PHP-FPM, Apache)
with the settings its answer prints; Xdebug cannot be attached to a running process. Ending an attached session
ends its stopped requests (DBGp ``stop``), never the server: polydbg did not start it.

**How DBGp maps onto the Backend protocol.** Each connection is a thread (``request``), named after its
request (``GET /greet?name=ada``); a ``StopGate`` shows one stop at a time. Breakpoints are kept by polydbg and
given to every connection at its start (``breakpoints``); values are ``<property>`` elements behind per-stop
refs (``inspection``, ``values``).

**Quirks** (Xdebug 3.2.0, PHP 8.2.36):

===================================================  ================================================
quirk                                                what polydbg does
===================================================  ================================================
Xdebug reads no command while PHP runs               debug_pause is refused, saying to set a
(``supports_async`` 0): no ``break``, and a command  breakpoint or call ``xdebug_break()``; breakpoint
sent meanwhile waits in the socket for the next      changes reach a running request at its next
break.                                               break, before the break is judged.
``eval`` has no depth: it runs where PHP stopped.    in an outer frame, the variables an expression
                                                     names are read there and put in as values
                                                     (scalars); a path (``$a['k']->p``) is read with
                                                     ``property_get -d``; the rest is refused, saying so.
A failed ``eval`` answers only "error evaluating     the expression runs inside PHP's own ``eval`` in a
code".                                               ``try``: the answer is PHP's message.
Exception breakpoints stop at every throw, caught    ``raised`` is ``*``; ``uncaught`` is PHP's
or not; an uncaught one reaches the debugger only    ``Fatal error`` (no frames left: its class and
as the ``Fatal error`` PHP ends with, its frames     message, and how to stop at the throw instead);
unwound.                                             a class name matches subclasses.
A condition that fails to evaluate is false.         conditions are compiled by ``php -l`` when set, and
                                                     a bare lowercase name (a constant to PHP) refused.
Hit counts only ``>=``, ``==``, ``%``, per           polydbg counts hits across all requests.
connection.
A string value is cut at ``max_data``.               4 KB are read; the value says how long it is.
Xdebug declares iso-8859-1 but sends PHP's bytes.    packets are read as UTF-8.
Quoted command values take ``\\`` escapes; four       values are quoted only with a space, quote or
backslashes in a row drop the connection.            backslash, each escaped once.
A step out answers at the caller's line without the  ``breakpoint_include_return_value`` is set for a
value returned; a step over leaving a function       step out: its answer carries the value, the stop is
never carries it.                                    in the returning frame (hidden: the caller is shown).
An uncaught exception's end has no frames; a throw   a recording follows a throw one ``step_into``: the
break does not say where it will be caught.          ``catch``'s first line, or the end (uncaught).
A call's return value is traced only when the        a call without it reads as returning nothing; one
caller uses it; an exception's unwinding writes      that returned ``*uninitialized*`` ended by an
``*uninitialized*``.                                 exception (its text from the followed throw).
``xdebug.mode`` is read only as PHP starts: PHP-FPM   the attach answer says to give the settings to
ignores it in a pool's ``php_admin_value`` (the       FPM's command line or php.ini, not a pool.
other ``xdebug.*`` settings work there).
===================================================  ================================================
"""
