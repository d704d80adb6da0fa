"""Where pyarrow is installed, pandas keeps string columns in Arrow arrays.

The host must read those back (a captured frame with a text column) and must still
refuse a file whose Arrow array points outside its buffers, or that names any other
callable.
"""

from __future__ import annotations

import os
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stateguard.kernel.transfer import TransferError, load_value

pa = pytest.importorskip("pyarrow", reason="pandas uses Arrow strings only with pyarrow")


def _write(path: Path, value: object) -> Path:
    path.write_bytes(pickle.dumps(value))
    return path


VALUES = [
    pd.Series(["a", "b", None], name="s"),
    pd.DataFrame({"k": ["x", "y", "x"], "v": [1, 2, 3]}).set_index("k"),
    pd.DataFrame({"k": ["x", "y", "x"], "v": [1, 2, 3]}).groupby("k").sum(),
    pd.Index(["p", "q"]),
    pd.MultiIndex.from_tuples([("a", 1), ("b", 2)]),
    pd.Series(["z" * 50] * 2000)[::7],
    pd.Series([], dtype="str"),
]


@pytest.mark.parametrize("value", VALUES, ids=[type(v).__name__ for v in VALUES])
def test_arrow_string_values_round_trip(tmp_path: Path, value: object) -> None:
    got = load_value(_write(tmp_path / "v.pkl", value))
    assert value.equals(got)  # type: ignore[attr-defined]
    assert type(got) is type(value)
    assert str(getattr(got, "dtypes", getattr(got, "dtype", None))) == str(
        getattr(value, "dtypes", getattr(value, "dtype", None))
    )


class _OutOfBounds:
    """An Arrow string array whose offsets run a million bytes past its data."""

    def __reduce__(self) -> tuple[object, tuple[object]]:
        offsets = pa.py_buffer(np.array([0, 1_000_000], dtype=np.int32).tobytes())
        data = (pa.string(), 1, 0, 0, [None, offsets, pa.py_buffer(b"ab")], [], None)
        return (pa.lib._restore_array, (data,))


def test_an_array_pointing_outside_its_buffers_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "capture.pkl", {"answer": _OutOfBounds()})
    with pytest.raises(TransferError, match="malformed"):
        load_value(path)


class _Exploit:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


class _Reader:
    """A pyarrow function that opens files."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def __reduce__(self) -> tuple[object, tuple[str]]:
        from pyarrow import feather

        return (feather.read_table, (str(self.path),))


def test_other_callables_are_still_refused(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    value = {"frame": pd.DataFrame({"s": ["x"]}), "run": _Exploit(marker)}
    with pytest.raises(TransferError, match="refused"):
        load_value(_write(tmp_path / "v.pkl", value))
    assert not marker.exists()
    planted = _write(tmp_path / "reader.pkl", _Reader(tmp_path / "x.feather"))
    with pytest.raises(TransferError, match=r"refused pyarrow\.feather\.read_table"):
        load_value(planted)
