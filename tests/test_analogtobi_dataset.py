"""Paper 02's paper-scale dataset layer (library only): git blob hashes, the manifest and its check of a tree, the
circuit-type table, the filtering of netlists into kept circuits and rejects, and the stratified split. No network:
trees are built in tmp_path from the netlist fixtures."""

from __future__ import annotations

import hashlib
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from neurips26.analogtobi.dataset import (
    CircuitTypes,
    ManifestError,
    git_blob_sha1,
    load_types,
    read_dataset,
    read_manifest,
    stratified_split,
    verify_tree,
)
from neurips26.analogtobi.tokens import CIRCUIT_TYPES

ROOT = Path(__file__).resolve().parents[1]
DATA = Path(__file__).parent / "data" / "analogtobi"
MANIFEST = ROOT / "config" / "analogtobi" / "manifest.txt"
TYPES = ROOT / "config" / "analogtobi" / "circuit_types.yaml"
MANIFEST_SHA256 = "d33632125789c64d0dd04f9d92cbbca151ec517372063a6feb4f01165063ac38"

DIGITAL = "MM1 (VOUT1 VCLK1 VSS VSS) nmos4\nMM2 (VOUT1 VIN1 VDD VDD) pmos4\n"
BROKEN = "MM1 (VOUT1 VIN1 VSS VSS) nmos4\nXX1 (VOUT1 VSS) memristor\n"
BASE_ONLY_BJT = "QQ1 (VDD VB1 VOUT1 0) npn\nRR1 (VOUT1 VSS) resistor\n"


# --------------------------------------------------------------------------- blob hashes


def test_blob_sha1_is_git_hash_object():
    assert git_blob_sha1(b"") == "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"  # git's empty blob
    assert git_blob_sha1(b"hello\n") == "ce013625030ba8dba906f756967f9e9ca394464a"  # `echo hello | git hash-object`
    data = (DATA / "ota5t.cir").read_bytes()
    assert git_blob_sha1(data) == hashlib.sha1(b"blob " + str(len(data)).encode() + b"\x00" + data).hexdigest()


@pytest.mark.skipif(shutil.which("git") is None, reason="git not installed")
def test_blob_sha1_agrees_with_git_on_a_fixture():
    path = DATA / "bandgap.cir"
    out = subprocess.run(["git", "hash-object", "--no-filters", str(path)], capture_output=True, text=True, check=True)
    assert git_blob_sha1(path.read_bytes()) == out.stdout.strip()


# --------------------------------------------------------------------------- manifest


def write_tree(root: Path, files: dict[str, str]) -> dict[str, str]:
    """Write `files` (relative path -> text) under root; their manifest."""
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_bytes(text.encode())
    return {rel: git_blob_sha1(text.encode()) for rel, text in files.items()}


def write_manifest(path: Path, manifest: dict[str, str]) -> Path:
    path.write_text("".join(f"{sha} {rel}\n" for rel, sha in sorted(manifest.items())))
    return path


@pytest.fixture
def tree(tmp_path):
    root = tmp_path / "AnalogGenie"
    files = {
        "Dataset/1/1.cir": (DATA / "ota5t.cir").read_text(),
        "Dataset/2/2.cir": (DATA / "bandgap.cir").read_text(),
        "Dataset/3/3.cir": DIGITAL,
        "Dataset/4/4.cir": BROKEN,
        "Dataset/10/10.cir": (DATA / "ota5t.cir").read_text(),  # id 10 has no type in the tiny table
        "Dataset/11/11.cir": BASE_ONLY_BJT,
    }
    manifest = write_tree(root, files)
    write_tree(root, {"Dataset/1/Opamp1.cir": "not a dataset netlist", "Dataset/2/Port2.txt": "VREF1"})
    types = tmp_path / "types.yaml"
    types.write_text("types:\n  Opamp: [[1, 1]]\n  Bandgap_Ref: [[2, 2], [11, 11]]\n  Comparator: [[3, 4]]\n")
    return root, manifest, types


