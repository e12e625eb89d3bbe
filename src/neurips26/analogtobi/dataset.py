r"""The paper-scale data of AnalogToBi (Kim et al. 2026, arXiv 2603.08720): the AnalogGenie netlist dataset (Gao et
al., ICLR 2025), ``Dataset/<id>/<id>.cir``, checked file by file, typed by id range, filtered and split.

Source. github.com/xz-group/AnalogGenie at commit efc25358939c6bedd247f28d3df61066964f3a90 (MIT licence file at
the repository root; the netlists are transcriptions of circuits from textbooks and papers, see its
``Dataset/data_categorization.md``). The AnalogToBi reference, github.com/Seungmin0825/AnalogToBi at a2ebb63a, holds
the same ``Dataset`` tree (git tree 1165c61c). Paper scale downloads the GitHub tarball of that commit, whose bytes
GitHub does not promise to keep stable, so the content is verified instead, per file, by **git blob SHA-1**
(:func:`git_blob_sha1`, what ``git hash-object`` prints).

``config/analogtobi/manifest.txt`` lists the 3,350 netlists, one ``<blob sha1> <path>`` line each, paths relative
to the repository root and sorted as text; no header. It is the output of::

    git ls-tree -r efc25358939c6bedd247f28d3df61066964f3a90 Dataset \
        | awk '$4 ~ /\/[0-9]+\.cir$/{print $3, $4}' | sort -k2

and its sha256 is d33632125789c64d0dd04f9d92cbbca151ec517372063a6feb4f01165063ac38. Other ``.cir`` files of the
tree (``Opamp<id>.cir``, ``<id>_full.cir``) are not part of the dataset and are ignored.

``config/analogtobi/circuit_types.yaml`` gives the circuit type of each id by inclusive id range, transcribed from
``get_circuit_category`` in the reference's ``PREPROCESSING_Add_Circuit_Types.py`` (a2ebb63a); ``default`` is its
``else`` branch (General). Names are those of :data:`neurips26.analogtobi.tokens.CIRCUIT_TYPES`.

Filtering (:func:`read_dataset`), in the reference's order (``PREPROCESSING_Bipartite.py``): digital circuits are
dropped (:func:`neurips26.analogtobi.netlist.digital_reason`), then refused netlists
(:class:`~neurips26.analogtobi.netlist.NetlistError`), then ids without a type; each drop is a row with its stage
and reason. On the 3,350 netlists this keeps 2,344 (1,002 digital, 4 refused). The paper's 2,165 are these minus
the 179 circuits with a BJT whose base is alone on its net (edge ``B_B``): the reference's ``ERC.py``, run on every
walk in ``PREPROCESSING_Augmentation_Bipart.py``, lists ``'M_B'`` where ``'B_B'`` belongs in ``BJT_EDGES`` (its
``GPT_Pretrain.py`` vocabulary has ``B_B``), so every walk of such a circuit fails its tests 1 and 2 and the
circuit is dropped. ``reference_bjt_filter=True`` reproduces that drop (stage ``reference_erc``) to match the
paper's set; by default those circuits are kept, since they are valid.

Split (:func:`stratified_split`): per type, a seeded shuffle of the circuits, ``floor((1 - fraction) n)`` to train
and the rest to test, as the reference's ``PREPROCESSING_Stratified_Split.py`` does, except that the reference
splits augmented walks (so walks of one circuit land on both sides) and we split circuits.
"""

from __future__ import annotations

import bisect
import hashlib
import math
import re
import zlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

import numpy as np
import pandas as pd
import yaml

from neurips26.analogtobi.netlist import NetlistError, digital_reason, parse
from neurips26.analogtobi.tokens import CIRCUIT_TYPES

__all__ = [
    "CircuitTypes",
    "ManifestError",
    "circuit_id",
    "git_blob_sha1",
    "load_types",
    "read_dataset",
    "read_manifest",
    "stratified_split",
    "verify_tree",
]

_SHA1 = re.compile(r"^[0-9a-f]{40}$")
_NETLIST = re.compile(r"^(\d+)\.cir$")  # a dataset netlist's file name: <id>.cir
STAGES = ("digital", "parse", "reference_erc", "type")
KEPT_COLUMNS = ["id", "type", "path", "netlist", "n_devices", "n_nets"]
REJECT_COLUMNS = ["id", "path", "stage", "reason"]
SHOWN = 5  # failures named in a ManifestError's message


