"""Reading values the kernel wrote, without running code the kernel chose.

Values cross from the kernel to the host as pickle files (a frame, an array, a
number the judge compares). A plain ``pickle.load`` of such a file runs whatever
callables the file names: a cell that replaces it gets code execution on the host.
`load_value` reads them with an unpickler that resolves only the data types and
reconstruction helpers of the standard library, numpy and pandas that such values
are made of (the list was taken from pickling those types, every dtype and index
kind included). Anything else — a user class, ``os.system``, ``builtins.eval``, a
numpy or pandas function that opens files — is refused with `TransferError`. Where
pyarrow is installed, pandas keeps string columns in Arrow arrays: those are rebuilt
with pyarrow's own helpers and validated in full (offsets within their buffers).

`load_value(..., own_types=True)` also admits stateguard's own pydantic models, for
caches the host itself wrote (gold, plans).
"""

from __future__ import annotations

import io
import pickle
from pathlib import Path
from typing import Any

from pydantic import BaseModel

from stateguard.errors import StateguardError

#: (module, name) pairs a value of the standard library, numpy or pandas needs.
ALLOWED: frozenset[tuple[str, str]] = frozenset(
    {
        ("builtins", n)
        for n in (
            "complex", "list", "dict", "set", "frozenset", "tuple", "range", "slice",
            "bytearray", "bytes", "str", "int", "float", "bool", "object",
        )
    }
    | {("collections", n) for n in ("Counter", "OrderedDict", "defaultdict", "deque")}
    | {("datetime", n) for n in ("date", "datetime", "time", "timedelta", "timezone")}
    | {("decimal", "Decimal"), ("fractions", "Fraction")}
    | {("copyreg", "_reconstructor")}
    | {("numpy", n) for n in ("dtype", "ndarray")}
    | {
        (m, n)
        for m in ("numpy._core.multiarray", "numpy.core.multiarray")
        for n in ("_reconstruct", "scalar")
    }
    | {(m, "_frombuffer") for m in ("numpy._core.numeric", "numpy.core.numeric")}
    | {("numpy.ma", "MaskedArray"), ("numpy.ma.core", "_mareconstruct")}
    | {
        ("pandas", n)
        for n in (
            "BooleanDtype", "Categorical", "CategoricalDtype", "DataFrame", "DatetimeIndex",
            "DatetimeTZDtype", "Float32Dtype", "Float64Dtype", "Index", "Int8Dtype",
            "Int16Dtype", "Int32Dtype", "Int64Dtype", "UInt8Dtype", "UInt16Dtype",
            "UInt32Dtype", "UInt64Dtype", "IntervalDtype", "IntervalIndex", "Interval",
            "MultiIndex", "NA", "Period", "PeriodDtype", "PeriodIndex", "RangeIndex",
            "Series", "StringDtype", "Timestamp", "Timedelta", "TimedeltaIndex",
            "CategoricalIndex", "SparseDtype",
        )
    }
    | {
        ("pandas.arrays", n)
        for n in (
            "BooleanArray", "DatetimeArray", "FloatingArray", "IntegerArray", "IntervalArray",
            "PeriodArray", "StringArray", "TimedeltaArray", "SparseArray", "ArrowStringArray",
        )
    }
    | {
        ("pandas._libs.arrays", "__pyx_unpickle_NDArrayBacked"),
        ("pandas._libs.internals", "_unpickle_block"),
        ("pandas._libs.interval", "__pyx_unpickle_IntervalMixin"),
        ("pandas._libs.tslibs.nattype", "_nat_unpickle"),
        ("pandas._libs.tslibs.timedeltas", "_timedelta_unpickle"),
        ("pandas._libs.tslibs.timestamps", "_unpickle_timestamp"),
        ("pandas.core.indexes.base", "_new_Index"),
        ("pandas.core.indexes.datetimes", "_new_DatetimeIndex"),
        ("pandas.core.indexes.interval", "_new_IntervalIndex"),
        ("pandas.core.indexes.period", "_new_PeriodIndex"),
        ("pandas.core.internals.managers", "BlockManager"),
        ("pandas.core.internals.managers", "SingleBlockManager"),
    }
)  # fmt: skip
#: The same pandas types where pandas 2 pickles them (a kernel may run pandas 2,
#: `stateguard.kernel.interpreter`), taken the same way from pandas 2.3's pickles.
ALLOWED |= frozenset(
    {
        ("pandas._libs.interval", "Interval"), ("pandas._libs.missing", "NA"),
        ("pandas._libs.sparse", "IntIndex"), ("pandas._libs.tslibs.period", "Period"),
        ("pandas.core.frame", "DataFrame"), ("pandas.core.series", "Series"),
    }
    | {
        (f"pandas.core.arrays.{m}", n)
        for m, names in {
            "boolean": ("BooleanArray", "BooleanDtype"),
            "categorical": ("Categorical",),
            "datetimes": ("DatetimeArray",),
            "floating": ("FloatingArray", "Float32Dtype", "Float64Dtype"),
            "integer": (
                "IntegerArray", "Int8Dtype", "Int16Dtype", "Int32Dtype", "Int64Dtype",
                "UInt8Dtype", "UInt16Dtype", "UInt32Dtype", "UInt64Dtype",
            ),
            "interval": ("IntervalArray",),
            "period": ("PeriodArray",),
            "sparse.array": ("SparseArray",),
            "string_": ("StringArray", "StringDtype"),
            "string_arrow": ("ArrowStringArray",),
            "timedeltas": ("TimedeltaArray",),
        }.items()
        for n in names
    }
    | {
        ("pandas.core.dtypes.dtypes", n)
        for n in ("CategoricalDtype", "DatetimeTZDtype", "IntervalDtype", "PeriodDtype",
                  "SparseDtype")
    }
    | {
        (f"pandas.core.indexes.{m}", n)
        for m, n in (
            ("base", "Index"), ("category", "CategoricalIndex"),
            ("datetimes", "DatetimeIndex"), ("interval", "IntervalIndex"),
            ("multi", "MultiIndex"), ("period", "PeriodIndex"), ("range", "RangeIndex"),
            ("timedeltas", "TimedeltaIndex"),
        )
    }
)  # fmt: skip
#: Functions pandas 2 pickles under names this pandas renamed (as pandas' own
#: ``read_pickle`` maps them); the targets are in `ALLOWED`.
_RENAMED = {
    ("pandas._libs.tslibs.nattype", "__nat_unpickle"): (
        "pandas._libs.tslibs.nattype",
        "_nat_unpickle",
    ),
    ("pandas.core.internals.blocks", "new_block"): ("pandas._libs.internals", "_unpickle_block"),
}
#: pyarrow's helpers, for the Arrow arrays pandas stores string columns in where pyarrow
#: is installed; an array rebuilt from a file is validated in full before it is used.
_PYARROW = frozenset({("pyarrow.lib", "py_buffer"), ("pyarrow.lib", "type_for_alias")})
#: Modules whose *classes* (date offsets: ``MonthEnd``, ``Day``…) are plain data.
_CLASS_MODULES = ("pandas._libs.tslibs.offsets",)
#: Reading refuses files larger than this (a cell could write a huge one).
MAX_BYTES = 2 * 1024**3


