"""Files the kernel writes are read on the host as plain data, never run.

A cell can replace any file in its working directory, including the pickles the host
reads back (captured values, judge results). `kernel.transfer.load_value` must read
every plain value the bench captures and refuse anything that names other callables.
"""

from __future__ import annotations

import datetime
import os
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from stateguard.kernel.transfer import TransferError, load_value


class _Exploit:
    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


class _UserType:
    def __init__(self) -> None:
        self.x = 1


def _write(path: Path, value: object) -> Path:
    path.write_bytes(pickle.dumps(value))
    return path


VALUES = [
    {"a": 1, "b": [1.5, None, "s"], "c": (1, 2), "d": {1, 2}},
    np.arange(6.0).reshape(2, 3),
    np.array([1, "a"], dtype=object),
    np.float64(2.5),
    pd.DataFrame(
        {
            "i": [1, 2],
            "s": ["x", "y"],
            "t": pd.to_datetime(["2020-01-01", "2020-01-02"]),
            "c": pd.Categorical(["u", "v"]),
            "n": pd.array([1, None], dtype="Int64"),
        }
    ).set_index("s"),
    pd.Series([1.0, 2.0], index=pd.MultiIndex.from_tuples([(1, "a"), (2, "b")]), name="v"),
    pd.date_range("2020-01-31", periods=3, freq="ME"),
    pd.Timestamp("2020-01-01", tz="UTC"),
    datetime.timedelta(days=1),
]


@pytest.mark.parametrize("value", VALUES, ids=[type(v).__name__ for v in VALUES])
def test_plain_values_round_trip(tmp_path: Path, value: object) -> None:
    got = load_value(_write(tmp_path / "v.pkl", value))
    if isinstance(value, (pd.DataFrame, pd.Series)):
        assert value.equals(got)  # type: ignore[arg-type]
    elif isinstance(value, (np.ndarray, pd.Index)):
        assert (np.asarray(value) == np.asarray(got)).all()
    else:
        assert got == value


def test_a_planted_pickle_is_refused_and_not_run(tmp_path: Path) -> None:
    marker = tmp_path / "pwned"
    path = _write(tmp_path / "capture.pkl", {"answer": _Exploit(marker)})
    with pytest.raises(TransferError, match=r"refused posix\.system|refused os\.system"):
        load_value(path)
    assert not marker.exists()


@pytest.mark.parametrize(
    "payload",
    [
        pickle.dumps(_UserType()),
        b"cbuiltins\neval\n(S'1+1'\ntR.",
        b"cnumpy\nmemmap\n(S'/tmp/x'\ntR.",
        b"not a pickle",
    ],
    ids=["user class", "builtins.eval", "numpy.memmap", "garbage"],
)
def test_other_callables_and_garbage_are_typed_errors(tmp_path: Path, payload: bytes) -> None:
    path = tmp_path / "v.pkl"
    path.write_bytes(payload)
    with pytest.raises(TransferError, match=str(path)):
        load_value(path)


def test_oversized_files_are_not_read(tmp_path: Path) -> None:
    path = _write(tmp_path / "big.pkl", list(range(1000)))
    with pytest.raises(TransferError, match="more than"):
        load_value(path, max_bytes=100)
