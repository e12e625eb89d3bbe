"""Make the measure pairs of one task, split and resolution."""

from sklearn.datasets import load_digits

from neurips26.amortized_ot import data
from neurips26.common.io import save_npz
from neurips26.common.runtime import start_job

log = start_job(snakemake, seed=snakemake.params.seed)
task, split, res = snakemake.wildcards.task, snakemake.wildcards.split, int(snakemake.wildcards.res)
cfg = snakemake.params.task
seed = data.pair_seed(snakemake.params.seed, task, split)
n_pairs = cfg[f"{split}_pairs"]
extra = {}

if task == "digits":
    if cfg["source"] == "mnist":
        name = "train-images-idx3-ubyte.gz" if split == "train" else "t10k-images-idx3-ubyte.gz"
        images = data.read_idx_images(next(p for p in snakemake.input if p.endswith(name)))
    else:
        images = data.split_images(load_digits().images, split, snakemake.params.seed)
    batch, ids = data.digit_pairs(images, n_pairs, res, seed)
elif task == "colour":
    batch, extra["crops"], ids = data.colour_pairs(
        data.load_colour_images(), n_pairs, cfg["crop"], res, seed
    )
elif task == "sphere":
    batch, ids = data.sphere_pairs(n_pairs, res, tuple(cfg["kappa"]), seed), None
else:
    batch, ids = data.toy_minibatch_pairs(n_pairs, res, seed), None

log.info("%s/%s: %d pairs, %d x %d atoms in R^%d", task, split, batch.n_pairs, batch.x.shape[1], batch.y.shape[1], batch.dim)
save_npz(snakemake.output[0], **batch.as_dict(), **({"ids": ids} if ids is not None else {}), **extra)
