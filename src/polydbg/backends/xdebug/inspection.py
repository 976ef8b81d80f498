"""Values at a stop: scopes (Xdebug's contexts), their variables, a value's children page by page, evaluation
and assignment — each addressed by a ref valid until the program moves.

A ref names a ``Holder``: the request, the stack depth and context (0 locals, 1 superglobals, 2 constants) and
the ``fullname`` that reaches the value (None: the context itself). Children Xdebug sent along with their parent
(down to ``max_depth``) are kept, so opening a small array costs no request; a longer one is read with
``property_get -p`` in pages of ``PAGE`` (the connection's ``max_children``).

``eval`` runs the expression inside PHP's own ``eval`` with a ``try`` (a nested ``eval`` shares its caller's
variables): Xdebug 3.2 answers a failed evaluation with only "error evaluating code", and the agent needs PHP's
message (``Undefined constant "nope"``, ``syntax error, unexpected token …``). Xdebug evaluates only where PHP
is (its ``eval`` takes no depth: an expression in frame 1 read frame 0's variables); in an outer frame the
variables an expression names are read from that frame (``property_get -d``) and put in as values — scalars
only: one holding an array or object is refused, saying how to read it instead.
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass

from polydbg.backends.base import FrameRef, Scope, Variable
from polydbg.backends.kit import returns, thrown
from polydbg.backends.kit.handles import HandleTable
from polydbg.backends.xdebug import values
from polydbg.backends.xdebug.request import Request
from polydbg.dbgp.client import DbgpError, Element, text_of
from polydbg.errors import AdapterRequestError, UsageError

PAGE = 100  # children per property_get page (feature max_children)
_FAILED = "\0polydbg-error\0"
_VARIABLE = re.compile(r"""('(?:[^'\\]|\\.)*'|"(?:[^"\\]|\\.)*")|(?<![\w$\\])\$([A-Za-z_]\w*)(?!\w)""")
_SCALARS = frozenset({"int", "float", "bool", "null", "string"})
_MEMBER = re.compile(r"\0\s*(?:\??->|::)")  # $exception (marked \0) used as an object
_PATH = re.compile(r"^\$\w+(?:\[(?:\d+|'[^']*'|\"[^\"]*\")\]|->\w+|::\$?\w+)*$")  # what property_get can name


@dataclass(slots=True)
class Holder:
    request: Request
    depth: int
    context: int
    fullname: str | None  # None: the context itself
    embedded: tuple[Element, ...] | None = None  # its children, when Xdebug sent them all along
    names: dict[str, str] | None = None  # a child's name → its fullname, once listed


def wrapped(expression: str) -> str:
    """``expression`` evaluated by PHP's ``eval`` in a ``try``: a failure answers ``_FAILED`` and its message."""
    inner = base64.b64encode(f"return ({expression});".encode()).decode()
    body = (f"try {{ return eval(base64_decode('{inner}')); }} catch (\\Throwable $__polydbg) {{ try {{ return "
            f"\"\\0polydbg-error\\0\" . get_class($__polydbg) . ': ' . $__polydbg->getMessage(); }} finally {{ "
            "unset($__polydbg); } }")
    return f"eval(base64_decode('{base64.b64encode(body.encode()).decode()}'))"


