"""Compact values for pydevd: sqlite3.Row, numpy arrays, pandas DataFrames and Series, alone or in containers.

Loaded by pydevd inside the debuggee (an extension it finds while it starts: the debuggee shim puts this
folder on sys.path for that moment only). Each provider serves a type only when its package is already in
``sys.modules``: a program that never imported numpy or pandas does not import them because of the debugger.
pydevd's own numpy and pandas providers (the whole repr of a frame, every attribute as a child) are switched
off in favour of these: a value is a one-line summary (shape, dtypes, the first rows or elements) and the
children are the rows or elements (``len()`` says how many; polydbg pages past the first ``CHILDREN`` by
slicing: ``.iloc[a:b]``, ``[a:b]``).

A value inside a list, tuple, dict or set reads as it does alone: pydevd writes containers with its own walker
(``SafeRepr``), which calls ``repr()`` on what they hold (a list of rows read ``[<sqlite3.Row object at 0x…>, …]``,
a dict holding a DataFrame held pandas' repr over many lines), so the walker asks pydevd's presentation providers
first, as pydevd does for a value alone, and cuts what they say as it cuts a repr inside a container.
"""
import importlib
import itertools
import re
import sys
from functools import partial

from _pydevd_bundle.pydevd_extension_api import StrPresentationProvider, TypeResolveProvider

CHILDREN = 100  # rows or elements listed at once
SHOWN = 3  # rows or elements in a summary
SHOWN_IN_SERIES = 6  # a Series is often a frame's row: its values, column by column
VALUE_CHARS = 60  # one value inside a summary
SUMMARY_CHARS = 400
COLUMNS_SHOWN = 8


def _cut(text, limit):
    return text if len(text) <= limit else text[:limit - 1] + "…"


def _plain(value):
    """A numpy scalar as the Python value it holds (np.float64(1.5) reads 1.5)."""
    item = getattr(value, "item", None)
    if item is not None and type(value).__module__ == "numpy" and getattr(value, "ndim", 1) == 0:
        try:
            return item()
        except Exception:
            return value
    return value


def _r(value):
    try:
        return _cut(repr(_plain(value)), VALUE_CHARS)
    except Exception as exc:
        return "<repr failed: %s>" % (type(exc).__name__,)


def _class(module, name):
    found = sys.modules.get(module)
    return getattr(found, name, None) if found is not None else None


def _len_entry(count):
    return ("len()", count, partial(_apply, "len(%s)"))


def _apply(pattern, parent):
    return pattern % (parent,)


def _is_range(index):
    """A default index (0, 1, 2, …): labels and positions are the same."""
    start, step = getattr(index, "start", None), getattr(index, "step", None)
    return type(index).__name__ == "RangeIndex" and start == 0 and step == 1


class _Provider:
    module, name = "", ""

    def can_provide(self, type_object, type_name):
        cls = _class(self.module, self.name)
        return cls is not None and isinstance(type_object, type) and issubclass(type_object, cls)

    def resolve(self, obj, attribute):
        for name, value, _ in self.get_contents_debug_adapter_protocol(obj):
            if name == attribute:
                return value
        return None

    def get_dictionary(self, obj):
        return {name: value for name, value, _ in self.get_contents_debug_adapter_protocol(obj)}

    def get_str_in_context(self, obj, context):
        return self.get_str(obj)

    def get_str(self, obj):
        try:
            return _cut(self.summary(obj), SUMMARY_CHARS)
        except Exception as exc:
            return "<%s: summary failed: %s>" % (type(obj).__name__, exc)


class SqliteRowProvider(_Provider):
    """A row of a query with ``row_factory = sqlite3.Row``: its columns by name (it has no attributes)."""

    module, name = "sqlite3", "Row"

    # (a Row iterates its values, not its keys)
    def summary(self, row):
        return "Row(%s)" % ", ".join("%s=%s" % (key, _r(row[key])) for key in row.keys())  # noqa: SIM118

    def get_contents_debug_adapter_protocol(self, row, fmt=None):
        return [(key, row[key], "[%r]" % (key,)) for key in row.keys()] + [_len_entry(len(row))]  # noqa: SIM118


class NdArrayProvider(_Provider):
    module, name = "numpy", "ndarray"

    def summary(self, array):
        numpy = sys.modules["numpy"]
        text = numpy.array2string(array, threshold=2 * SHOWN, edgeitems=SHOWN, separator=", ",
                                  max_line_width=10 ** 6)
        text = re.sub(r"\[\s+", "[", " ".join(text.split())).replace("...", "…")
        return "ndarray %s %s %s" % (array.shape, array.dtype, text)

    def get_contents_debug_adapter_protocol(self, array, fmt=None):
        if array.ndim == 0:
            return []
        count = len(array)
        return [(str(i), array[i], "[%d]" % i) for i in range(min(count, CHILDREN))] + [_len_entry(count)]


