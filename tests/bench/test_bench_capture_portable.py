"""What crosses from the kernel for a value: plain data, plain containers, or a stand-in
whose bytes only a kernel unpickles (`stateguard.bench.capture.portable`)."""

from __future__ import annotations

import collections
import pickle
import threading

import numpy as np
import pandas as pd

from stateguard.bench.capture import NOT_PLAIN, UNPICKLABLE, is_marker, portable, revive
from stateguard.bench.judges.dseval import holds_stand_in
from stateguard.kernel.transfer import loads_value

Point = collections.namedtuple("Point", ["x", "y"])


class Model:
    def __init__(self, w: float) -> None:
        self.w = w


def test_plain_values_cross_as_themselves() -> None:
    frame = pd.DataFrame({"a": [1, 2]})
    assert portable(frame) is frame
    assert portable(3.5) == 3.5 and portable(np.float64(2.0)) == 2.0


def test_containers_of_other_types_cross_as_plain_containers() -> None:
    got = portable(Point(1, np.int64(2)))
    assert type(got) is tuple and got == (1, 2)
    nested = portable({"model": Model(2.0), "scores": [Point(0.5, 0.25)]})
    assert nested["scores"] == [(0.5, 0.25)]
    assert set(nested["model"]) == {NOT_PLAIN} and holds_stand_in(nested)
    loads_value(pickle.dumps(nested))  # the host reads all of it as plain data


def test_other_objects_cross_as_stand_ins_revived_only_by_unpickling_their_bytes() -> None:
    stand_in = portable(Model(2.0))
    assert is_marker(stand_in)
    marker = stand_in[NOT_PLAIN]
    assert marker["type"].endswith("Model") and "Model" in marker["repr"]
    assert isinstance(marker["pickle"], bytes)
    assert revive(stand_in).w == 2.0
    assert revive((stand_in, [1]))[1] == [1]


def test_unpicklable_values_cross_as_their_text() -> None:
    got = portable(threading.Lock())
    assert set(got) == {UNPICKLABLE} and "lock" in got[UNPICKLABLE]
    assert revive(got) == got and not holds_stand_in(got)
