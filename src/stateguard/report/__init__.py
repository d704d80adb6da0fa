"""The self-contained HTML report of a run directory (``stateguard report RUN_DIR``).

`load_run` reads the run's files into `RunData`; `render_page` turns it into
one HTML document with no external resource; `write_report` does both and
writes ``report.html``.
"""

from stateguard.report.page import REPORT_FILE, render_page, write_report
from stateguard.report.run import RunData, RunMeta, RunTotals, TurnAnswer, TurnView, load_run

__all__ = [
    "REPORT_FILE",
    "RunData",
    "RunMeta",
    "RunTotals",
    "TurnAnswer",
    "TurnView",
    "load_run",
    "render_page",
    "write_report",
]
