"""Suite loaders: benchmark files in their native formats -> `BenchTask` lists."""

from stateguard.bench.loaders.dseval import (
    load_dseval_session,
    load_dseval_suite,
    resolve_inputs_dir,
    stage_inputs,
)
from stateguard.bench.loaders.infiagent import load_infiagent
from stateguard.bench.loaders.longds import (
    load_longds_suite,
    load_longds_task,
    parse_dependency_comments,
)

__all__ = [
    "load_dseval_session",
    "load_dseval_suite",
    "load_infiagent",
    "load_longds_suite",
    "load_longds_task",
    "parse_dependency_comments",
    "resolve_inputs_dir",
    "stage_inputs",
]
