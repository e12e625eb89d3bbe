"""Paper 17's config at one scale, read as the rules need it: the datasets, the runs (``{method}_s{seed}`` per
dataset, ``dataset_seeds`` overriding ``seeds`` for a dataset), the models they build, and the checks the schema
cannot express (run when the workflow is parsed).

Methods: ``bgplvm_mf`` (Bayesian GPLVM, free mean-field q(X)), ``aeb_mf`` (mean-field, q(X) amortized by an encoder),
``ssvi_amort`` (the paper's structured ``q(U) prod_n q(x_n | y_n, U)``, amortized: the encoder reads every inducing
point's draw of U, and gradient steps on each point's bound given the draw condition the latents on it), the
ablations run on the datasets ``ablation.datasets`` names: ``ssvi_summary`` (the first version's encoder, one
global summary of U, with the same inner steps given U) and ``ssvi_indep`` (``ssvi_amort`` reading no U, its inner
steps on the bound with q(U) integrated), and ``pca`` (probabilistic PCA, the sanity baseline, fitted once per
dataset: it has no seed).
"""

from __future__ import annotations

__all__ = [
    "ABLATIONS", "GPLVM_METHODS", "METHODS", "PCA", "build_model", "check_config", "data_shape", "methods_of", "runs",
    "seeds_of",
]  # fmt: skip

from .names import ABLATIONS, GPLVM_METHODS, METHODS, PCA


def methods_of(cfg: dict, dataset: str) -> list[str]:
    """The trained methods of one dataset: the compared ones, then the ablations where they are asked for."""
    return cfg["methods"] + (list(ABLATIONS) if dataset in cfg["ablation"]["datasets"] else [])


def seeds_of(cfg: dict, dataset: str) -> list[int]:
    """The seeds of one dataset's runs: ``dataset_seeds[dataset]`` where the config gives it, else ``seeds``."""
    return list((cfg.get("dataset_seeds") or {}).get(dataset, cfg["seeds"]))


def runs(cfg: dict) -> list[tuple[str, str, int]]:
    """Every trained run of a scale: (dataset, method, seed)."""
    return [(d, m, s) for d in cfg["datasets"] for m in methods_of(cfg, d) for s in seeds_of(cfg, d)]


def data_shape(dataset: dict) -> tuple[int, int]:
    """(points, columns) of a dataset block's data: the oil-flow training split's, or the manifold's ``n`` and
    ``dim``."""
    from .data import OIL_SHAPE

    return OIL_SHAPE if dataset["source"] == "oil_flow" else (dataset["n"], dataset["dim"])


def check_config(cfg: dict) -> None:
    """What the schema cannot say: sizes that fit the data, repeated seeds, methods and comparisons that exist; and
    what a job would refuse from these values (the models' sizes, the GPLVMs' latent initialisation, the PCA
    baseline's components, the minibatch), so that a block a job would refuse is refused before any job."""
    from .data import check_sizes
    from .pca import ppca_components

    if len(set(cfg["seeds"])) != len(cfg["seeds"]):
        raise ValueError(f"seeds repeat: {cfg['seeds']}")
    for name, seeds in (cfg.get("dataset_seeds") or {}).items():
        if name not in cfg["datasets"]:
            raise ValueError(f"dataset_seeds names {name!r}, not a dataset: {sorted(cfg['datasets'])}")
        if len(set(seeds)) != len(seeds):
            raise ValueError(f"dataset_seeds.{name} repeat: {seeds}")
    if len(set(cfg["methods"])) != len(cfg["methods"]):
        raise ValueError(f"methods repeat: {cfg['methods']}")
    for name, d in cfg["datasets"].items():
        n, dim = data_shape(d)
        try:
            check_sizes(d["latent_dim"], d["inducing"], n)
        except ValueError as error:
            raise ValueError(f"dataset {name}: {error}") from None
        if d["source"] == "manifold" and d["lift"] == "none" and d["dim"] != 3:
            raise ValueError(f"dataset {name}: lift 'none' keeps the 3-D points, so dim must be 3, got {d['dim']}")
        if d["latent_dim"] > dim:
            # the GPLVMs' latents start at the data's first latent_dim principal components: there are `dim`
            raise ValueError(f"dataset {name}: latent_dim {d['latent_dim']} exceeds the data's {dim} columns")
        if ppca_components(d["latent_dim"], dim) > n:
            raise ValueError(f"dataset {name}: latent_dim {d['latent_dim']} needs more than its {n} points for PCA")
        batch = cfg["train"]["batch"]
        if batch is not None and batch > n:
            raise ValueError(f"train.batch {batch} exceeds dataset {name}'s {n} points")
    unknown = [d for d in cfg["ablation"]["datasets"] if d not in cfg["datasets"]]
    if unknown:
        raise ValueError(f"ablation.datasets {unknown} are not datasets: {sorted(cfg['datasets'])}")
    for ablation in ABLATIONS:
        if ablation in cfg["methods"]:
            raise ValueError(f"{ablation} is an ablation: list its datasets under ablation.datasets, not in methods")
    comp = cfg["comparisons"]
    for key in ("primary", "secondary", "broad"):
        if comp.get(key) is not None and comp[key] not in cfg["datasets"]:
            raise ValueError(f"comparisons.{key} {comp[key]!r} is not a dataset: {sorted(cfg['datasets'])}")
    for key in ("proposed", "free_baseline", "amortized_baseline"):
        if comp[key] not in cfg["methods"]:
            raise ValueError(f"comparisons.{key} {comp[key]!r} is not among the methods {cfg['methods']}")


def build_model(method: str, y, mask, dataset: dict, model: dict, seed: int):
    """The model of a run, its parameters initialised from ``seed`` (latents by PCA of the mean-filled data).
    Imported here, so that parsing the workflow (which reads this module's checks) does not import torch."""
    from .models import InducingGPLVM, MeanFieldGPLVM, SummaryGPLVM

    common = dict(latent_dim=dataset["latent_dim"], inducing=dataset["inducing"], hidden=tuple(model["hidden"]),
                  seed=seed)  # fmt: skip
    if method in ("ssvi_amort", "ssvi_indep"):
        return InducingGPLVM(y, mask, samples=model["samples"], inner_steps=model["inner_steps"],
                             inner_lr=model["inner_lr"], depends_on_u=method == "ssvi_amort", **common)  # fmt: skip
    if method == "ssvi_summary":
        return SummaryGPLVM(y, mask, samples=model["samples"], summary=model["summary"],
                            inner_steps=model["inner_steps"], inner_lr=model["inner_lr"], **common)  # fmt: skip
    if method in ("bgplvm_mf", "aeb_mf"):
        return MeanFieldGPLVM(y, mask, amortized=method == "aeb_mf", **common)
    raise ValueError(f"unknown method {method!r}; known: {list(GPLVM_METHODS)}")