class TransferError(StateguardError):
    """A file the kernel wrote could not be read as a plain value (and was not run)."""


class _DataOnly(pickle.Unpickler):
    def __init__(self, fh: io.BufferedIOBase, own_types: bool) -> None:
        super().__init__(fh)
        self.own_types = own_types

    def find_class(self, module: str, name: str) -> Any:
        module, name = _RENAMED.get((module, name), (module, name))
        if (module, name) in ALLOWED or (module, name) in _PYARROW:
            return super().find_class(module, name)
        if (module, name) == ("pyarrow.lib", "_restore_array"):
            return _restore_arrow_array
        if module in _CLASS_MODULES or (self.own_types and module.startswith("stateguard.")):
            found = super().find_class(module, name)
            if isinstance(found, type) and (module in _CLASS_MODULES or _is_model(found)):
                return found
        raise pickle.UnpicklingError(f"refused {module}.{name}: not a plain data type")


def _restore_arrow_array(data: Any) -> Any:
    """pyarrow's own array rebuild, then a full validation: offsets and lengths a file
    states must lie within its buffers (else ``ArrowInvalid``, a ValueError)."""
    import pyarrow.lib  # only a file holding Arrow arrays gets here (pyarrow is installed)

    array = pyarrow.lib._restore_array(data)
    array.validate(full=True)
    return array


def _is_model(cls: type) -> bool:
    return issubclass(cls, BaseModel) or issubclass(cls, tuple)  # models, named tuples


def loads_value(data: bytes, *, what: str = "value") -> Any:
    """`load_value` of a pickle held in memory (``what`` names it in errors)."""
    try:
        return _DataOnly(io.BytesIO(data), False).load()  # type: ignore[arg-type]
    except (pickle.UnpicklingError, EOFError, AttributeError, ImportError) as exc:
        raise TransferError(f"{what}: not read as a plain value: {exc}") from exc
    except (ValueError, TypeError, IndexError, KeyError, MemoryError, RecursionError) as exc:
        raise TransferError(f"{what}: malformed: {type(exc).__name__}: {exc}") from exc


def load_value(path: Path, *, own_types: bool = False, max_bytes: int = MAX_BYTES) -> Any:
    """The value pickled in `path`, read without resolving anything but plain data types.

    TransferError names the file and what was refused or unreadable.
    """
    path = Path(path)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            raise TransferError(f"{path}: {size} bytes, more than the {max_bytes} read")
        with open(path, "rb") as fh:
            return _DataOnly(fh, own_types).load()  # type: ignore[arg-type]
    except TransferError:
        raise
    except (OSError, pickle.UnpicklingError, EOFError, AttributeError, ImportError) as exc:
        raise TransferError(f"{path}: not read as a plain value: {exc}") from exc
    except (ValueError, TypeError, IndexError, KeyError, MemoryError, RecursionError) as exc:
        raise TransferError(f"{path}: malformed: {type(exc).__name__}: {exc}") from exc
