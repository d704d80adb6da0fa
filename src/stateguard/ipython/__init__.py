"""The IPython/Jupyter extension (``%load_ext stateguard``), built on `GuardedSession`."""

from stateguard.ipython.executor import ShellExecutor
from stateguard.ipython.extension import (
    StaleWatch,
    load_ipython_extension,
    unload_ipython_extension,
)

__all__ = ["ShellExecutor", "StaleWatch", "load_ipython_extension", "unload_ipython_extension"]
