# Helpers of paper 19's rules (rules/amortix.smk): paths, input lists, downloads, and the checks of the config that
# the schema cannot express (run when the workflow is parsed, before any job).
from neurips26.common.config import ConfigError
from neurips26.amortix import experiment as ax_experiment

AX = "results/{scale}/amortix"
AX_LOG = "results/{scale}/amortix/logs"
AX_BENCH = "results/{scale}/amortix/benchmarks"
AX_FIGURES = [
    "training_curves",
    "decoration_table",
    "best_of_k",
    "pmo_curves",
    "molecules",
]
# paper-scale corpora: ZINC250k, downloaded by rule `download` (config/sources.yaml), or ChEMBL 35's SMILES read from
# its chemreps file by rule amortix_chembl
AX_SOURCES = {
    "nci_first_5k": [],
    "zinc250k": ["resources/amortix/zinc250k.csv"],
    "chembl35": [f"{AX}/chembl35_smiles.csv"],
}
# the oracle's files by task: the kinase surrogate fitted by rule amortix_oracle, or TDC's GSK3B/JNK3 forests
# converted from their pickles (rules amortix_tdc_convert, amortix_oracle_tdc)
AX_ORACLE = {
    "kinase_surrogate": {
        "model": f"{AX}/oracle.npz",
        "definition": f"{AX}/oracle.json",
        "selftest": f"{AX}/oracle_selftest.parquet",
    },
    "tdc_kinase": {
        "model": f"{AX}/tdc/oracle.npz",
        "definition": f"{AX}/tdc/oracle.json",
        "selftest": f"{AX}/tdc/oracle_selftest.parquet",
    },
}
# the corpus job's requests by source: ChEMBL 35 gives about 2.5M SMILES to filter (about 1 ms each; the rehearsal
# extrapolates 401 min from its fixtures, past the 360 requested before)
AX_CORPUS_MEM_MB = {"chembl35": 16000}
AX_CORPUS_RUNTIME = {"chembl35": 600}
# the split's requests by source: Butina over every unique scaffold is n^2/2 Tanimoto similarities (about 80 ns
# each on one core: an hour for 300,000 scaffolds, the order of ChEMBL 35's after the corpus filters) and keeps the
# pairs within the cutoff (corpus.butina_clusters), never the n x n distances
AX_SPLIT_MEM_MB = {"chembl35": 16000}
AX_SPLIT_RUNTIME = {"chembl35": 360}

for _scale in checked_scales(PAPERS, "amortix"):
    try:
        ax_experiment.check_config(paper_config("amortix", _scale))
    except ValueError as error:
        raise ConfigError(
            f"invalid config in config/amortix.yaml:\n  {_scale}: {error}"
        ) from None


def ax_config(wildcards):
    return paper_config("amortix", wildcards.scale)


def ax_corpus_source(wildcards):
    """The downloaded corpus file (paper scale); none for NCI's molecules inside the rdkit wheel."""
    return [
        path.format(scale=wildcards.scale)
        for path in AX_SOURCES[ax_config(wildcards)["corpus"]["source"]]
    ]


def ax_corpus_mem_mb(wildcards):
    return AX_CORPUS_MEM_MB.get(ax_config(wildcards)["corpus"]["source"], 2000)


def ax_corpus_runtime(wildcards):
    return AX_CORPUS_RUNTIME.get(ax_config(wildcards)["corpus"]["source"], 30)


def ax_split_mem_mb(wildcards):
    return AX_SPLIT_MEM_MB.get(ax_config(wildcards)["corpus"]["source"], 2000)


def ax_split_runtime(wildcards):
    return AX_SPLIT_RUNTIME.get(ax_config(wildcards)["corpus"]["source"], 30)


def ax_oracle(kind):
    """Input function: the oracle's `kind` file (model, definition, selftest) for the configured task."""

    def oracle_file(wildcards):
        return AX_ORACLE[ax_config(wildcards)["task"]][kind].format(
            scale=wildcards.scale
        )

    return oracle_file


@reads("amortix", *(("rl", key) for key in ax_experiment.RL_RUN_KEYS))
def ax_rl_run(wildcards):
    """What one RL run reads of `rl`: not the variants and seeds, which decide which runs exist."""
    return ax_experiment.pick(ax_config(wildcards)["rl"], ax_experiment.RL_RUN_KEYS)


@reads("amortix", *(("rl", key) for key in ax_experiment.RL_REPORT_KEYS))
def ax_rl_report(wildcards):
    """What the report states of the RL runs."""
    return ax_experiment.pick(ax_config(wildcards)["rl"], ax_experiment.RL_REPORT_KEYS)


@reads("amortix", *(("pmo", key) for key in ax_experiment.PMO_RUN_KEYS))
def ax_pmo_run(wildcards):
    """What one PMO-lite job reads of `pmo` (its oracle is a wildcard; top-k and AUC steps are the table's)."""
    return ax_experiment.pick(ax_config(wildcards)["pmo"], ax_experiment.PMO_RUN_KEYS)


@reads("amortix", *(("pmo", key) for key in ax_experiment.PMO_TABLE_KEYS))
def ax_pmo_table(wildcards):
    """What the PMO-lite table reads of `pmo`: budget, top-k and the AUC's sampling frequency."""
    return ax_experiment.pick(ax_config(wildcards)["pmo"], ax_experiment.PMO_TABLE_KEYS)


def ax_policy_names(wildcards):
    """pretrained, then one fine-tuned policy per (advantage variant, seed)."""
    return ["pretrained"] + ax_experiment.policy_names(ax_config(wildcards))


def ax_policy_file(wildcards):
    """pretrained.pt, or the file of the RL job that trains the policy (it holds every seed of its group)."""
    if wildcards.policy == "pretrained":
        return f"{AX}/policies/pretrained.pt".format(scale=wildcards.scale)
    job = ax_experiment.rl_job_of(ax_config(wildcards), wildcards.policy)
    return f"{AX}/policies/{job}.pt".format(scale=wildcards.scale)


def ax_sample_files(wildcards):
    return [
        f"{AX}/samples/{name}.parquet".format(scale=wildcards.scale)
        for name in ax_policy_names(wildcards)
    ]


def ax_rl_logs(wildcards):
    """The RL jobs' log tables: one per seed group of each variant (`rl.seeds_per_job`), a `seed` column inside."""
    return [
        f"{AX}/rl/{job}.parquet".format(scale=wildcards.scale)
        for job in ax_experiment.rl_jobs(ax_config(wildcards))
    ]


def ax_pmo_files(wildcards):
    return [
        f"{AX}/pmo/{oracle}.parquet".format(scale=wildcards.scale)
        for oracle in ax_config(wildcards)["pmo"]["oracles"]
    ]
