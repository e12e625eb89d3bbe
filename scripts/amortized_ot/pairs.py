"""Make a task's measure pairs: the training pairs and every test group (resolution)."""

from neurips26.amortized_ot.data import task_groups
from neurips26.amortized_ot.experiment import pack
from neurips26.common.io import save_npz
from neurips26.common.runtime import start_job

params, task = snakemake.params, snakemake.wildcards.task
log = start_job(snakemake, seed=params.seed)
groups = task_groups(task, params.task, params.seed, params.train_res, params.groups, list(snakemake.input.source))
for group, arrays in groups.items():
    x, y = arrays["x"], arrays["y"]
    log.info("%s/%s: %d pairs, %d x %d atoms in R^%d", task, group, *x.shape[:2], y.shape[1], x.shape[2])
save_npz(snakemake.output[0], **pack(groups))
