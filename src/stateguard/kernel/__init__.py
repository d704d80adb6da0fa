"""A persistent, resource-limited IPython kernel session (jupyter_client + ipykernel).

Public API: `KernelSession`, the `Executor` protocol it implements, `ResourceLimits`,
and the result models
`ExecutionResult`, `ProbeResult`, `ErrorInfo`, `DisplayData`.

The names are imported lazily: the kernel process itself imports modules of this
package (launcher, guard, probes) and must not pay for jupyter_client and pydantic.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stateguard.kernel.executor import Executor
    from stateguard.kernel.limits import ResourceLimits
    from stateguard.kernel.results import DisplayData, ErrorInfo, ExecutionResult, ProbeResult
    from stateguard.kernel.sandbox import Confinement, SandboxPolicy
    from stateguard.kernel.session import KernelSession

_EXPORTS = {
    "Confinement": "stateguard.kernel.sandbox",
    "SandboxPolicy": "stateguard.kernel.sandbox",
    "DisplayData": "stateguard.kernel.results",
    "ErrorInfo": "stateguard.kernel.results",
    "Executor": "stateguard.kernel.executor",
    "ExecutionResult": "stateguard.kernel.results",
    "ProbeResult": "stateguard.kernel.results",
    "ResourceLimits": "stateguard.kernel.limits",
    "KernelSession": "stateguard.kernel.session",
}

__all__ = [
    "Confinement",
    "DisplayData",
    "ErrorInfo",
    "ExecutionResult",
    "Executor",
    "KernelSession",
    "ProbeResult",
    "ResourceLimits",
    "SandboxPolicy",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'stateguard.kernel' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value
