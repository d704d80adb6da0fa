"""Execution through a shared real kernel: outputs, errors, timeouts, silent mode."""

from __future__ import annotations

import base64

import pytest

from stateguard.kernel import KernelSession

pytestmark = pytest.mark.kernel


def test_namespace_persists_across_executes(session: KernelSession) -> None:
    assert session.execute("persist_value = 41").ok
    res = session.execute("persist_value + 1")
    assert res.status == "ok"
    assert res.result == "42"


def test_stdout_stderr_and_result(session: KernelSession) -> None:
    res = session.execute("import sys\nprint('out line')\nprint('err line', file=sys.stderr)\n6*7")
    assert res.ok
    assert res.stdout == "out line\n"
    assert res.stderr == "err line\n"
    assert res.result == "42"
    assert res.error is None
    assert res.wall_time > 0
    assert res.displays[-1].data == {"text/plain": "42"}


def test_execution_count_follows_cells(session: KernelSession) -> None:
    first = session.execute("1")
    second = session.execute("2")
    assert first.execution_count is not None
    assert second.execution_count == first.execution_count + 1
    assert session.execution_count == second.execution_count


def test_dataframe_gives_html_display(session: KernelSession) -> None:
    res = session.execute("import pandas as pd\npd.DataFrame({'col_a': [1, 2], 'col_b': [3, 4]})")
    assert res.ok
    assert "col_a" in (res.result or "")
    html = res.displays[-1].data["text/html"]
    assert "<table" in html and "col_b" in html


def test_matplotlib_agg_png_display(session: KernelSession) -> None:
    code = (
        "import io, matplotlib\n"
        "matplotlib.use('Agg')\n"
        "import matplotlib.pyplot as plt\n"
        "from IPython.display import Image, display\n"
        "fig, ax = plt.subplots()\n"
        "ax.plot([1, 2, 3])\n"
        "buf = io.BytesIO()\n"
        "fig.savefig(buf, format='png')\n"
        "plt.close(fig)\n"
        "display(Image(buf.getvalue()))\n"
    )
    res = session.execute(code)
    assert res.ok, res.error
    pngs = [d.data["image/png"] for d in res.displays if "image/png" in d.data]
    assert len(pngs) == 1
    assert base64.b64decode(pngs[0]).startswith(b"\x89PNG")


def test_unkept_mime_types_are_dropped(session: KernelSession) -> None:
    res = session.execute(
        "from IPython.display import publish_display_data\n"
        "publish_display_data({'text/plain': 'p', 'application/json': {'a': 1}})"
    )
    assert res.ok
    assert [d.data for d in res.displays] == [{"text/plain": "p"}]


def test_private_mime_goes_to_private(session: KernelSession) -> None:
    res = session.execute(
        "from IPython.display import publish_display_data\n"
        "publish_display_data({'application/vnd.stateguard.lineage+json': {'cell': 3}})\n"
        "publish_display_data({'text/plain': 'visible'})"
    )
    assert res.ok
    assert res.private == [{"mime": "application/vnd.stateguard.lineage+json", "data": {"cell": 3}}]
    assert [d.data for d in res.displays] == [{"text/plain": "visible"}]


def test_runtime_error_is_a_result_with_clean_traceback(session: KernelSession) -> None:
    res = session.execute("def boom():\n    return 1 / 0\nboom()")
    assert res.status == "error"
    assert not res.ok
    assert res.error is not None
    assert res.error.ename == "ZeroDivisionError"
    assert res.error.evalue == "division by zero"
    joined = "\n".join(res.error.traceback)
    assert "boom()" in joined
    assert "\x1b[" not in joined


def test_syntax_error_is_a_result(session: KernelSession) -> None:
    res = session.execute("def broken(:\n    pass")
    assert res.status == "error"
    assert res.error is not None
    assert res.error.ename == "SyntaxError"


def test_error_does_not_abort_the_next_cell(session: KernelSession) -> None:
    assert session.execute("raise ValueError('x')").status == "error"
    assert session.execute("'after'").result == "'after'"


def test_timeout_interrupts_and_kernel_stays_usable(session: KernelSession) -> None:
    session.execute("survivor = 'still here'")
    res = session.execute("print('started', flush=True)\nwhile True:\n    pass", timeout=1.5)
    assert res.status == "timeout"
    assert res.error is not None
    assert res.error.ename == "TimeoutError"
    assert "1.5 s" in res.error.evalue
    assert "started" in res.stdout
    assert res.wall_time < 10
    after = session.execute("survivor")
    assert after.ok
    assert after.result == "'still here'"


def test_silent_execution_keeps_count_and_skips_cell_events(session: KernelSession) -> None:
    session.execute(
        "cell_events = []\n"
        "get_ipython().events.register('post_run_cell', lambda r: cell_events.append(1))"
    )
    before_count = session.execution_count
    before_events = session.execute("len(cell_events)").result
    silent = session.execute("silent_var = 5\nprint('quiet')", silent=True)
    assert silent.ok
    assert silent.stdout == "quiet\n"
    assert silent.execution_count is None
    assert session.execution_count == before_count + 1
    assert session.execute("len(cell_events)").result == str(int(before_events or 0) + 1)
    assert session.execute("silent_var").result == "5"


def test_long_output_is_truncated_in_the_middle(session: KernelSession) -> None:
    res = session.execute("print('H' * 15000 + 'T' * 15000, end='')")
    assert res.ok
    assert res.stdout.startswith("H" * 10_000)
    assert res.stdout.endswith("T" * 10_000)
    assert "...[10000 chars truncated]..." in res.stdout


def test_input_is_an_error_not_a_hang(session: KernelSession) -> None:
    res = session.execute("input('name?')", timeout=20)
    assert res.status == "error"
