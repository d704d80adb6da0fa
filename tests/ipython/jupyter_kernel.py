"""A plain Jupyter kernel (the stock ``python3`` ipykernel) driven over jupyter_client."""

from __future__ import annotations

from typing import Any

from jupyter_client.manager import KernelManager


class Cell:
    """What one executed cell sent back."""

    def __init__(self) -> None:
        self.stdout = ""
        self.stderr = ""
        self.displays: list[dict[str, Any]] = []
        self.status = ""

    def __repr__(self) -> str:
        return f"Cell(status={self.status!r}, stdout={self.stdout!r}, stderr={self.stderr!r})"


class JupyterKernel:
    """Start a stock kernel, run cells as a notebook frontend would."""

    def __init__(self, cwd: str) -> None:
        self.km = KernelManager(kernel_name="python3")
        self.km.start_kernel(cwd=cwd)
        self.kc = self.km.client()
        self.kc.start_channels()
        self.kc.wait_for_ready(timeout=60)

    def run(self, code: str, timeout: float = 60) -> Cell:
        cell = Cell()

        def hook(msg: dict[str, Any]) -> None:
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                if content["name"] == "stdout":
                    cell.stdout += content["text"]
                else:
                    cell.stderr += content["text"]
            elif kind in ("display_data", "execute_result"):
                cell.displays.append(content["data"])
            elif kind == "error":
                cell.stderr += f"{content['ename']}: {content['evalue']}"

        reply = self.kc.execute_interactive(code, timeout=timeout, output_hook=hook)
        cell.status = reply["content"]["status"]
        return cell

    def close(self) -> None:
        self.kc.stop_channels()
        self.km.shutdown_kernel(now=True)
