"""The guard keeps records of a cell's merges, never their results."""

from __future__ import annotations

import gc
import weakref

import numpy as np
import pandas as pd

from stateguard.audit.joinguard import JoinGuard
from stateguard.audit.joinkeys import _first_unseen


def test_a_result_the_code_dropped_is_freed() -> None:
    g = JoinGuard(None)
    g.install()
    try:
        a = pd.DataFrame({"k": range(10), "v": 1.0})
        result = a.merge(a.head(5), on="k")
        ref = weakref.ref(result)
        del result
        gc.collect()
        assert ref() is None
        assert len(g.records) == 1 and g.records[0].left_unmatched == 5
    finally:
        g.uninstall()


def test_first_unseen_matches_a_full_scan() -> None:
    rng = np.random.default_rng(1)
    for share in (0.0, 1e-5, 0.3, 1.0):
        seen = rng.random(300_000) >= share
        for k in (1, 5, 2000):
            assert _first_unseen(seen, k).tolist() == np.flatnonzero(~seen)[:k].tolist()
