"""Make a task's measure pairs: the training pairs and every test group (resolution)."""

from neurips26.amortized_ot import data
from neurips26.amortized_ot.experiment import pack
from neurips26.common.io import save_npz
from neurips26.common.runtime import start_job

params, task = snakemake.params, snakemake.wildcards.task
log = start_job(snakemake, seed=params.seed)
cfg = params.task


def make(split, n_pairs, res):
    seed = data.pair_seed(params.seed, task, split)
    if task == "digits":
        images = data.digit_images(cfg["source"], split, params.seed, list(snakemake.input.source))
        batch, ids = data.digit_pairs(images, n_pairs, res, seed)
        return {**batch.as_dict(), "ids": ids}
    if task == "colour":
        batch, crops, ids = data.colour_pairs(data.load_colour_images(), n_pairs, cfg["crop"], res, seed)
        return {**batch.as_dict(), "ids": ids, "crops": crops}
    if task == "sphere":
        supply = None
        if cfg["source"] == "gpw":
            supply = data.population_weights(
                data.read_population_grid(snakemake.input.source[0]), data.fibonacci_sphere(res)
            )
        return data.sphere_pairs(n_pairs, res, tuple(cfg["kappa"]), seed, supply).as_dict()
    return data.toy_minibatch_pairs(n_pairs, res, seed).as_dict()


groups = {"train": make("train", cfg["train_pairs"], params.train_res)}
for group, res in params.groups.items():
    groups[group] = make("test", cfg["test_pairs"], res)
for group, arrays in groups.items():
    log.info(
        "%s/%s: %d pairs, %d x %d atoms in R^%d",
        task,
        group,
        *arrays["x"].shape[:2],
        arrays["y"].shape[1],
        arrays["x"].shape[2],
    )
save_npz(snakemake.output[0], **pack(groups))
