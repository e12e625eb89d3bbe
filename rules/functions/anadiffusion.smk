# Helpers of paper 03's rules (rules/anadiffusion.smk): paths, input lists, and the checks of the config that the
# schema cannot express (run when the workflow is parsed, before any job).
from neurips26.anadiffusion import experiment as anadiffusion_experiment
from neurips26.anadiffusion.summary import TABLES as AD_TABLES
from snakemake.io import strip_wildcard_constraints

AD = "results/{scale}/anadiffusion"
AD_LOG = "results/{scale}/anadiffusion/logs"
AD_BENCH = "results/{scale}/anadiffusion/benchmarks"
AD_EVALUATION = [
    "fd",
    "volumes",
    "cohen_d",
    "edit",
    "memorization",
    "assets",
    "conditioning",
]
AD_FIGURES = ["slices", "assets", "edit", "regional_fd"]
AD_TABLE_INPUTS = ["fd", "cohen_d", "edit", "memorization", "conditioning"]
AD_CLAIMS_INPUTS = ["fd", "cohen_d", "edit", "memorization", "assets", "conditioning"]
AD_GRID_KEYS = (
    "voxel_mm",
    "shape",
    "support_margin_mm",
    "seam_mm",
    "ventricle_margin_mm",
)
AD_MEDICALNET = "resources/anadiffusion/resnet_10_23dataset.pth"

for _scale in checked_scales(PAPERS, "anadiffusion"):
    try:
        anadiffusion_experiment.check_config(paper_config("anadiffusion", _scale))
    except ValueError as error:
        raise ConfigError(
            f"invalid config in config/anadiffusion.yaml:\n  {_scale}: {error}"
        ) from None


def ad_config(wildcards):
    return paper_config("anadiffusion", wildcards.scale)


@reads("anadiffusion", *(("data", key) for key in AD_GRID_KEYS))
def ad_grid(wildcards):
    """The template's grid: what the template job reads of the data block."""
    data = ad_config(wildcards)["data"]
    return {key: data[key] for key in AD_GRID_KEYS}


@reads("anadiffusion", ("autoencoder", "size"), ("denoiser", "size"))
def ad_support_multiple(wildcards):
    """The side multiple of the grid and the part supports that the configured networks need (the autoencoder's
    factor times the U-Net's 2^(levels - 1): 4 at smoke and quick, 16 at paper scale).
    """
    return anadiffusion_experiment.support_multiple(ad_config(wildcards))


@reads("anadiffusion", ("data", "train"), ("data", "eval"), ("data", "seed"))
def ad_cohort(wildcards):
    """The synthetic cohort's sizes and seed (quick, smoke); a stop naming the scale where the data are ADNI."""
    data = ad_config(wildcards)["data"]
    if data["source"] != "synthbrain":
        raise ValueError(
            f"anadiffusion at scale {wildcards.scale} reads ADNI (rule anadiffusion_adni), not the synthetic cohort"
        )
    return {key: data[key] for key in ("train", "eval", "seed")}


def ad_adni_value(key):
    """A params function of the ADNI rule: data.`key` (adni_root, adni_manifest). Unset, a real run stops while
    the DAG is built, before any job, with the library's explanation of how to obtain ADNI; a dry run and the plan
    job's DAG (built without an executor) go on, and the job itself would refuse the missing folder with the same
    explanation.
    """

    @reads("anadiffusion", ("data", key))
    def value(wildcards):
        from neurips26.anadiffusion.adni import ADNI_ACCESS

        data = ad_config(wildcards)["data"]
        if data["source"] != "adni":
            raise ValueError(
                f"anadiffusion at scale {wildcards.scale} uses the synthetic cohort, not ADNI"
            )
        # a run that will execute jobs; a dry run and a DAG built without an executor (the plan job's) go on
        running = workflow.executor_plugin is not None and not workflow.dryrun
        if not data.get(key) and running:
            raise ConfigError(
                f"config/anadiffusion.yaml: {wildcards.scale}.data.{key} is not set. {ADNI_ACCESS}"
            )
        return data.get(key)

    return value


def ad_denoiser_names(wildcards):
    return anadiffusion_experiment.denoisers(ad_config(wildcards))


