"""Make one dataset of paper 01 with its fixed split: digits at 16x16, the toy manifold in D dims, or (paper
scale) CIFAR-10 / Imagenette from their downloaded archives."""

import numpy as np

from neurips26.common.io import save_npz
from neurips26.common.runtime import start_job
from neurips26.pred_loss_space import data

DATA_SEED = 0  # the split and the toy embedding are fixed, whatever the training seed
log = start_job(snakemake, seed=DATA_SEED)
cfg = snakemake.params.dataset
if cfg["kind"] == "toy":
    toy = data.toy_manifold(cfg["dim"], cfg["n_train"], cfg["n_test"], seed=DATA_SEED)
    arrays = {key: np.asarray(value) for key, value in toy.items()}
else:
    if cfg["kind"] == "digits16":
        x_train, y_train, x_test, y_test = data.digits16(seed=DATA_SEED, n_train=cfg["n_train"])
    else:
        archive = snakemake.input.archives[0]
        if cfg["kind"] == "cifar10":
            x_train, y_train, x_test, y_test = data.cifar10_from_archive(archive)
        else:
            x_train, y_train, x_test, y_test = data.imagenette_from_archive(archive, cfg["image_size"])
        keep = np.sort(np.random.default_rng(DATA_SEED).permutation(len(x_train))[: cfg["n_train"]])
        x_train, y_train = x_train[keep], y_train[keep]  # a fixed subset of the archive's training split
    arrays = {"x_train": x_train, "y_train": y_train, "x_test": x_test, "y_test": y_test}
data.check_images(arrays["x_train"], f"{snakemake.wildcards.dataset} training data")
data.check_images(arrays["x_test"], f"{snakemake.wildcards.dataset} test data")
log.info("%s: train %s, test %s", snakemake.wildcards.dataset, arrays["x_train"].shape, arrays["x_test"].shape)
save_npz(snakemake.output[0], **arrays)
