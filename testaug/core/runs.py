"""Run outputs: the files a stage writes beside its main output, and the run manifest."""

from __future__ import annotations

import json
import os
import re
import shutil
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path
from stat import S_ISREG
from typing import Any

import yaml

from testaug import __version__
from testaug.core.file_lock import remove_abandoned_lock
from testaug.core.records import RunManifest


def sibling(output: Path, kind: str, suffix: str = ".jsonl") -> Path:
    """A file beside a stage's output: `candidates.jsonl` -> `candidates.<kind>.jsonl`."""
    return output.with_name(f"{output.stem}.{kind}{suffix}")


def new_manifest(command: str, arguments: dict[str, Any], **fields: Any) -> RunManifest:
    """A manifest for one invocation, with a fresh run id (UTC time and a random suffix)."""
    return RunManifest(
        run_id=f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:6]}",
        command=command,
        arguments=arguments,
        package_version=__version__,
        **fields,
    )


def write_manifest(path: Path, manifest: RunManifest) -> None:
    """Write the manifest as indented JSON, atomically."""
    write_text_atomic(path, manifest.model_dump_json(indent=2) + "\n")


def write_json(path: Path, data: Any) -> None:
    """Write data as indented JSON, atomically."""
    write_text_atomic(path, json.dumps(data, indent=1, ensure_ascii=False) + "\n")


def write_text_atomic(path: Path, text: str) -> None:
    """Write a text file whole or not at all: a temporary file renamed over the target."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: Path, data: bytes) -> None:
    """Write a file whole or not at all: a fresh temporary file renamed over the target, so
    a symbolic link at `path` is replaced by the file, never written through."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with tmp.open("xb") as out:
            out.write(data)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


def own_folder(path: Path) -> Path:
    """`path` as a real folder, made if missing: a symbolic link there is removed (not what
    it points to) first, so files written into it stay where they are named."""
    if path.is_symlink():
        path.unlink()
    path.mkdir(parents=True, exist_ok=True)
    return path


# The atomic writers' temporary files: `.NAME.HEX.tmp` beside the file being written.
TEMPORARY = re.compile(r"^\..+\.[0-9a-f]{32}\.tmp$")
STALE_AFTER_SECONDS = 3600.0


def remove_stale_temporaries(
    folder: Path, *, older_than: float = STALE_AFTER_SECONDS, recursive: bool = False
) -> tuple[int, int]:
    """Remove what killed writes leave in `folder` (and below, if `recursive`) once untouched
    for `older_than` seconds: the atomic writers' temporary files, and empty lock files that
    no process holds (`core.file_lock`). (files, bytes) removed. A write in progress keeps
    its temporary file fresh and holds its lock, so it is left alone."""
    if not folder.is_dir():
        return 0, 0
    cutoff = time.time() - older_than
    files = removed = 0
    for pattern in (".*.tmp", ".*.lock"):
        for path in folder.rglob(pattern) if recursive else folder.glob(pattern):
            try:
                stat = path.stat()
                if not (path.is_file() and stat.st_mtime < cutoff):
                    continue
                if pattern == ".*.lock":
                    if not remove_abandoned_lock(path):
                        continue
                elif TEMPORARY.match(path.name):
                    path.unlink()
                else:
                    continue
            except OSError:  # gone meanwhile, or not this user's to remove
                continue
            files += 1
            removed += stat.st_size
    return files, removed


def remove_stale_leftovers(
    output: Path, *, older_than: float = STALE_AFTER_SECONDS
) -> tuple[int, int]:
    """Remove what killed writes of `output` left beside it once untouched for `older_than`
    seconds: temporary files and folders (`.NAME.HEX.tmp`, and `.NAME.HEX.tmp.SUFFIX` a
    writer keeps beside one) and, while `output` exists, an earlier output set aside to be
    replaced (`.NAME.HEX.old`). A folder counts as touched when anything in it was.
    (entries, bytes) removed."""
    own = re.compile(rf"^\.{re.escape(output.name)}\.[0-9a-f]{{32}}\.(tmp(\.\w+)?|old)$")
    if not output.parent.is_dir():
        return 0, 0
    cutoff = time.time() - older_than
    entries = removed = 0
    for path in output.parent.iterdir():
        found = own.match(path.name)
        if found is None or (found.group(1) == "old" and not output.exists()):
            continue
        try:
            if path.is_symlink() or not path.is_dir():
                stat = path.lstat()
                if stat.st_mtime >= cutoff:
                    continue
                path.unlink()
                size = stat.st_size
            else:
                inside = [path, *path.rglob("*")]
                stats = [item.lstat() for item in inside]
                if max(stat.st_mtime for stat in stats) >= cutoff:
                    continue
                shutil.rmtree(path)
                size = sum(stat.st_size for stat in stats if S_ISREG(stat.st_mode))
        except OSError:  # gone meanwhile, or not this user's to remove
            continue
        entries += 1
        removed += size
    return entries, removed


def write_yaml(path: Path, data: object) -> None:
    """Write YAML atomically, keys in the order given."""
    write_text_atomic(path, yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=1000))
