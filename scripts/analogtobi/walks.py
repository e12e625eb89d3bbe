"""One representation's walks: ``traversals`` random walks per training circuit (the traversal augmentation), one per
test circuit (the held-out loss), each with its circuit-type token; walks longer than the representation's context
are dropped and counted."""

import numpy as np
import pandas as pd

from neurips26.analogtobi import experiment
from neurips26.analogtobi.netlist import parse
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

p = snakemake.params.walks
rep = snakemake.wildcards.rep
log = start_job(snakemake)
circuits = pd.read_parquet(snakemake.input.circuits)
walk_tokens = experiment.walker(rep)
rng = np.random.default_rng([p["seed"], experiment.REPRESENTATIONS.index(rep)])
rows, dropped = [], 0
for c in circuits.itertuples():
    circuit = parse(c.netlist, c.path, duplicate_names="renumber")
    for k in range(p["traversals"] if c.split == "train" else 1):
        tokens = walk_tokens(circuit, c.type, rng)
        if len(tokens) > p["context"] + 1:
            dropped += 1
            continue
        rows.append({"id": c.id, "type": c.type, "split": c.split, "walk": k, "length": len(tokens),
                     "tokens": " ".join(tokens)})  # fmt: skip
walks = pd.DataFrame(rows)
log.info("%s: %d walks (median length %d, max %d); %d longer than the context %d dropped", rep, len(walks),
         int(walks["length"].median()), int(walks["length"].max()), dropped, p["context"])  # fmt: skip
write_parquet(walks, snakemake.output[0], job_provenance(snakemake))