class Inspection:
    def __init__(self) -> None:
        self.handles: HandleTable[Holder] = HandleTable()

    def clear(self) -> None:
        self.handles.clear()

    def holder(self, ref: int) -> Holder:
        found = self.handles.get(ref)
        if found is None:
            raise AdapterRequestError("variables", f"ref {ref} is not valid at this stop")
        return found

    def scopes(self, request: Request, frame: FrameRef) -> list[Scope]:
        depth = request.depth(frame.index)
        return [Scope("Locals", self.handles.add(Holder(request, depth, 0, None)), hint="locals"),
                Scope("Superglobals", self.handles.add(Holder(request, depth, 1, None)), expensive=True),
                Scope("Constants", self.handles.add(Holder(request, depth, 2, None)), expensive=True)]

    def variable(self, holder: Holder, prop: Element, name: str | None = None) -> Variable:
        read = values.read(prop)
        ref = 0
        if read.children:
            kids = values.children(prop)
            embedded = tuple(kids) if kids and len(kids) >= min(read.children, values.page_size(prop) or PAGE) \
                and len(kids) == read.children else None
            ref = self.handles.add(Holder(holder.request, holder.depth, holder.context, read.fullname, embedded))
        indexed = read.children if read.children and read.type == "array" else None
        named = read.children if read.children and read.type != "array" else None
        return Variable(name=name or read.name, value=read.value, type=read.type, ref=ref,
                        evaluate_name=read.fullname, indexed_count=indexed, named_count=named)

    async def variables(self, ref: int, start: int | None = None, count: int | None = None) -> list[Variable]:
        holder = self.holder(ref)
        if holder.embedded is not None:
            props = list(holder.embedded)
        elif holder.fullname is None:
            props = (await holder.request.ask("context_get", [("d", str(holder.depth)),
                                                              ("c", str(holder.context))])).findall("property")
        else:
            props = values.children(await self._page(holder, 0))
        if holder.names is None:
            holder.names = {p.get("name") or "": p.get("fullname") or "" for p in props}
        found = [self.variable(holder, p) for p in props]
        returned = holder.request.returned
        if holder.fullname is None and holder.context == 0 and returned is not None \
                and holder.depth == holder.request.depth(0):
            found.insert(0, self._returned(holder.request, returned))
        return found

    def _returned(self, request: Request, returned: Element) -> Variable:
        """What the call a step out left returned, named ``(return) add`` (``kit.returns``); its children read
        from the returning frame as Xdebug's ``$__RETURN_VALUE``."""
        prop = next(iter(returned), None)
        returning = request.hidden()
        function = (returning[0].get("where") if returning else None) or "the call"
        if prop is None:
            return Variable(name=returns.returned_name(function), value="null", type="null")
        prop.set("name", "$__RETURN_VALUE")
        prop.set("fullname", "$__RETURN_VALUE")
        return self.variable(Holder(request, 0, 0, None), prop, name=returns.returned_name(function))

    async def _page(self, holder: Holder, page: int) -> Element:
        assert holder.fullname is not None
        answer = await holder.request.ask("property_get", [("d", str(holder.depth)), ("c", str(holder.context)),
                                                            ("n", holder.fullname), ("p", str(page))])
        found = answer.find("property")
        if found is None:
            raise AdapterRequestError("property_get", f"Xdebug sent no value for {holder.fullname}")
        return found

    async def child_slice(self, parent: Variable, start: int, count: int) -> list[Variable] | None:
        holder = self.handles.get(parent.ref)
        if holder is None or holder.fullname is None or holder.embedded is not None:
            return None
        props: list[Element] = []
        for page in range(start // PAGE, (start + count - 1) // PAGE + 1):
            got = values.children(await self._page(holder, page))
            props += got
            if len(got) < PAGE:
                break
        offset = start - (start // PAGE) * PAGE
        return [self.variable(holder, p) for p in props[offset:offset + count]]

    async def evaluate(self, request: Request, expression: str, depth: int, exception: tuple[str, str] | None
                       ) -> Variable:
        if thrown.names_it(expression):
            if exception is None:
                raise thrown.not_at_an_exception("Xdebug")
            kind, message = exception
            if expression.strip() == thrown.NAME:  # Xdebug 3.2 hands over no exception object: its class and message
                return thrown.message(expression, f"{kind}: {message}", kind)
            if _MEMBER.search(thrown.substitute(expression, "\0")):
                raise UsageError(f"{thrown.NAME} is only the text \"{kind}: {message}\": Xdebug 3.2 hands over no "
                                 f"exception object, so it has no methods or properties ({expression}). Read the "
                                 "object where the code holds it: the variable a `throw $e;` throws, or, after a "
                                 "`throw new …`, in the catch block (a breakpoint there)")
            expression = thrown.substitute(expression, values.php_string(f"{kind}: {message}"))
        if depth > 0 and not _PATH.match(expression.strip()):
            expression = await self._in_frame(request, expression, depth)
        elif depth > 0:  # a variable, an element or a property: read where it is
            answer = await request.ask("property_get", [("d", str(depth)), ("n", expression.strip())])
            found = answer.find("property")
            if found is not None:
                return self.variable(Holder(request, depth, 0, None), found, expression)
        try:
            answer = await request.ask("eval", [("d", str(depth))], wrapped(expression))
        except DbgpError as exc:
            raise AdapterRequestError("evaluate", f"{exc.message} ({expression})") from exc
        prop = answer.find("property")
        if prop is None:
            raise AdapterRequestError("evaluate", f"Xdebug answered no value for {expression}")
        if prop.get("type") == "string" and text_of(prop).startswith(_FAILED):
            raise AdapterRequestError("evaluate", text_of(prop)[len(_FAILED):])
        holder = Holder(request, depth, 0, None)
        variable = self.variable(holder, prop, expression)
        made = self.handles.get(variable.ref) if variable.ref else None
        if made is not None and _PATH.match(expression.strip()):  # its pages can be read by name
            made.fullname = expression.strip()
        elif made is not None and made.embedded is None:  # an expression's value: only what came along
            made.embedded = tuple(values.children(prop))
        return variable._replace(evaluate_name=expression)

    async def _in_frame(self, request: Request, expression: str, depth: int) -> str:
        """``expression`` with the variables it names replaced by their values in the frame at ``depth``."""
        literals: dict[str, str] = {}
        for found in _VARIABLE.finditer(expression):
            name = found.group(2)
            if name is None or name in literals:
                continue
            if name == "this":
                raise UsageError(self._outer(request, expression, "$this", "an object"))
            try:
                answer = await request.ask("property_get", [("d", str(depth)), ("n", f"${name}")])
            except DbgpError as exc:
                raise AdapterRequestError("evaluate", f"no variable ${name} in that frame ({exc.message})") from exc
            prop = answer.find("property")
            kind = prop.get("type") if prop is not None else None
            if prop is None or kind not in _SCALARS:
                raise UsageError(self._outer(request, expression, f"${name}", f"a value of type {kind}"))
            literals[name] = _literal(prop)
        return _VARIABLE.sub(lambda m: m.group(1) if m.group(2) is None else f"({literals[m.group(2)]})", expression)

    @staticmethod
    def _outer(request: Request, expression: str, name: str, what: str) -> str:
        hidden = request.hidden()
        where = (f"the frame PHP stopped in ({hidden[0].get('where')}, listed above frame 0)" if hidden
                 else "the innermost frame")
        return (f"cannot evaluate {expression!r} in this frame: Xdebug 3.2 evaluates only in {where}, and {name} "
                f"holds {what}, which cannot be carried there; read it with debug_variables(frame_id=…), or "
                f"debug_evaluate a path such as {name}['key'] or {name}->prop (read where it is)")

    async def set_variable(self, ref: int, name: str, value: str) -> Variable:
        holder = self.holder(ref)
        if holder.fullname is None:
            fullname = name if name.startswith("$") or holder.context else f"${name}"
        else:
            if holder.names is None:
                await self.variables(ref)
            fullname = (holder.names or {}).get(name) or ""
            if not fullname:
                raise UsageError(f"{holder.fullname} has no element {name!r}; debug_variables(ref={ref}) lists them")
        args = [("d", str(holder.depth)), ("c", str(holder.context)), ("n", fullname)]
        answer = await holder.request.ask("property_set", args, value)
        if answer.get("success") != "1":
            raise AdapterRequestError("setVariable", f"PHP could not assign {value!r} to {fullname} (it must be a "
                                                     "PHP expression: 42, 'text', [1, 2], $other)")
        prop = (await holder.request.ask("property_get", args)).find("property")
        if prop is None:
            raise AdapterRequestError("setVariable", f"{fullname} cannot be read back")
        return self.variable(holder, prop, name)


def _literal(prop: Element) -> str:
    """A scalar property as a PHP literal."""
    kind = prop.get("type")
    if kind == "string":
        return "'" + text_of(prop).replace("\\", "\\\\").replace("'", "\\'") + "'"
    return values.describe(prop)
