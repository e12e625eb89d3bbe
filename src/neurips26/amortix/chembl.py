"""ChEMBL's chemical representations file (chembl_<release>_chemreps.txt.gz), the paper's pretraining corpus.

The file is tab-separated with a header line: chembl_id, canonical_smiles, standard_inchi, standard_inchi_key.
The paper's code (Hash-hh/GRXForm filter_molecules.py) skips the header and takes column 1, the SMILES; so does
:func:`read_chemreps`, which keeps the ChEMBL id beside it and counts what it could not use. The corpus job then
filters these SMILES exactly as it filters ZINC250k (neurips26.amortix.corpus.prepare_corpus).

EBI publishes a checksums.txt per release: one ``<hex digest><whitespace><file name>`` line per file. Which
algorithm it uses is not documented where we looked (public downloaders treat it as sha256 or as md5), so
:func:`checksum_of` goes by the digest's length.
"""

from __future__ import annotations

import gzip
import hashlib
from pathlib import Path

import pandas as pd

COLUMNS = ("chembl_id", "canonical_smiles", "standard_inchi", "standard_inchi_key")
ALGORITHMS = {32: "md5", 40: "sha1", 64: "sha256"}


def _open(path: Path):
    return gzip.open(path, "rt") if path.suffix == ".gz" else open(path)


def read_chemreps(path) -> tuple[pd.DataFrame, dict[str, int]]:
    """(chembl_id, smiles) of every row with a SMILES, in file order, and counts: rows, no_smiles, kept.
    ValueError when the header does not start with chembl_id and canonical_smiles."""
    path = Path(path)
    with _open(path) as handle:
        header = handle.readline().rstrip("\n").split("\t")
        if header[:2] != list(COLUMNS[:2]):
            raise ValueError(f"{path}: expected a header starting {COLUMNS[:2]}, got {header[:4]}")
        ids, smiles, rows = [], [], 0
        for line in handle:
            fields = line.rstrip("\n").split("\t")
            rows += 1
            text = fields[1].strip() if len(fields) > 1 else ""
            if text:
                ids.append(fields[0])
                smiles.append(text)
    counts = {"rows": rows, "no_smiles": rows - len(smiles), "kept": len(smiles)}
    return pd.DataFrame({"chembl_id": ids, "smiles": smiles}), counts


def checksum_of(checksums_text: str, name: str) -> tuple[str, str] | None:
    """(algorithm, hex digest) listed for file `name` in a checksums.txt, or None when it lists no such file.
    ValueError for a digest whose length names no algorithm."""
    for line in checksums_text.splitlines():
        parts = line.split()
        if len(parts) >= 2 and Path(parts[-1]).name == name:
            digest = parts[0].lower()
            if len(digest) not in ALGORITHMS or any(c not in "0123456789abcdef" for c in digest):
                raise ValueError(f"checksums.txt lists {name} with a digest of no known algorithm: {parts[0]!r}")
            return ALGORITHMS[len(digest)], digest
    return None


def verify_against_checksums(path, checksums_path) -> str:
    """Check `path` against its line in EBI's checksums.txt: a sentence saying what was checked, or ValueError
    naming file, algorithm, expected and actual digest on a mismatch, or when the list does not name the file
    (EBI's list is the only check against the publisher: a file it does not name is not passed on the lock alone)."""
    path = Path(path)
    listed = checksum_of(Path(checksums_path).read_text(), path.name)
    if listed is None:
        raise ValueError(
            f"{path.name} is not listed in {Path(checksums_path).name}: it cannot be checked against EBI's release"
            " (a renamed file or another release's list?)"
        )
    algorithm, expected = listed
    digest = hashlib.new(algorithm)
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != expected:
        raise ValueError(
            f"{path}: {algorithm} {digest.hexdigest()} differs from EBI's checksums.txt ({expected}): the download is"
            " not the release's file"
        )
    return f"{path.name}: {algorithm} {expected} as EBI's checksums.txt lists it"
