"""Paper 19's rehearsal: what it cuts from the paper block, and fixture files in the real formats of its sources.

The rehearsal keeps every shape of the paper block (the policy's 512 x 10 layers x 16 heads, the environment's
vocabulary and action limits, the corpus filters, the split's cutoff, the RL group of 16) and cuts the budgets:
one optimiser step of pretraining and of RL (each through its validation), one test and one baseline scaffold,
best-of-K up to 4 samples per scaffold (the paper's 32: samples drawn, not a shape), 8 oracle calls per instance
and PMO run, one advantage variant (Dr. GRPO, the paper's), one seed and one PMO oracle. The micro-batches
(pretraining batch, the per-instance and PMO groups) run at a small value and at twice it for the memory
extrapolation. RL's scaffolds per step are not a micro-batch: the policy-gradient step accumulates its gradient
over one scaffold's group of 16 completions at a time (training.GRADIENT_CHUNK = rl.group_size), so the tensors a
step holds are one group's at any number of scaffolds (the no-grad rollout of all of them is a small part at the
paper's 10); the rehearsal runs one scaffold, whose count is the paper-scale step's, in both passes. PMO's group
of 160 is a micro-batch of its rollouts but its update runs in the same chunks of 16: the linear extrapolation
from the rehearsal's groups of 4 and 8 counts all 160 completions' activations at once, an upper bound; the
per-instance baseline's prediction at its group of 16 (one chunk, the paper's) is the update's own peak.

Fixtures (`fixtures`), each read by the paper's own readers (tests/test_amortix_rehearsal.py):
- `amortix/chembl35/chembl_35_chemreps.txt.gz`: ChEMBL's chemical representations file, gzip, tab-separated with
  its header (chembl_id, canonical_smiles, standard_inchi, standard_inchi_key), InChI and key computed by RDKit;
  molecules drawn (seeded) from NCI's first 5K inside the rdkit wheel, one row without a structure as in ChEMBL;
- `amortix/chembl35/checksums.txt`: EBI's list of the release's files, `<sha256>  <name>` per line, with the
  chemreps file's true digest;
- `amortix/tdc/{gsk3b,jnk3}_current.pkl`: a pickled scikit-learn RandomForestClassifier on TDC's featurization
  (Morgan radius 2, 2048 bits), 100 trees, built so that TDC's self-test molecules get TDC's published scores
  (tdc.PUBLISHED) and the conversion job's check passes. The real files are scikit-learn 0.23 pickles that the
  paper-scale job unpickles in envs/tdc_sklearn.yaml; the rehearsal runs in the project's environment, so the
  fixture is pickled by the installed scikit-learn (the same file type, not the same class layout);
- `amortix/zinc250k.csv` (not in the paper-scale DAG, whose corpus is ChEMBL 35: served for `corpus.source:
  zinc250k`): chemical_vae's layout, header smiles,logP,qed,SAS with each SMILES quoted and ending in a newline.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import pickle

import numpy as np

from neurips26.common.rehearsal import Plan

PLAN = Plan(
    budgets={
        # one step each, with its validation (pretraining's NLL over the validation demonstrations, RL's greedy
        # validation before and after the step): every path of the two loops, run twice (doubled pass, then x1)
        "pretrain.steps": 1,
        "pretrain.batch": 4,
        "pretrain.eval_every": 1,
        "rl.steps": 1,
        "rl.batch_scaffolds": 1,  # one group of rl.group_size completions: one gradient chunk, the paper's step peak
        "rl.val_every": 1,
        "rl.val_scaffolds": 1,
        "evaluate.test_scaffolds": 1,
        # best of 1, 2, 4: samples per scaffold; 4 pretrained samples also seed the graph GA's population
        "evaluate.k_values": lambda k_values: k_values[:3],
        "baselines.scaffolds": 1,
        "baselines.graph_ga.budget": 24,
        "baselines.graph_ga.population": 8,
        "baselines.graph_ga.offspring": 8,
        # budget = 2 groups: two Dr. GRPO updates at the rehearsal's group, one at the doubled group
        "baselines.per_instance.budget": 8,
        "baselines.per_instance.group_size": 4,
        "pmo.budget": 8,
        "pmo.group_size": 4,
        "pmo.freq": 8,
    },
    sweeps={
        "rl.variants": lambda variants: ["drgrpo"] if "drgrpo" in variants else variants[:1],
        "rl.seeds": lambda seeds: seeds[:1],
        "pmo.seeds": lambda seeds: seeds[:1],
        # the oracle with the most work per call (several similarities and properties)
        "pmo.oracles": lambda oracles: ["osimertinib_mpo"] if "osimertinib_mpo" in oracles else oracles[:1],
    },
    micro_batch=(  # not rl.batch_scaffolds: see the module docstring
        "pretrain.batch",
        "baselines.per_instance.group_size",
        "pmo.group_size",
    ),
    work={
        # examples through forward and backward; validation NLL passes over the validation decisions are extra
        # (their count is the corpus's, not the block's)
        "amortix_pretrain": lambda cfg, wc: cfg["pretrain"]["steps"] * cfg["pretrain"]["batch"],
        # rollouts with a backward pass, plus greedy validation rollouts (forward only: a third)
        "amortix_rl": lambda cfg, wc: (
            len(wc["seeds"].split("-"))
            * (
                cfg["rl"]["steps"] * cfg["rl"]["batch_scaffolds"] * cfg["rl"]["group_size"]
                + (cfg["rl"]["steps"] // cfg["rl"]["val_every"] + 1) * cfg["rl"]["val_scaffolds"] / 3
            )
        ),
        # a greedy rollout and max(K) samples per test scaffold
        "amortix_sample": lambda cfg, wc: cfg["evaluate"]["test_scaffolds"] * (1 + max(cfg["evaluate"]["k_values"])),
        "amortix_graph_ga": lambda cfg, wc: cfg["baselines"]["scaffolds"] * cfg["baselines"]["graph_ga"]["budget"],
        "amortix_per_instance": lambda cfg, wc: (
            cfg["baselines"]["scaffolds"] * cfg["baselines"]["per_instance"]["budget"]
        ),
        # oracle calls of the three methods (policy sampling, Dr. GRPO fine-tuning, graph GA), one budget each, per seed
        "amortix_pmo": lambda cfg, wc: cfg["pmo"]["budget"] * len(cfg["pmo"]["seeds"]),
        # the summaries read one table per policy and PMO oracle
        **{f"amortix_{step}": lambda cfg, wc: _result_files(cfg) for step in ("tables", "claims", "figures", "report")},
    },
    note=(
        "1 pretraining and 1 RL step (one scaffold's group of 16), 1 test scaffold with best-of-1/2/4, 1 baseline"
        " scaffold, 8-24 oracle calls per baseline and PMO run; Dr. GRPO, seed 0 and the osimertinib MPO oracle only;"
        " every shape the paper's"
    ),
)

# Rules whose cost grows with the data: rule -> (fixture records at size 1, real records). The driver runs them again
# on fixtures(2) and extrapolates with the measured exponent. The split (Butina on the scaffolds' ECFP4) compares
# every pair of scaffolds; the corpus filter and the demonstrations are linear, but the real corpus is 10,000 times
# the fixture's. Real records: ChEMBL 35's 2,496,335 compounds (EBI's ChEMBL 35 release announcement, December
# 2024, also the molecule_dictionary row count of the release; the chemreps file has one row per compound with a
# structure, 2,474,590). The fixture's chemreps file has BASE_MOLECULES x items rows with a SMILES.
BASE_MOLECULES = 200
CHEMBL35_COMPOUNDS = 2_496_335
DATA_GROWTH = {
    rule: (BASE_MOLECULES, CHEMBL35_COMPOUNDS) for rule in ("amortix_corpus", "amortix_split", "amortix_demonstrations")
}
SEED = 19

CHEMREPS = "amortix/chembl35/chembl_35_chemreps.txt.gz"
CHECKSUMS = "amortix/chembl35/checksums.txt"
TDC_PICKLES = {"gsk3b": "amortix/tdc/gsk3b_current.pkl", "jnk3": "amortix/tdc/jnk3_current.pkl"}
ZINC = "amortix/zinc250k.csv"
N_TREES = 100
FOREST_MOLECULES = 100


def _result_files(cfg: dict) -> int:
    """Sampled policies (pretrained and each fine-tuned seed) and PMO oracles: the tables the summaries read."""
    from neurips26.amortix import experiment

    return 1 + len(experiment.policy_names(cfg)) + len(cfg["pmo"]["oracles"])


def _gzip(text: str) -> bytes:
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as handle:  # mtime 0: the same bytes on every build
        handle.write(text.encode())
    return out.getvalue()


def fixture_smiles(n: int, seed: int = SEED) -> list[str]:
    """`n` molecules of NCI's first 5K (inside the rdkit wheel) that RDKit parses, in a seeded order (the list
    repeats when `n` exceeds it, and the corpus job counts repeats as duplicates)."""
    from rdkit import Chem, rdBase

    from neurips26.amortix import corpus

    pool = corpus.read_smiles_file(corpus.rdkit_data_path(*corpus.NCI_FIRST_5K))
    order = np.random.default_rng(seed).permutation(len(pool))
    with rdBase.BlockLogs():
        valid = [pool[i] for i in order[: min(len(pool), 2 * n)] if Chem.MolFromSmiles(pool[i]) is not None]
        if len(valid) < min(n, len(pool)):
            valid = [pool[i] for i in order if Chem.MolFromSmiles(pool[i]) is not None]
    return [valid[i % len(valid)] for i in range(n)]


def chemreps_payload(smiles: list[str]) -> bytes:
    """ChEMBL's chemreps file (gzip, tab-separated, header) for `smiles`: ids CHEMBL<n>, canonical SMILES, InChI
    and InChIKey from RDKit; the third row has no structure, as compounds without one have in ChEMBL."""
    from rdkit import Chem, rdBase

    lines = ["chembl_id\tcanonical_smiles\tstandard_inchi\tstandard_inchi_key"]
    with rdBase.BlockLogs():
        for i, text in enumerate(smiles):
            if i == 2:
                lines.append(f"CHEMBL{1000 + 2 * i - 1}\t\t\t")
            mol = Chem.MolFromSmiles(text)
            inchi = Chem.MolToInchi(mol)
            lines.append(f"CHEMBL{1000 + 2 * i}\t{Chem.MolToSmiles(mol)}\t{inchi}\t{Chem.InchiToInchiKey(inchi)}")
    return _gzip("\n".join(lines) + "\n")


def checksums_payload(files: dict[str, bytes]) -> bytes:
    """EBI's checksums.txt: `<sha256>  <name>` for `files` and the release's other files (digests of their names)."""
    others = ("chembl_35.fa.gz", "chembl_35_sqlite.tar.gz", "chembl_35.sdf.gz", "chembl_35_postgresql.tar.gz")
    digests = {name: hashlib.sha256(name.encode()).hexdigest() for name in others}
    digests |= {name: hashlib.sha256(data).hexdigest() for name, data in files.items()}
    return "".join(f"{digests[name]}  {name}\n" for name in sorted(digests)).encode()


def tdc_forest(target: str, smiles: list[str]):
    """A fitted RandomForestClassifier of N_TREES trees on TDC's fingerprints of `smiles` and the self-test
    molecules that gives each self-test molecule TDC's published score: the self-test molecules are inactive in
    every tree but round(score x N_TREES) trees fitted with that molecule active (leaves are pure: no bootstrap,
    trees grown to purity). Other molecules are active when they carry a nitrogen (gsk3b) or an amide (jnk3)."""
    from rdkit import Chem
    from sklearn.ensemble import RandomForestClassifier

    from neurips26.amortix import tdc

    panel = list(tdc.SELFTEST_SMILES)
    molecules = panel + [s for s in smiles if s not in panel]
    x = tdc.tdc_fingerprints(molecules)
    pattern = Chem.MolFromSmarts("[#7]" if target == "gsk3b" else "[#7][#6]=O")
    labels = np.array([int(Chem.MolFromSmiles(s).HasSubstructMatch(pattern)) for s in molecules])
    labels[: len(panel)] = 0
    published = [0.0 if p is None else p for p in tdc.PUBLISHED[target]]
    votes = [round(p * N_TREES) for p in published]  # trees that call each self-test molecule active
    groups = sorted(set(votes) - {0})
    settings = {"bootstrap": False, "max_features": "sqrt"}
    forest = RandomForestClassifier(n_estimators=N_TREES - max(votes), random_state=0, **settings).fit(x, labels)
    made = len(forest.estimators_)
    for n_votes in groups:  # the trees voting for every self-test molecule with at least n_votes votes
        active = labels.copy()
        active[[i for i, v in enumerate(votes) if v >= n_votes]] = 1
        extra = n_votes - (groups[groups.index(n_votes) - 1] if groups.index(n_votes) else 0)
        more = RandomForestClassifier(n_estimators=extra, random_state=n_votes, **settings).fit(x, active)
        forest.estimators_ += more.estimators_
        made += extra
    forest.n_estimators = made
    return forest


def fixtures(items: int = 1) -> dict[str, bytes]:
    """Registry path -> bytes of every amortix source, with BASE_MOLECULES x `items` molecules in the chemreps file
    (the ZINC250k csv and the forests' training set have FOREST_MOLECULES of them whatever `items`). Deterministic."""
    from rdkit import Chem, rdBase
    from rdkit.Chem import QED, Crippen

    from neurips26.amortix import oracles

    molecules = fixture_smiles(BASE_MOLECULES * items)
    chemreps = chemreps_payload(molecules)
    payloads = {CHEMREPS: chemreps, CHECKSUMS: checksums_payload({CHEMREPS.rpartition("/")[2]: chemreps})}
    base = molecules[:FOREST_MOLECULES]
    with rdBase.BlockLogs():  # RDKit's deprecation notes on TDC's own fingerprint call
        for target, path in TDC_PICKLES.items():
            payloads[path] = pickle.dumps(tdc_forest(target, base), protocol=pickle.HIGHEST_PROTOCOL)
    rows = ["smiles,logP,qed,SAS"]
    with rdBase.BlockLogs():
        for text in base:
            mol = Chem.MolFromSmiles(text)
            rows.append(
                f'"{Chem.MolToSmiles(mol)}\n",{Crippen.MolLogP(mol):.4f},{QED.qed(mol)!r},{oracles.sa_score(mol)!r}'
            )
    payloads[ZINC] = ("\n".join(rows) + "\n").encode()
    return payloads