def test_manifest_reads_back_and_refuses_bad_lines(tmp_path, tree):
    _, manifest, _ = tree
    path = write_manifest(tmp_path / "manifest.txt", manifest)
    assert read_manifest(path) == manifest
    for bad, match in [
        ("xyz Dataset/1/1.cir\n", r"manifest\.txt:1: not a '<40-hex blob sha1> <path>' line"),
        (f"{'a' * 40} /etc/passwd\n", r":1: path must be relative"),
        (f"{'a' * 40} Dataset/../x.cir\n", r":1: path must be relative"),
        (f"{'a' * 40} Dataset/1/1.cir\n\n{'b' * 40} Dataset/1/1.cir\n", r":3: Dataset/1/1.cir listed twice"),
        ("# only a comment\n", "no entries"),
    ]:
        path.write_text(bad)
        with pytest.raises(ManifestError, match=match):
            read_manifest(path)


def test_verify_tree_passes_on_a_matching_tree(tree):
    root, manifest, _ = tree
    verify_tree(root, manifest)  # Opamp1.cir and Port2.txt are not dataset netlists: ignored


def test_verify_tree_names_a_mismatch_with_both_hashes(tree):
    root, manifest, _ = tree
    (root / "Dataset/2/2.cir").write_text("changed\n")
    with pytest.raises(ManifestError) as err:
        verify_tree(root, manifest)
    got = git_blob_sha1(b"changed\n")
    assert re.search(
        rf"Dataset/2/2\.cir: hash mismatch: expected blob sha1 {manifest['Dataset/2/2.cir']}, got {got}", str(err.value)
    )
    assert [path for path, _ in err.value.failures] == ["Dataset/2/2.cir"]
    assert str(err.value).startswith("1 file(s) under ")


def test_verify_tree_names_missing_and_extra_files_and_checks_them_all(tree):
    root, manifest, _ = tree
    (root / "Dataset/4/4.cir").unlink()
    (root / "Dataset/1/1.cir").write_text("x")
    write_tree(root, {"Dataset/99/99.cir": "MM1 (VOUT1 VIN1 VSS VSS) nmos4\n"})
    with pytest.raises(ManifestError) as err:
        verify_tree(root, manifest)
    assert [path for path, _ in err.value.failures] == ["Dataset/1/1.cir", "Dataset/4/4.cir", "Dataset/99/99.cir"]
    assert "3 file(s)" in str(err.value) and "Dataset/4/4.cir: missing" in str(err.value)
    assert "Dataset/99/99.cir: not in the manifest" in str(err.value)
    with pytest.raises(ManifestError) as err:
        verify_tree(root, manifest, extra=False)
    assert len(err.value.failures) == 2


def test_a_failure_message_names_the_first_few_and_counts_the_rest(tmp_path):
    manifest = {f"Dataset/{i}/{i}.cir": "0" * 40 for i in range(1, 9)}
    with pytest.raises(ManifestError, match=r"^8 file\(s\) .*Dataset/1/1\.cir: missing.*\(and 3 more\)$"):
        verify_tree(tmp_path, manifest)


# --------------------------------------------------------------------------- circuit types


def test_the_real_manifest_is_the_pinned_listing():
    data = MANIFEST.read_bytes()
    assert hashlib.sha256(data).hexdigest() == MANIFEST_SHA256
    manifest = read_manifest(MANIFEST)
    lines = data.decode().splitlines()
    assert len(lines) == len(manifest) == 3350
    paths = [line.split()[1] for line in lines]
    assert paths == sorted(paths)
    assert all(re.fullmatch(r"Dataset/(\d+)/\1\.cir", p) for p in paths)