class DataFrameProvider(_Provider):
    """Rows by index label (each a Series of the row), the shape and column types in the summary."""

    module, name = "pandas", "DataFrame"

    def summary(self, frame):
        rows, columns = frame.shape
        dtypes = ", ".join("%s: %s" % (name, dtype) for name, dtype in
                           itertools.islice(frame.dtypes.items(), COLUMNS_SHOWN))
        if columns > COLUMNS_SHOWN:
            dtypes += ", … %d more" % (columns - COLUMNS_SHOWN)
        text = "DataFrame %d row%s × %d column%s (%s)" % (rows, "" if rows == 1 else "s", columns,
                                                         "" if columns == 1 else "s", dtypes)
        shown = []
        for label, row in itertools.islice(frame.iterrows(), SHOWN):
            values = ", ".join(_r(v) for v in itertools.islice(row.values, COLUMNS_SHOWN))
            shown.append("%s: (%s%s)" % (label, values, ", …" if columns > COLUMNS_SHOWN else ""))
        if shown:
            text += "; rows " + ", ".join(shown) + (", …" if rows > SHOWN else "")
        return text

    def get_contents_debug_adapter_protocol(self, frame, fmt=None):
        count = len(frame)
        labels = frame.index[:CHILDREN]
        return [(str(label), frame.iloc[i], ".iloc[%d]" % i) for i, label in enumerate(labels)] + \
            [_len_entry(count)]


class SeriesProvider(_Provider):
    """Values by index label; a row of a DataFrame reads column: value."""

    module, name = "pandas", "Series"

    def summary(self, series):
        head = "Series %s(%d %s)" % ("%r " % (series.name,) if series.name is not None else "", len(series),
                                     series.dtype)
        pairs = list(itertools.islice(series.items(), SHOWN_IN_SERIES))
        more = ", …" if len(series) > SHOWN_IN_SERIES else ""
        if _is_range(series.index):
            return "%s [%s%s]" % (head, ", ".join(_r(v) for _, v in pairs), more)
        return "%s {%s%s}" % (head, ", ".join("%s: %s" % (label, _r(v)) for label, v in pairs), more)

    def get_contents_debug_adapter_protocol(self, series, fmt=None):
        count = len(series)
        labels = series.index[:CHILDREN]
        return [(str(label), series.iloc[i], ".iloc[%d]" % i) for i, label in enumerate(labels)] + \
            [_len_entry(count)]


class NumpyScalarProvider:
    """A numpy scalar reads as its value (numpy 2 writes np.float64(1.5)); its type says float64."""

    def can_provide(self, type_object, type_name):
        cls = _class("numpy", "generic")
        return cls is not None and isinstance(type_object, type) and issubclass(type_object, cls)

    def get_str_in_context(self, value, context):
        return self.get_str(value)

    def get_str(self, value):
        return repr(_plain(value))


_PLAIN = frozenset({int, float, complex, bool, str, bytes, type(None), list, tuple, dict, set, frozenset})


def _values_in_containers_as_alone():
    try:
        from _pydevd_bundle import pydevd_safe_repr
    except Exception:
        return
    walker = pydevd_safe_repr.SafeRepr
    plain = walker._repr

    def _repr(self, obj, level):
        kind = type(obj)
        if level and kind not in _PLAIN and not self.raw_value:
            presented = sys.modules.get("_pydevd_bundle.pydevd_xml")
            try:
                text = presented._str_from_providers(obj, kind, kind.__name__) if presented is not None else None
            except Exception:
                text = None
            if isinstance(text, str):
                return [_cut(text, self.maxother_inner)]
        return plain(self, obj, level)

    walker._repr = _repr


_values_in_containers_as_alone()

PROVIDERS = (SqliteRowProvider, NdArrayProvider, DataFrameProvider, SeriesProvider)
for _provider in PROVIDERS:
    TypeResolveProvider.register(_provider)
    StrPresentationProvider.register(_provider)
StrPresentationProvider.register(NumpyScalarProvider)

# pydevd's own providers for these types come first in its search: leave only the ones we do not replace.
for _module, _keep in (("pydevd_plugins.extensions.types.pydevd_plugin_numpy_types", []),
                       ("pydevd_plugins.extensions.types.pydevd_plugin_pandas_types",
                        ["PandasStylerTypeResolveProvider"])):
    try:
        importlib.import_module(_module).__all__ = _keep
    except Exception:
        pass
__all__ = [p.__name__ for p in PROVIDERS] + [NumpyScalarProvider.__name__]
