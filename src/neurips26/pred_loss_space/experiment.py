"""The experiment's shape from its config: which runs exist, each model's full spec, and the checks of a
config that a schema cannot express (run before any job)."""

from __future__ import annotations

from neurips26.pred_loss_space import architectures
from neurips26.pred_loss_space.names import SPACES

IMAGE_CHANNELS = {"digits16": 1, "cifar10": 3, "imagenette": 3}
FIXED_SIZE = {"digits16": 16, "cifar10": 32}  # imagenette is resized to the config's image_size
N_IMAGES = {"digits16": 1797}
TEST_SPLIT = {"cifar10": 10000, "imagenette": 3925}  # the archives' own test/val splits
# paper-scale downloads, as paths under resources/ (urls and pinned hashes: config/sources.yaml): the image archives
# by dataset kind, and the Inception-v3 weights of pytorch-fid (TF's 2015-12-05 graph ported to torch) for true FID
DOWNLOADS = {"cifar10": "cifar10/cifar-10-python.tar.gz", "imagenette": "pred_loss_space/imagenette2-160.tgz"}
INCEPTION = "pred_loss_space/pt_inception-2015-12-05-6726825d.pth"
INCEPTION_DIM = 2048
TOY_LATENT_DIM = 2  # the toy's FD is computed on the 2-D latent coordinates


def regime_seeds(cfg: dict, regime: dict) -> list[int]:
    """The regime's own `seeds` where it sets them, else the scale's."""
    return list(regime.get("seeds", cfg["seeds"]))


def seed_groups(cfg: dict, regime: dict) -> list[list[int]]:
    """The regime's seeds in groups of the scale's `seeds_per_job`, in order: one training, sampling and scoring
    job per group (the seeds of a group train together as a batched ensemble, issue 23)."""
    seeds, size = regime_seeds(cfg, regime), cfg["seeds_per_job"]
    return [seeds[i : i + size] for i in range(0, len(seeds), size)]


def group_name(seeds: list[int]) -> str:
    """A seed group as it appears in a job's paths: the seeds joined by '-' ('0-1-2'; one seed: '0')."""
    return "-".join(str(int(seed)) for seed in seeds)


def parse_group(name: str) -> list[int]:
    """The seeds of a group name ('0-1-2' -> [0, 1, 2])."""
    try:
        seeds = [int(part) for part in str(name).split("-")]
    except ValueError:
        raise ValueError(f"seed group {name!r} is not seeds joined by '-' (e.g. '0-1-2')") from None
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seed group {name!r} repeats a seed")
    return seeds


def job_ids(cfg: dict) -> list[str]:
    """'{dataset}/{arch}/{pred}x{loss}/s{group}' for every cell of every regime and each of its seed groups."""
    return [
        f"{r['dataset']}/{r['arch']}/{pred}x{loss}/s{group_name(group)}"
        for r in cfg["regimes"]
        for pred in cfg["preds"]
        for loss in cfg["losses"]
        for group in seed_groups(cfg, r)
    ]


def regime_of(cfg: dict, dataset: str, arch: str) -> dict:
    for regime in cfg["regimes"]:
        if regime["dataset"] == dataset and regime["arch"] == arch:
            return regime
    raise ValueError(f"no regime pairs dataset {dataset!r} with arch {arch!r}")


def train_settings(cfg: dict, dataset: str, arch: str) -> dict:
    """`train` of the config with the regime's `steps` where it sets its own (every cell of a regime
    trains alike; regimes are not compared with each other)."""
    regime = regime_of(cfg, dataset, arch)
    return {**cfg["train"], **({"steps": regime["steps"]} if "steps" in regime else {})}


def model_spec(cfg: dict, dataset: str, arch: str) -> dict:
    """The arch's constructor keywords plus the data shape of the dataset it is trained on."""
    return {**cfg["archs"][arch], **data_shape(cfg["datasets"][dataset])}


def output_ranks(cfg: dict) -> dict[str, list[int]]:
    """'dataset/arch' -> [token dimension, width] of every bottleneck regime: the network's output per token lies
    in an affine space of dimension `width` (its head is linear), the claims' rank-floor check reads it."""
    ranks = {}
    for regime in cfg["regimes"]:
        if regime["bottleneck"]:
            spec = model_spec(cfg, regime["dataset"], regime["arch"])
            width = architectures.resolve_spec(regime["arch"], spec)["width"]
            ranks[f"{regime['dataset']}/{regime['arch']}"] = [architectures.token_dim(regime["arch"], spec), width]
    return ranks


