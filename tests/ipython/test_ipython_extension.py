"""``%load_ext stateguard`` in a stock Jupyter kernel, driven as a notebook would drive it."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from jupyter_kernel import JupyterKernel

pytestmark = pytest.mark.kernel

WARNING = "stateguard: cost@v1 is stale: derived from rate@v1, which In [3] superseded with rate@v2"


@pytest.fixture(scope="module")
def kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[JupyterKernel]:
    k = JupyterKernel(str(tmp_path_factory.mktemp("notebook")))
    try:
        yield k
    finally:
        k.close()


def test_warns_after_a_stale_read_and_explains_on_demand(kernel: JupyterKernel) -> None:
    assert kernel.run("%load_ext stateguard").status == "ok"  # In [1]
    assert kernel.run("rate = 0.10\ncost = 200 * rate").stderr == ""  # In [2]
    assert kernel.run("rate = 0.12  # revised").stderr == ""  # In [3]

    # nothing stale read: nothing added
    quiet = kernel.run("print(rate)")
    assert (quiet.stdout, quiet.stderr) == ("0.12\n", "")
    assert kernel.run("%stateguard status").stdout == f"{WARNING}\n"

    read = kernel.run("print(cost)")
    assert read.stdout == "20.0\n"  # the user's output is untouched
    assert read.stderr == f"{WARNING}\n"
    assert not any(k.startswith("application/vnd.stateguard") for d in read.displays for k in d)

    why = kernel.run("%stateguard why cost")
    assert why.stdout == f"{WARNING} (chain: rate@v1 -> cost@v1)\n"
    assert kernel.run("%stateguard why rate").stdout == "stateguard: rate@v2 is current.\n"
    assert "no live variable 'nope'" in kernel.run("%stateguard why nope").stdout
    assert kernel.run("%stateguard").stdout.startswith("usage: %stateguard status")

    # recomputing clears it
    fixed = kernel.run("cost = 200 * rate\nprint(cost)")
    assert (fixed.stdout, fixed.stderr) == ("24.0\n", "")
    assert kernel.run("%stateguard status").stdout == "stateguard: nothing is stale.\n"


def test_errors_and_unload(kernel: JupyterKernel, tmp_path: Path) -> None:
    failed = kernel.run("1 / 0")
    assert failed.status == "error" and "ZeroDivisionError" in failed.stderr
    assert "stateguard" not in failed.stderr
    assert kernel.run("%unload_ext stateguard").status == "ok"
    assert kernel.run("%stateguard status").status == "error"  # the magic is gone
    after = kernel.run("x = 1\nx")
    assert after.status == "ok" and after.stderr == ""
