"""Make one dataset of paper 01 with its fixed split: digits at 16x16, the toy manifold in D dims, or (paper
scale) CIFAR-10 / Imagenette from their downloaded archives."""

from neurips26.common.io import save_npz
from neurips26.common.runtime import start_job
from neurips26.pred_loss_space import data

log = start_job(snakemake, seed=data.DATA_SEED)
name = snakemake.wildcards.dataset
arrays = data.make_dataset(snakemake.params.dataset, list(snakemake.input.archives))
data.check_images(arrays["x_train"], f"{name} training data")
data.check_images(arrays["x_test"], f"{name} test data")
log.info("%s: train %s, test %s", name, arrays["x_train"].shape, arrays["x_test"].shape)
save_npz(snakemake.output[0], **arrays)