def data_shape(data: dict) -> dict:
    """The model's data keys: dim for a toy, channels and image_size for images."""
    if data["kind"] == "toy":
        return {"dim": data["dim"]}
    return {
        "channels": IMAGE_CHANNELS[data["kind"]],
        "image_size": FIXED_SIZE.get(data["kind"], data.get("image_size")),
    }


def archive(data: dict) -> str | None:
    """The path of a dataset's download under resources/, or None for data that ships offline."""
    return DOWNLOADS.get(data["kind"])


def uses_inception(cfg: dict, dataset: str) -> bool:
    """True FID (Inception-v3 pool3 features) is computed for image datasets when evaluate.inception_fid is set."""
    return bool(cfg["evaluate"].get("inception_fid", False)) and cfg["datasets"][dataset]["kind"] != "toy"


def feature_dim(cfg: dict, dataset: str) -> int:
    return TOY_LATENT_DIM if cfg["datasets"][dataset]["kind"] == "toy" else cfg["features"]["dim"]


def test_size(data: dict) -> int:
    if data["kind"] == "toy":
        return data["n_test"]
    return TEST_SPLIT.get(data["kind"], N_IMAGES.get(data["kind"], 0) - data["n_train"])


def check_config(cfg: dict) -> None:
    """Raise ValueError naming the first inconsistency the schema cannot see."""
    for name in [*cfg["preds"], *cfg["losses"]]:
        if name not in SPACES:
            raise ValueError(f"space {name!r} is not one of {SPACES}")
    if cfg["noise"]["t_min"] >= 1 - cfg["noise"]["t_eps"]:
        raise ValueError("noise.t_min must be below 1 - noise.t_eps")
    for regime in cfg["regimes"]:
        dataset, arch = regime["dataset"], regime["arch"]
        if dataset not in cfg["datasets"]:
            raise ValueError(f"regime {dataset}/{arch}: dataset {dataset!r} is not under datasets")
        if arch not in cfg["archs"]:
            raise ValueError(f"regime {dataset}/{arch}: arch {arch!r} is not under archs")
        toy_data, toy_arch = cfg["datasets"][dataset]["kind"] == "toy", arch == "mlp_toy"
        if toy_data != toy_arch:
            raise ValueError(f"regime {dataset}/{arch}: mlp_toy is for toy datasets, the others for images")
        try:
            architectures.check_bottleneck_label(arch, model_spec(cfg, dataset, arch), regime["bottleneck"])
        except ValueError as error:
            raise ValueError(f"regime {dataset}/{arch}: {error}") from None
        data = cfg["datasets"][dataset]
        if data["kind"] == "toy" and "dim" not in data:
            raise ValueError(f"datasets.{dataset}: a toy dataset needs dim")
        if data["kind"] == "digits16" and not 1 <= data["n_train"] < 1797:
            raise ValueError(f"datasets.{dataset}.n_train must be below the 1797 digits")
        if data["kind"] == "imagenette" and "image_size" not in data:
            raise ValueError(f"datasets.{dataset}: imagenette needs image_size (the images are resized to it)")
        dims = [feature_dim(cfg, dataset)] + ([INCEPTION_DIM] if uses_inception(cfg, dataset) else [])
        need = 2 * max(dims)
        if cfg["sample"]["n"] < need:
            raise ValueError(
                f"sample.n = {cfg['sample']['n']} is too few for the Frechet distance on {need // 2}-dim "
                f"features of {dataset}: it needs at least {need} samples (else the covariance is singular)"
            )
        proxy = 2 * feature_dim(cfg, dataset)  # the FD proxy's reference set is the training split's features
        if "n_train" in data and data["n_train"] < proxy:
            raise ValueError(
                f"datasets.{dataset}.n_train = {data['n_train']} is too few for the Frechet distance on"
                f" {proxy // 2}-dim features: the reference set needs at least {proxy} images"
            )
        if cfg["evaluate"]["n_test"] > test_size(data):
            raise ValueError(f"evaluate.n_test = {cfg['evaluate']['n_test']} exceeds the test split of {dataset}")
