# Made with pandas 2.3.3 (python -m venv; pip install 'pandas<3'); see test_kernel_python.py.
import pickle
import sys

import numpy as np
import pandas as pd

df = pd.DataFrame(
    {
        "i": [1, 2, 3],
        "f": [1.5, None, 2.5],
        "s": ["a", "b", None],
        "d": pd.to_datetime(["2020-01-01", None, "2020-01-03"]),
        "tz": pd.to_datetime(["2020-01-01", "2020-01-02", "2020-01-03"]).tz_localize("UTC"),
        "td": pd.to_timedelta([1, 2, 3], unit="D"),
        "c": pd.Categorical(["x", "y", "x"]),
        "I": pd.array([1, None, 3], dtype="Int64"),
        "S": pd.array(["a", None, "c"], dtype="string"),
        "p": pd.period_range("2020-01", periods=3, freq="M"),
    }
)
values = {
    "frame": df,
    "multi": df.set_index(["s", "i"]),
    "series": df["f"],
    "grouped": df.groupby("c", observed=True)["i"].sum(),
    "nat": pd.NaT,
    "range": pd.RangeIndex(3),
    "scalar": np.float64(0.5),
    "version": pd.__version__,
}
with open(sys.argv[1], "wb") as fh:
    pickle.dump(values, fh, protocol=4)