def test_the_real_type_table_uses_the_15_token_names_and_the_reference_ranges():
    types = load_types(TYPES)
    assert set(types.names) == set(CIRCUIT_TYPES) and types.default == "General"
    expected = {1: "Opamp", 97: "Opamp", 98: "Mirror", 160: "General", 368: "Bandgap_Ref", 651: "Filter",
                1044: "Switched_Cap", 1045: "Comparator", 1460: "Power_converter", 2180: "Opamp", 2181: "LDO",
                2630: "LDO", 2631: "Switched_Cap", 3502: "Switched_Cap"}  # fmt: skip
    assert {i: types(i) for i in expected} == expected
    counts = pd.Series([types(i) for i in range(1, 3503)]).value_counts()
    assert counts["Opamp"] == 904 and counts["General"] == 155 and counts["LDO"] == 450  # as the reference's function


@pytest.mark.parametrize(
    "text, match",
    [
        ("types:\n  Opamp: [[1, 10]]\n  LDO: [[10, 12]]\n", r"overlap: Opamp \[1, 10\] and LDO \[10, 12\]"),
        ("types:\n  Opamp: [[1, 10], [5, 6]]\n", r"overlap: Opamp \[1, 10\] and Opamp \[5, 6\]"),
        ("types:\n  OpAmp: [[1, 10]]\n", r"types: unknown circuit type 'OpAmp'"),
        ("default: Misc\ntypes:\n  Opamp: [[1, 10]]\n", r"default: unknown circuit type 'Misc'"),
        ("types:\n  Opamp: [[10, 1]]\n", r"type Opamp: bad id range \[10, 1\]"),
        ("types:\n  Opamp: [[1, 2, 3]]\n", r"type Opamp: bad id range"),
        ("types:\n  Opamp: []\n", r"type Opamp: expected a non-empty list"),
        ("typos:\n  Opamp: [[1, 2]]\n", r"expected a mapping with 'types"),
    ],
)
def test_load_types_refuses_bad_tables(tmp_path, text, match):
    path = tmp_path / "types.yaml"
    path.write_text(text)
    with pytest.raises(ValueError, match=match):
        load_types(path)


def test_a_table_without_default_gives_none_outside_its_ranges():
    types = CircuitTypes(((1, 3, "Opamp"), (5, 5, "LDO")))
    assert [types(i) for i in range(7)] == [None, "Opamp", "Opamp", "Opamp", None, "LDO", None]


# --------------------------------------------------------------------------- read_dataset


def test_read_dataset_keeps_typed_circuits_and_says_why_it_drops_the_rest(tree):
    root, manifest, types = tree
    kept, rejects = read_dataset(root, manifest, types)
    assert list(kept.columns) == ["id", "type", "path", "netlist", "n_devices", "n_nets"]
    assert kept[["id", "type", "n_devices", "n_nets"]].values.tolist() == [
        [1, "Opamp", 5, 8],  # VSS VDD VIN1 VIN2 VB1 VOUT + net1, tail
        [2, "Bandgap_Ref", 9, 7],  # VSS VDD VREF1 + e1 e2 g x (the BJTs' substrate net 0 is dropped)
        [11, "Bandgap_Ref", 2, 4],  # VDD VB1 VOUT1 VSS
    ]
    assert kept.loc[0, "netlist"] == (DATA / "ota5t.cir").read_text() and kept.loc[0, "path"] == "Dataset/1/1.cir"
    by_id = rejects.set_index("id")
    assert list(rejects.columns) == ["id", "path", "stage", "reason"]
    assert by_id.loc[3, "stage"] == "digital" and by_id.loc[3, "reason"] == "digital net VCLK1"
    assert by_id.loc[4, "stage"] == "parse" and by_id.loc[4, "reason"].startswith(
        "line 2: unknown device type 'memristor'"
    )
    assert by_id.loc[10, "stage"] == "type" and by_id.loc[10, "reason"] == "id 10 has no circuit type"
    assert sorted(rejects.id) == [3, 4, 10]


