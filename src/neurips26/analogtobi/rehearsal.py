"""Paper 02's rehearsal: what it cuts from the paper block, and fixture files in the real formats of its source
(GitHub's tarball of AnalogGenie at efc2535: one ``AnalogGenie-<commit>/`` folder with ``Dataset/<id>/<id>.cir``
netlists in AnalogGenie's ``.cir`` format, and the manifest of their git blob SHA-1s that the data job checks).

The fixture's netlists are the generator's circuits (the seven families it builds) written as AnalogGenie writes
them (device names ``MM1``, ``RR2``, ``QQ1``; a fourth, substrate net on every BJT), each at an id of its type's
range in config/analogtobi/circuit_types.yaml, so the real type table types them; a digital netlist (``VCLK``) and a
file that is not a dataset netlist (``Opamp<id>.cir``) sit beside them as in the real tree. The real manifest lists
the real 3,350 files, so the rehearsal's data job reads the fixture's manifest (``data.manifest``, a fixture path).
"""

from __future__ import annotations

import functools
import io
import re
import tarfile
from pathlib import Path

from neurips26.common.rehearsal import Plan

from .dataset import git_blob_sha1

ARCHIVE = "analogtobi/AnalogGenie-efc2535.tar.gz"  # the registry path of the download
TOP = "AnalogGenie-efc25358939c6bedd247f28d3df61066964f3a90"  # GitHub's tarball folder: <repo>-<commit>
MANIFEST_FIXTURE = "fixtures/analogtobi/manifest.txt"
TYPES = Path(__file__).resolve().parents[3] / "config" / "analogtobi" / "circuit_types.yaml"
CIRCUITS = 60  # netlists per items: 2 to 18 per type, so the stratified split puts one of each type in test
WEIGHTS = {"Opamp": 0.30, "LDO": 0.18, "Bandgap_Ref": 0.14, "Mirror": 0.12, "Comparator": 0.10, "Oscillator": 0.09,
           "Mixer": 0.07}  # fmt: skip
DIGITAL = "MM1 (VOUT1 VCLK1 VSS VSS) nmos4\nMM2 (VOUT1 VCLK1 VDD VDD) pmos4\n"  # dropped as digital (VCLK)
VAL_CIRCUITS = 235  # held-out circuits whose walks the training job scores: test_fraction 0.1 of 2,344 parsed


def _rep(wc: dict) -> str:
    """The walk representation of the job's configuration (the random baseline samples bipartite walks)."""
    from .experiment import RANDOM, parse_config_name

    return "bipart" if wc["config"] == RANDOM else parse_config_name(wc["config"])["rep"]


def _decodings(wc: dict) -> list[str]:
    from .experiment import decodings

    return decodings(wc["config"])


def _train_work(cfg: dict, wc: dict) -> float:
    """Tokens through forward and backward (steps x batch x context), plus the validation passes over every
    held-out walk (traversals x VAL_CIRCUITS rows of the context, forward only: a third of a training token) at
    every eval_every-th step and the last."""
    train, context = cfg["train"], cfg["context"][_rep(wc)]
    evaluations = train["steps"] // train["eval_every"] + (train["steps"] % train["eval_every"] != 0)
    validation = evaluations * cfg["walks"]["traversals"] * VAL_CIRCUITS * context / 3
    return train["steps"] * train["batch_size"] * context + validation


PLAN = Plan(
    budgets={
        "walks.traversals": 2,
        "train.steps": 2,
        "train.batch_size": 4,
        "train.warmup": 1,
        "train.eval_every": 2,  # one evaluation, at the last step
        "sample.per_type": 1,
        "sample.batch_size": 4,
        "evaluate.spice_per_type": 1,
        "classifier.iterations": 1,
    },
    sweeps={
        # the longest context's training (device-pin walks, 2,048 tokens; renaming, the type token) and the
        # configuration the main claims read (main.config must stay among the configurations)
        "configs": lambda names: [n for n in names if n in ("devpin-type-rename", "bipart-type-rename")],
        "seeds": lambda seeds: seeds[:1],
    },
    micro_batch=("train.batch_size", "sample.batch_size"),
    shapes={},
    fixture_paths={"data.manifest": MANIFEST_FIXTURE},
    work={
        # random traversals per circuit (the circuits are the data's, the same at both scales)
        "analogtobi_walks": lambda cfg, wc: cfg["walks"]["traversals"],
        # WL refinement rounds (0..iterations) over every circuit; the held-out circuits' ngspice runs, the same
        # at both scales, are not counted, so the ratio is an upper bound
        "analogtobi_reference": lambda cfg, wc: cfg["classifier"]["iterations"] + 1,
        "analogtobi_train": _train_work,
        # tokens generated: per_type walks per type (the types are the data's) for each decoding, each up to the
        # representation's max_len (an upper bound: a walk stops at its end token)
        "analogtobi_sample": lambda cfg, wc: (
            cfg["sample"]["per_type"] * len(_decodings(wc)) * cfg["sample"]["max_len"][_rep(wc)]
        ),
        # per type and decoding: the samples checked (ERC, novelty, 10-grams, type, features) and the ngspice
        # runs on the first spice_per_type valid ones (an upper bound: fewer where fewer are valid), one unit each
        "analogtobi_evaluate": lambda cfg, wc: (
            len(_decodings(wc)) * (cfg["sample"]["per_type"] + cfg["evaluate"]["spice_per_type"])
        ),
        # read the cut budgets as numbers to print: its cost is reading small tables
        "analogtobi_report": lambda cfg, wc: 1,
    },
    note=(
        "2 traversals per circuit, 2 steps of micro-batch 4 (warm-up 1, one evaluation at the end), one sample per"
        " circuit type at micro-batch 4, one ngspice run per type, one classifier iteration, seed 0 of the devpin and"
        " bipartite renamed configurations; the model (6 x 384, 6 heads), contexts (1,024 and 2,048), sample"
        " lengths, vocabulary and classifier features are the paper's"
    ),
)
DATA_GROWTH: dict[str, int] = {}  # the data job checks and parses each netlist once: linear in the files


