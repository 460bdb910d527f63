"""The code a check runs in each side's kernel before the notebook: a display formatter that carries
DataFrames, Series and arrays as their values (a JSON bundle under `VALUE_MIME`), so the comparison reads
values, dtypes and indexes rather than HTML; and the code that shows the `compare:` variables at the end.

It runs in the person's notebook kernel, so it imports nothing of architect_nb and defines one name.
"""

from __future__ import annotations

__all__ = ["LARGEST_VALUE", "SETUP_CODE", "VALUE_MIME", "compare_code"]

VALUE_MIME = "application/vnd.architect-nb.value+json"
#: Values with more elements than this are carried as a digest of their bytes (compared exactly).
LARGEST_VALUE = 200_000

SETUP_CODE = f"""
def __architect_check_setup__():
    import hashlib, math
    from IPython import get_ipython
    from IPython.core.formatters import JSONFormatter
    from traitlets import ObjectName, Unicode

    class ValueFormatter(JSONFormatter):
        format_type = Unicode({VALUE_MIME!r})
        print_method = ObjectName("_architect_value_")

    def plain(values, kind):
        if kind in "iub":
            return [v if isinstance(v, (bool, int)) else int(v) for v in values.tolist()]
        if kind == "f":
            return [v if math.isfinite(v) else repr(v) for v in values.tolist()]
        if kind == "c":
            return [[v.real, v.imag] for v in values.tolist()]
        return [str(v) for v in values.tolist()]

    def digest(array):
        try:
            return hashlib.sha256(array.tobytes()).hexdigest()
        except Exception:
            return hashlib.sha256(repr(array.tolist()).encode()).hexdigest()

    def index(idx):
        return {{"name": str(idx.name), "dtype": str(idx.dtype), "values": plain(idx.to_numpy(), "O"
                 if idx.dtype.kind not in "iubf" else idx.dtype.kind)}}

    def frame(df):
        if df.size > {LARGEST_VALUE}:
            import pandas
            return {{"kind": "dataframe", "shape": list(df.shape), "dtypes": [str(t) for t in df.dtypes],
                     "columns": [str(c) for c in df.columns],
                     "digest": str(pandas.util.hash_pandas_object(df, index=True).sum())}}
        return {{"kind": "dataframe", "shape": list(df.shape), "columns": [str(c) for c in df.columns],
                 "dtypes": [str(t) for t in df.dtypes], "index": index(df.index),
                 "data": [plain(df.iloc[:, i].to_numpy(), df.dtypes.iloc[i].kind)
                          for i in range(df.shape[1])]}}

    def series(s):
        if s.size > {LARGEST_VALUE}:
            import pandas
            return {{"kind": "series", "shape": [s.size], "dtype": str(s.dtype),
                     "digest": str(pandas.util.hash_pandas_object(s, index=True).sum())}}
        return {{"kind": "series", "name": str(s.name), "dtype": str(s.dtype), "index": index(s.index),
                 "data": plain(s.to_numpy(), s.dtype.kind)}}

    def array(a):
        if a.size > {LARGEST_VALUE} or a.dtype.kind not in "iubfcUSO":
            return {{"kind": "array", "shape": list(a.shape), "dtype": str(a.dtype), "digest": digest(a)}}
        return {{"kind": "array", "shape": list(a.shape), "dtype": str(a.dtype),
                 "data": plain(a.reshape(-1), a.dtype.kind)}}

    formatters = get_ipython().display_formatter
    values = ValueFormatter(parent=formatters)
    formatters.formatters[{VALUE_MIME!r}] = values
    for module in ("pandas", "pandas.core.frame", "pandas.core.series"):  # pandas 3 says "pandas"
        values.for_type_by_name(module, "DataFrame", frame)
        values.for_type_by_name(module, "Series", series)
    values.for_type_by_name("numpy", "ndarray", array)


__architect_check_setup__()
del __architect_check_setup__
"""


def compare_code(names: list[str]) -> str:
    """Code that displays each of `names` (variables, or dotted names), one display per name, in order; a
    name the notebook never defined shows its error."""
    return f"""
def __architect_compare__(names):
    from IPython import get_ipython
    from IPython.display import display
    ns = get_ipython().user_ns
    for name in names:
        try:
            value = eval(name, ns)
        except Exception as exc:
            display({{"text/plain": f"{{name}}: {{type(exc).__name__}}: {{exc}}"}}, raw=True)
        else:
            display(value)


__architect_compare__({names!r})
del __architect_compare__
"""
