"""Figure: flow-matching samples trained with each minibatch coupling plan, with W2 to the target."""

from neurips26.common.runtime import start_job

log = start_job(snakemake)  # noqa: F821 (injected by Snakemake)

from pathlib import Path  # noqa: E402

from neurips26.amortized_ot.cfm import wasserstein2  # noqa: E402
from neurips26.amortized_ot.plots import cfm_figure, save_figure  # noqa: E402
from neurips26.common.io import load_npz  # noqa: E402

samples, w2 = {}, {}
for path in snakemake.input.samples:  # noqa: F821
    plan = Path(path).parent.name  # .../cfm/{plan}/samples.npz
    arrays = load_npz(path)
    samples[plan] = {key: arrays[key] for key in ("source", "generated", "target")}
    w2[plan] = wasserstein2(arrays["generated"], arrays["target"])
    log.info("plan %s: %d generated samples, W2 to target %.4f", plan, len(arrays["generated"]), w2[plan])

save_figure(cfm_figure(samples, w2), snakemake.output[0])  # noqa: F821
log.info("wrote %s", snakemake.output[0])  # noqa: F821