def test_read_dataset_accepts_files_and_can_drop_what_the_reference_erc_drops(tmp_path, tree):
    root, manifest, types = tree
    path = write_manifest(tmp_path / "manifest.txt", manifest)
    kept, rejects = read_dataset(root, path, types, reference_bjt_filter=True)
    assert list(kept.id) == [1, 2]  # the bandgap's PNPs have base and collector on one net (B_BC): kept
    row = rejects.set_index("id").loc[11]
    assert row.stage == "reference_erc" and "B_B edge" in row.reason and "NPN1" in row.reason


def test_read_dataset_can_refuse_duplicate_device_names(tree):
    root, manifest, types = tree
    (root / "Dataset/1/1.cir").write_text("MM1 (VOUT1 VIN1 VSS VSS) nmos4\nMM1 (VOUT1 VIN1 VDD VDD) pmos4\n")
    kept, _ = read_dataset(root, manifest, types)
    assert 1 in set(kept.id)
    _, rejects = read_dataset(root, manifest, types, duplicate_names="error")
    assert "duplicate device name MM1" in rejects.set_index("id").loc[1, "reason"]


# --------------------------------------------------------------------------- split


def make_table(sizes: dict[str, int]) -> pd.DataFrame:
    types = [t for t, n in sizes.items() for _ in range(n)]
    return pd.DataFrame({"id": np.arange(1, len(types) + 1) * 3, "type": types})


def test_split_is_stratified_with_at_least_one_test_circuit_per_type():
    table = make_table({"Opamp": 100, "LDO": 31, "Mirror": 9, "PLL": 2, "ADC_DAC": 1})
    split = stratified_split(table, fraction=0.1, seed=1)
    tests = split.eq("test").groupby(table["type"]).sum().to_dict()
    assert tests == {"Opamp": 10, "LDO": 4, "Mirror": 1, "PLL": 1, "ADC_DAC": 0}  # n - floor(0.9 n); 1 of 2
    assert set(split) == {"train", "test"} and split.index.equals(table.index)


def test_split_is_deterministic_and_independent_of_row_order():
    table = make_table({"Opamp": 50, "LDO": 20, "Mirror": 5})
    split = stratified_split(table, seed=7)
    assert split.equals(stratified_split(table, seed=7))
    shuffled = table.sample(frac=1, random_state=0)
    again = stratified_split(shuffled, seed=7)
    assert again.loc[table.index].equals(split)
    assert not stratified_split(table, seed=8).equals(split)
    # a type's split does not depend on the other types present
    only = table[table["type"] == "LDO"]
    assert stratified_split(only, seed=7).equals(split[only.index])


def test_split_refuses_bad_arguments():
    table = make_table({"Opamp": 5})
    with pytest.raises(ValueError, match="fraction"):
        stratified_split(table, fraction=1.0)
    with pytest.raises(ValueError, match="unique"):
        stratified_split(pd.concat([table, table]), fraction=0.1)


def _tarball(root: Path, path: Path) -> Path:
    import tarfile

    with tarfile.open(path, "w:gz") as tar:
        tar.add(root, arcname="AnalogGenie-efc2535")  # GitHub's layout: one <repo>-<commit>/ folder
    return path


def test_read_archive_checks_every_file_then_reads_the_dataset(tmp_path, tree):
    from neurips26.analogtobi.dataset import read_archive

    root, manifest, types = tree
    kept, rejects = read_archive(_tarball(root, tmp_path / "a.tar.gz"), manifest, types)
    assert kept["id"].tolist() == [1, 2, 11] and sorted(rejects["id"]) == [3, 4, 10]
    (root / "Dataset/2/2.cir").write_text("M1 (a b c d) nmos4\n")  # a changed netlist: nothing is read
    with pytest.raises(ManifestError, match=r"Dataset/2/2\.cir"):
        read_archive(_tarball(root, tmp_path / "b.tar.gz"), manifest, types)