class ManifestError(ValueError):
    """The tree does not match the manifest (or the manifest is malformed). ``failures`` lists every ``(path,
    reason)``; the message counts them and names the first few."""

    def __init__(self, message: str, failures: list[tuple[str, str]] | None = None):
        self.failures = failures or []
        super().__init__(message)


def git_blob_sha1(data: bytes) -> str:
    """The git object id of a blob with content `data`: sha1 of ``b"blob <len>\\0" + data`` (``git hash-object``)."""
    return hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()


def circuit_id(path: str) -> int:
    """The id of a dataset netlist path (``Dataset/17/17.cir`` -> 17); ValueError if the name is not ``<id>.cir``."""
    match = _NETLIST.match(PurePosixPath(path).name)
    if not match:
        raise ValueError(f"{path}: not a dataset netlist name '<id>.cir'")
    return int(match.group(1))


def read_manifest(path: str | Path) -> dict[str, str]:
    """``{relative path: blob sha1}`` from a manifest of ``<blob sha1> <path>`` lines (blank lines and ``#``
    comments skipped). :class:`ManifestError` naming the line on a malformed line, a path that is absolute or climbs
    out (``..``), or a path listed twice."""
    out: dict[str, str] = {}
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split(maxsplit=1)
        if len(parts) != 2 or not _SHA1.match(parts[0]):
            raise ManifestError(f"{path}:{number}: not a '<40-hex blob sha1> <path>' line: {line!r}")
        sha, rel = parts[0], parts[1].strip()
        pure = PurePosixPath(rel)
        if pure.is_absolute() or ".." in pure.parts or "\\" in rel:
            raise ManifestError(f"{path}:{number}: path must be relative and inside the tree: {rel!r}")
        if rel in out:
            raise ManifestError(f"{path}:{number}: {rel} listed twice")
        out[rel] = sha
    if not out:
        raise ManifestError(f"{path}: no entries")
    return out


def verify_tree(root: str | Path, manifest: Mapping[str, str], extra: bool = True) -> None:
    """Check every file of `manifest` under `root` by git blob SHA-1. With `extra`, a dataset netlist (a file named
    ``<id>.cir``) under `root` that the manifest does not list is a failure too. Every file is checked; on any
    failure :class:`ManifestError` says how many failed and names the first few (path and reason: missing, or hash
    mismatch with expected and actual blob sha1, or not in the manifest)."""
    root = Path(root)
    failures: list[tuple[str, str]] = []
    for rel in sorted(manifest):
        file = root / rel
        if not file.is_file():
            failures.append((rel, "missing"))
            continue
        got = git_blob_sha1(file.read_bytes())
        if got != manifest[rel]:
            failures.append((rel, f"hash mismatch: expected blob sha1 {manifest[rel]}, got {got}"))
    if extra and root.is_dir():
        listed = set(manifest)
        for file in sorted(root.rglob("*.cir")):
            rel = file.relative_to(root).as_posix()
            if _NETLIST.match(file.name) and rel not in listed:
                failures.append((rel, "not in the manifest"))
    if failures:
        shown = "; ".join(f"{rel}: {reason}" for rel, reason in failures[:SHOWN])
        more = f" (and {len(failures) - SHOWN} more)" if len(failures) > SHOWN else ""
        raise ManifestError(
            f"{len(failures)} file(s) under {root} do not match the manifest of {len(manifest)}: {shown}{more}",
            failures,
        )


@dataclass(frozen=True)
class CircuitTypes:
    """Circuit type by inclusive id range; `default` (or None) for ids in no range. Call it with an id."""

    ranges: tuple[tuple[int, int, str], ...]  # (first, last, type), sorted, disjoint
    default: str | None = None

    def __call__(self, ident: int) -> str | None:
        i = bisect.bisect_right(self.ranges, (ident, math.inf)) - 1
        if i >= 0 and self.ranges[i][0] <= ident <= self.ranges[i][1]:
            return self.ranges[i][2]
        return self.default

    @property
    def names(self) -> list[str]:
        """The type names it can return, in CIRCUIT_TYPES order."""
        used = {name for *_, name in self.ranges} | ({self.default} if self.default else set())
        return [t for t in CIRCUIT_TYPES if t in used]


