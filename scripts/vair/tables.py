"""Paper 08's report tables from every grade table of the scale: accuracy per backend, task, category and flaw type,
the production-evaluation gap per flaw type, unparseable replies (and the small model's invalid unconstrained
verdicts), the item counts beside the paper's, the paper's accuracies beside ours, and the surface baseline per flaw
type on the synthetic items (scikit-learn: why this job runs in the llm environment). The small model's rows are
per seed (held-out evaluation for the process members) with the mean over seeds."""

from pathlib import Path

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.vair.grading import accuracy_table, gap_table, paper_numbers, unparseable_table
from neurips26.vair.items import items_from_frame
from neurips26.vair.shortcuts import shortcut_table
from neurips26.vair.summary import counts_table, grading_tables, paper_beside_ours

inp, out = snakemake.input, snakemake.output
log = start_job(snakemake)
reference, small, external = {}, None, {}
for path in map(Path, inp.grades):
    dataset, table = path.parent.name, path.stem  # grades/{dataset}/{table}.parquet
    results = pd.read_parquet(path)
    if table == "reference":
        reference[dataset] = results
    elif table == "small":
        small = results
    else:
        external[dataset, table] = results
functions = {"accuracy": accuracy_table, "gap": gap_table, "unparseable": unparseable_table}
tables = grading_tables(reference, small, external, functions)
tables["counts"] = counts_table({Path(p).parent.name: pd.read_parquet(p) for p in inp.counts})
tables["paper"] = paper_beside_ours(tables["accuracy"], paper_numbers())
tables["shortcuts"] = shortcut_table(items_from_frame(pd.read_parquet(inp.item_table)))
prov = job_provenance(snakemake)
for name, table in tables.items():
    write_parquet(table, out[name], prov)
    log.info("%s: %d rows", name, len(table))
log.info("surface baseline (balanced accuracy):\n%s", tables["shortcuts"].to_string())
log.info("gaps (mean over seeds for the small model):\n%s", tables["gap"].to_string(max_rows=60))
