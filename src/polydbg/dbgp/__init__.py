"""DBGp, the protocol of Xdebug (PHP): framing (``stream``) and the client on the protocol core (``client``).

Hand-written because no maintained Python DBGp client exists: the ones on PyPI (``dbgp``, ActiveState's
``dbgpClient``/``pydbgp`` of Komodo, vim-vdebug's embedded one) are unmaintained, synchronous or tied to an
editor, and none reads Xdebug 3's packets into the shape the other protocol clients here share. The protocol
is small: the engine sends ``<length>\\0<xml>\\0`` packets (``init``, ``response``, ``stream``, ``notify``),
the IDE sends one command line each ``name -i TID args [-- base64data]\\0``
(https://xdebug.org/docs/dbgp). Unlike the other protocols the debugger connects to *us*: Xdebug, loaded in
the PHP process, connects back to a port polydbg listens on, once per script run (every web request is a
new connection).
"""