def load_types(path: str | Path) -> CircuitTypes:
    """The :class:`CircuitTypes` of a YAML file ``{default: <type or null>, types: {<type>: [[first, last], ...]}}``.
    ValueError naming the file and the entry on an unknown type name (not in tokens.CIRCUIT_TYPES), a range that is
    not two integers ``1 <= first <= last``, or two overlapping ranges (both named)."""
    data = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("types"), dict):
        raise ValueError(f"{path}: expected a mapping with 'types: {{<type>: [[first, last], ...]}}'")
    unknown_keys = set(data) - {"types", "default"}
    if unknown_keys:
        raise ValueError(f"{path}: unknown key(s) {sorted(unknown_keys)}; expected 'types' and 'default'")

    def known(name: object, where: str) -> str:
        if name not in CIRCUIT_TYPES:
            raise ValueError(f"{path}: {where}: unknown circuit type {name!r}; known: {list(CIRCUIT_TYPES)}")
        return str(name)

    default = data.get("default")
    if default is not None:
        default = known(default, "default")
    ranges: list[tuple[int, int, str]] = []
    for name, spans in data["types"].items():
        name = known(name, "types")
        if not isinstance(spans, list) or not spans:
            raise ValueError(f"{path}: type {name}: expected a non-empty list of [first, last] id ranges")
        for span in spans:
            ok = (
                isinstance(span, list)
                and len(span) == 2
                and all(isinstance(x, int) and not isinstance(x, bool) for x in span)
                and 1 <= span[0] <= span[1]
            )
            if not ok:
                raise ValueError(
                    f"{path}: type {name}: bad id range {span!r}; expected [first, last], 1 <= first <= last"
                )
            ranges.append((span[0], span[1], name))
    ranges.sort()
    for (a1, b1, t1), (a2, b2, t2) in zip(ranges, ranges[1:]):
        if a2 <= b1:
            raise ValueError(f"{path}: id ranges overlap: {t1} [{a1}, {b1}] and {t2} [{a2}, {b2}]")
    return CircuitTypes(tuple(ranges), default)


