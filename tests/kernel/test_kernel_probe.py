"""Fork-based probes leave the worker's namespace, count and events untouched."""

from __future__ import annotations

import time

import pytest

from stateguard.kernel import KernelSession

pytestmark = pytest.mark.kernel


@pytest.fixture(autouse=True)
def _state(session: KernelSession) -> None:
    res = session.execute(
        "import pandas as pd\n"
        "df = pd.DataFrame({'a': [1, 2, 3]})\n"
        "x = 1\n"
        "y = 'why'\n"
        "probe_events = []\n"
        "get_ipython().events.register('post_run_cell', lambda r: probe_events.append(1))\n"
        "get_ipython().events.register('pre_run_cell', lambda i: probe_events.append(0))"
    )
    assert res.ok, res.error


def test_probe_cannot_change_the_namespace(session: KernelSession) -> None:
    events = session.execute("len(probe_events)").result
    count = session.execution_count
    probe = session.run_probe(
        "df.drop(index=0, inplace=True)\nx = 99\ndel y\nprint('rows', len(df))\n(len(df), x)"
    )
    assert probe.status == "ok", probe.error
    # stderr (here a pandas deprecation warning) is captured with stdout.
    assert probe.stdout.endswith("rows 2\n")
    assert probe.result == "(2, 99)"
    assert probe.value == [2, 99]
    assert session.execution_count == count
    after = session.execute("(len(df), x, y, len(probe_events))")
    # The check cell itself fires one pre and one post event.
    assert after.result == f"(3, 1, 'why', {int(events or 0) + 2})"


def test_probe_value_is_none_when_not_json(session: KernelSession) -> None:
    probe = session.run_probe("df")
    assert probe.ok
    assert probe.value is None
    assert probe.result is not None and "a" in probe.result
    assert session.run_probe("df['a'].sum()").value == 6
    assert session.run_probe("float('nan')").value is None
    assert session.run_probe("x = 5").result is None


def test_probe_error_is_a_result(session: KernelSession) -> None:
    probe = session.run_probe("print('before')\nundefined_name + 1")
    assert probe.status == "error"
    assert probe.stdout == "before\n"
    assert probe.error is not None
    assert probe.error.ename == "NameError"
    assert any("undefined_name" in line for line in probe.error.traceback)
    syntax = session.run_probe("def (")
    assert syntax.status == "error"
    assert syntax.error is not None and syntax.error.ename == "SyntaxError"


def test_probe_timeout_kills_only_the_probe(session: KernelSession) -> None:
    started = time.monotonic()
    probe = session.run_probe("while True:\n    pass", timeout=1.0)
    assert time.monotonic() - started < 8
    assert probe.status == "timeout"
    assert probe.error is not None and probe.error.ename == "TimeoutError"
    assert session.execute("x").result == "1"


def test_probe_crash_does_not_kill_the_kernel(session: KernelSession) -> None:
    probe = session.run_probe("import os, signal\nos.kill(os.getpid(), signal.SIGSEGV)")
    assert probe.status == "error"
    assert probe.error is not None and "SIGSEGV" in probe.error.evalue
    assert session.is_alive()
    assert session.execute("x").result == "1"