@reads("anadiffusion", ("denoiser", "part_model"), ("methods",), ("injections",))
def ad_denoiser_params(wildcards):
    return ad_denoiser_names(wildcards)


def ad_denoiser_files(wildcards):
    return [
        f"{AD}/models/{name}.pt".format(scale=wildcards.scale)
        for name in ad_denoiser_names(wildcards)
    ]


def ad_denoiser_inputs(wildcards):
    """The training latents of the {denoiser} job, which must name a denoiser of the config's part layouts (or
    seg_cldm, where the scale runs the baseline: then also the training split, for its subjects' label maps).
    """
    names = ad_denoiser_names(wildcards) + (
        [anadiffusion_experiment.SEG_CLDM] if ad_seg_cldm(wildcards) else []
    )
    if wildcards.denoiser not in names:
        raise ValueError(
            f"anadiffusion at scale {wildcards.scale} trains the denoisers {names}, not {wildcards.denoiser!r}"
        )
    inputs = {"latents": f"{AD}/latents/train.npz".format(scale=wildcards.scale)}
    if wildcards.denoiser == anadiffusion_experiment.SEG_CLDM:
        inputs["train"] = f"{AD}/data/train.npz".format(scale=wildcards.scale)
    return inputs


@reads("anadiffusion", ("methods",), ("injections",))
def ad_injections(wildcards):
    """The named injections the sampling job generates (each method that is not a baseline)."""
    cfg = ad_config(wildcards)
    return {
        name: cfg["injections"][name]
        for name in anadiffusion_experiment.injections(cfg)
    }


@reads("anadiffusion", ("edit", "methods"), ("injections",))
def ad_edit_injections(wildcards):
    """The injections the edit job refines with (its methods other than the baselines paste and ae_roundtrip)."""
    cfg = ad_config(wildcards)
    return {
        m: cfg["injections"][m]
        for m in cfg["edit"]["methods"]
        if m not in anadiffusion_experiment.BASELINES
    }


def ad_feature_weights(wildcards):
    """MedicalNet's weights (download rule) where the evaluation uses MedicalNet; nothing for the rand3d proxy."""
    if ad_config(wildcards)["evaluate"]["features"].startswith("medicalnet"):
        return {"weights": AD_MEDICALNET}
    return {}


def ad_data_rule_scale():
    """Scales whose data come from the synthetic cohort, and those from ADNI (wildcard constraints)."""
    synthetic = [
        s
        for s in checked_scales(PAPERS, "anadiffusion")
        if PAPERS["anadiffusion"][s]["data"]["source"] == "synthbrain"
    ]
    return "|".join(synthetic), "|".join(
        s for s in checked_scales(PAPERS, "anadiffusion") if s not in synthetic
    )


AD_SYNTHETIC_SCALES, AD_ADNI_SCALES = ad_data_rule_scale()


@reads("anadiffusion", ("seg_cldm",))
def ad_seg_cldm(wildcards):
    """Whether the scale runs the Seg. cLDM baseline (train_denoiser {seg_cldm}, seg_cldm)."""
    return anadiffusion_experiment.seg_cldm(ad_config(wildcards))


def ad_seg_cldm_samples(wildcards):
    """The Seg. cLDM's samples and edits for the evaluation, where the scale runs it; nothing otherwise."""
    if ad_seg_cldm(wildcards):
        return {"seg_cldm": f"{AD}/samples/seg_cldm.npz".format(scale=wildcards.scale)}
    return {}


AD_RULE_PREFIX = "anadiffusion_"


def ad_record_rules():
    """The rules of this paper that write an input record (an output named `inputs`), as record job name (the
    rule's name after the prefix) -> the record's path pattern. A rule whose job K1 does not know stops the workflow.
    """
    found = {}
    for each in workflow.rules:
        outputs = dict(each.output.items())
        if each.name.startswith(AD_RULE_PREFIX) and "inputs" in outputs:
            found[each.name.removeprefix(AD_RULE_PREFIX)] = strip_wildcard_constraints(
                str(outputs["inputs"])
            )
    unknown = sorted(set(found) - set(anadiffusion_experiment.RECORD_JOBS))
    if unknown:
        raise ValueError(
            f"rules {unknown} write an input record that K1 does not know (experiment.RECORD_JOBS)"
        )
    return found