def read_dataset(
    root: str | Path,
    manifest: Mapping[str, str] | str | Path,
    types: Callable[[int], str | None] | str | Path,
    duplicate_names: str = "renumber",
    reference_bjt_filter: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Read every netlist of `manifest` (a mapping or a manifest file) under `root`, in id order, and sort it into
    kept circuits and rejects. Stages, in order: ``digital`` (:func:`digital_reason`: dropped, with its reason),
    ``parse`` (:class:`NetlistError` from :func:`parse`, reason ``line N: ...``; also a file that is not UTF-8),
    with `reference_bjt_filter` ``reference_erc`` (a ``B_B`` edge, which the reference's ERC wrongly refuses; module
    docstring), ``type`` (`types`, a :class:`CircuitTypes`, a callable or a types file, gives no type for the id).

    Returns (kept, rejects): kept has columns id, type, path (relative, as in the manifest), netlist (the text),
    n_devices, n_nets; rejects has id, path, stage, reason. The files are read, not verified: call
    :func:`verify_tree` first."""
    root = Path(root)
    if not isinstance(manifest, Mapping):
        manifest = read_manifest(manifest)
    if not callable(types):
        types = load_types(types)
    kept, rejects = [], []
    for ident, rel in sorted((circuit_id(rel), rel) for rel in manifest):
        try:
            text = (root / rel).read_bytes().decode("utf-8")
        except UnicodeDecodeError as exc:
            rejects.append((ident, rel, "parse", f"not UTF-8 text: {exc}"))
            continue
        reason = digital_reason(text)
        if reason:
            rejects.append((ident, rel, "digital", reason))
            continue
        try:
            circuit = parse(text, rel, duplicate_names=duplicate_names)
        except NetlistError as exc:
            rejects.append((ident, rel, "parse", f"line {exc.line}: {exc.reason}" if exc.line else exc.reason))
            continue
        if reference_bjt_filter:
            base_only = sorted({device for device, _, label in circuit.edges() if label == "B_B"})
            if base_only:
                reason = (
                    f"BJT base alone on its net (B_B edge) of {', '.join(base_only)}: refused by the reference's ERC"
                )
                rejects.append((ident, rel, "reference_erc", reason))
                continue
        kind = types(ident)
        if kind is None:
            rejects.append((ident, rel, "type", f"id {ident} has no circuit type"))
            continue
        kept.append((ident, kind, rel, text, len(circuit.devices), len(circuit.nets)))
    kept_df = pd.DataFrame(kept, columns=KEPT_COLUMNS).astype({"id": "int64", "n_devices": "int64", "n_nets": "int64"})
    reject_df = pd.DataFrame(rejects, columns=REJECT_COLUMNS).astype({"id": "int64"})
    return kept_df, reject_df


def stratified_split(
    table: pd.DataFrame, fraction: float = 0.1, seed: int = 0, by: str = "type", key: str = "id"
) -> pd.Series:
    """``"train"`` / ``"test"`` per row of `table` (a Series on its index), stratified by column `by`: within each
    group, rows in order of `key` are shuffled by a generator seeded with (seed, crc32 of the group name), the first
    ``floor((1 - fraction) n)`` go to train and the rest to test; a group of n >= 2 always has at least one test
    and one train row, a group of one is train. Deterministic: the result depends on the rows' keys and groups, not
    on their order in `table` or on the other groups."""
    if not 0 < fraction < 1:
        raise ValueError(f"fraction must be in (0, 1), got {fraction!r}")
    if table[key].duplicated().any():
        raise ValueError(f"column {key!r} must be unique to split by it")
    out = pd.Series("train", index=table.index, dtype=object, name="split")
    for group, rows in table.groupby(by, sort=True):
        n = len(rows)
        if n < 2:
            continue
        order = rows.sort_values(key).index.to_numpy()
        rng = np.random.default_rng([seed, zlib.crc32(str(group).encode())])
        order = order[rng.permutation(n)]
        n_train = min(max(math.floor((1 - fraction) * n + 1e-9), 1), n - 1)
        out.loc[order[n_train:]] = "test"
    return out


def generated_dataset(
    n_circuits: int, weights: Mapping[str, float], seed: int, max_devices: int | None = None
) -> pd.DataFrame:
    """The generator's circuits (:func:`.generate.generate`) as a table with the columns of :func:`read_dataset`'s
    kept circuits (id from 1 in order of generation, type = family, path ``generated/<family>/<draw>``)."""
    from .generate import generate

    rows = [
        (i, family, circuit.source, text, len(circuit.devices), len(circuit.nets))
        for i, (family, text, circuit) in enumerate(
            generate(n_circuits, dict(weights), seed, max_devices=max_devices), start=1
        )
    ]
    if len(rows) < n_circuits:
        raise ValueError(
            f"the generator found only {len(rows)} distinct circuits of the {n_circuits} asked for (seed {seed}, "
            f"max_devices {max_devices}): lower data.n_circuits or raise data.max_devices"
        )
    return pd.DataFrame(rows, columns=KEPT_COLUMNS).astype({"id": "int64", "n_devices": "int64", "n_nets": "int64"})


def read_archive(
    archive: str | Path,
    manifest: Mapping[str, str] | str | Path,
    types: Callable[[int], str | None] | str | Path,
    reference_bjt_filter: bool = False,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """:func:`read_dataset` on GitHub's tarball of the repository (one top folder, ``<repo>-<commit>/``), after
    :func:`verify_tree` checked every manifest file in it (:class:`ManifestError` names the first offenders)."""
    import tarfile
    import tempfile

    if not isinstance(manifest, Mapping):
        manifest = read_manifest(manifest)
    with tempfile.TemporaryDirectory() as tmp:
        with tarfile.open(archive) as tar:
            tar.extractall(tmp, filter="data")
        tops = [d for d in Path(tmp).iterdir() if d.is_dir()]
        if len(tops) != 1:
            raise ManifestError(f"{archive}: expected one top folder (<repo>-<commit>/), found {len(tops)}")
        verify_tree(tops[0], manifest)
        return read_dataset(tops[0], manifest, types, reference_bjt_filter=reference_bjt_filter)
