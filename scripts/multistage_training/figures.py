"""Paper 16's figures, one per phenomenon of the abstract in the skill-chain model (our reconstruction): SFT and RL
complementary (with the RL plateau), the pretraining ceiling's power law (with the pretraining loss), the optimal
allocation against data quality and pretraining, RL's selective amplification; and the mean-field solution against
the stochastic simulation."""

import pandas as pd

from neurips26.common.figures import save_figure
from neurips26.common.runtime import start_job
from neurips26.multistage_training import plots

inp, out = snakemake.input, snakemake.output
log = start_job(snakemake)
save_figure(plots.complementarity(pd.read_parquet(inp.complementarity), pd.read_parquet(inp.plateau)),
            out.complementarity)  # fmt: skip
save_figure(plots.ceiling(pd.read_parquet(inp.ceiling), pd.read_parquet(inp.pretraining)), out.ceiling)
save_figure(plots.allocation(pd.read_parquet(inp.allocation)), out.allocation)
save_figure(plots.amplification(pd.read_parquet(inp.amplification)), out.amplification)
save_figure(plots.agreement(pd.read_parquet(inp.simulation)), out.agreement)
log.info("figures written: %s", list(out.keys()))