@reads("anadiffusion", ("seg_cldm",))
def ad_record_jobs(wildcards):
    """The jobs whose input records K1 needs at this scale (experiment.record_jobs of the config)."""
    return anadiffusion_experiment.record_jobs(ad_config(wildcards))


def ad_input_records(wildcards):
    """The input records K1 reads: of every rule that writes one (ad_record_rules) whose job the config runs
    (the sampling and editing jobs: no per-subject mask allowed; the evaluation and, where the scale runs it, the
    Seg. cLDM's job: the positive controls). A configured job whose rule writes no record is left out here and
    makes K1 inconclusive (it is in expected_jobs).
    """
    patterns = ad_record_rules()
    return [
        patterns[job].format(scale=wildcards.scale)
        for job in ad_record_jobs(wildcards)
        if job in patterns
    ]


def ad_template_file(wildcards):
    """The template rule's output, by path: the one file whose 3-D masks are the population's (K1's exemption)."""
    pattern = str(rules.anadiffusion_template.output.template)
    return strip_wildcard_constraints(pattern).format(scale=wildcards.scale)


def ad_traces(wildcards):
    """Every network's training trace: the autoencoder's, each denoiser's and the Seg. cLDM's where it runs."""
    names = ["ae", *ad_denoiser_names(wildcards)] + (
        ["seg_cldm"] if ad_seg_cldm(wildcards) else []
    )
    return [
        f"{AD}/models/{name}_trace.parquet".format(scale=wildcards.scale)
        for name in names
    ]


def ad_subject_files(wildcards):
    """The per-subject files: the cohort's (or ADNI's) outputs (volumes and part labels, subject tables) and the
    encode rule's training latents (each subject's whole brain and part crops cut by its own mask): what no
    sampling or editing job may take (the claims' check K1)."""
    return [
        f"{AD}/data/{split}{suffix}".format(scale=wildcards.scale)
        for split in ("train", "eval")
        for suffix in (".npz", "_subjects.parquet")
    ] + [f"{AD}/latents/train.npz".format(scale=wildcards.scale)]


@reads("anadiffusion", ("edit", "methods"))
def ad_edit_method(wildcards):
    """The edits the figure shows: the first refined method of edit.methods (paste only where it is the only one)."""
    methods = ad_config(wildcards)["edit"]["methods"]
    return next(
        (m for m in methods if m not in anadiffusion_experiment.BASELINES), methods[0]
    )


def ad_plan_work(step):
    """The work of one job of rule anadiffusion_`step` for the plan of a scale, in voxels through a network
    (forward and backward for training): the autoencoder's steps x batch x image voxels; a denoiser's steps x
    batch x seeds x latent voxels of the whole grid (an upper bound for the part models, whose supports are
    smaller; the Seg. cLDM's is that bound); sampling's samples x seeds x DDIM steps x latent voxels (every method
    and part model of a seed runs at most that many steps); the Seg. cLDM job's (samples + 4 x edit pairs: three
    part edits and the conditioning check's whole-map swap) x seeds x DDIM steps x latent voxels.
    """

    def work(wildcards, scale):
        cfg = scale_block(PAPERS, "anadiffusion", scale)
        voxels = 1
        for side in cfg["data"]["shape"]:
            voxels *= side
        factor = anadiffusion_experiment.SIZE_FACTORS[cfg["autoencoder"]["size"]][0]
        latent, seeds = voxels / factor**3, len(cfg["seeds"])
        if step == "train_ae":
            return cfg["autoencoder"]["steps"] * cfg["autoencoder"]["batch"] * voxels
        if step == "train_denoiser":
            return cfg["denoiser"]["steps"] * cfg["denoiser"]["batch"] * seeds * latent
        runs = cfg["sampling"]["samples"]
        if step == "seg_cldm":  # three part edits and the whole-map swap per pair
            runs += 4 * len(cfg["edit"]["pairs"])
        return runs * seeds * cfg["sampling"]["ddim_steps"] * latent

    return work


for _step in ("train_ae", "train_denoiser", "sample", "seg_cldm"):
    PLAN_WORK[f"anadiffusion_{_step}"] = ad_plan_work(_step)