def _first_ids() -> dict[str, list[int]]:
    """Circuit type -> its ids in the real type table, in order."""
    import yaml

    table = yaml.safe_load(TYPES.read_text())["types"]
    return {name: [i for first, last in ranges for i in range(first, last + 1)] for name, ranges in table.items()}


def analoggenie_style(text: str) -> str:
    """A generator netlist as AnalogGenie writes its files: the device letter doubled (``M1`` -> ``MM1``) and a
    substrate net ``0`` on every BJT."""
    lines = []
    for line in text.splitlines():
        match = re.match(r"^(\S+)\s*\((.*?)\)\s*(\S+)\s*$", line)
        if not match:
            lines.append(line)
            continue
        name, nets, kind = match.groups()
        if kind in ("npn", "pnp") and len(nets.split()) == 3:
            nets += " 0"
        lines.append(f"{name[0]}{name} ({nets}) {kind}")
    return "\n".join(lines) + "\n"


def dataset_files(items: int = 1, seed: int = 0) -> dict[str, bytes]:
    """Path in the repository (``Dataset/<id>/<id>.cir`` and the non-dataset neighbours) -> bytes."""
    return dict(_dataset_files(items, seed))


@functools.lru_cache(maxsize=2)  # the tarball and the manifest are made of the same files
def _dataset_files(items: int, seed: int) -> dict[str, bytes]:
    from .generate import generate

    ids = _first_ids()
    used: dict[str, int] = {}
    files: dict[str, bytes] = {}
    for family, text, _ in generate(CIRCUITS * items, WEIGHTS, seed):
        ident = ids[family][used.get(family, 0)]
        used[family] = used.get(family, 0) + 1
        files[f"Dataset/{ident}/{ident}.cir"] = analoggenie_style(text).encode()
    digital = ids["PLL"][0]
    files[f"Dataset/{digital}/{digital}.cir"] = DIGITAL.encode()
    opamp = ids["Opamp"][0]
    files[f"Dataset/{opamp}/Opamp{opamp}.cir"] = files[f"Dataset/{opamp}/{opamp}.cir"]  # not a dataset netlist
    files["Dataset/data_categorization.md"] = b"# Data categorization\n\nOp-amp: 1-97 ...\n"
    return files


def manifest(files: dict[str, bytes]) -> bytes:
    """The manifest of a tree: ``<blob sha1> <path>`` per dataset netlist (``<id>.cir``), sorted by path."""
    rows = sorted((path, git_blob_sha1(payload)) for path, payload in files.items() if re.search(r"/\d+\.cir$", path))
    return "".join(f"{sha} {path}\n" for path, sha in rows).encode()


def tarball(files: dict[str, bytes]) -> bytes:
    """GitHub's tar.gz of the repository: every file under one ``<repo>-<commit>/`` folder (fixed times)."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz", format=tarfile.PAX_FORMAT) as tar:
        for path, payload in sorted(files.items()):
            info = tarfile.TarInfo(f"{TOP}/{path}")
            info.size, info.mtime, info.mode = len(payload), 1_700_000_000, 0o644
            tar.addfile(info, io.BytesIO(payload))
    # gzip writes the time into its header: zero it so the same files give the same bytes
    data = bytearray(buffer.getvalue())
    data[4:8] = b"\0\0\0\0"
    return bytes(data)


def fixtures(items: int = 1) -> dict[str, bytes]:
    """Registry path -> bytes: the AnalogGenie tarball."""
    return {ARCHIVE: tarball(dataset_files(items))}


def local_files() -> dict[str, bytes]:
    """The manifest of the fixture tarball's netlists, at the rehearsal's `data.manifest`."""
    return {MANIFEST_FIXTURE: manifest(dataset_files(1))}
