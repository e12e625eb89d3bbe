"""The real circuits' side of the evaluation: the type classifiers fitted on the training circuits (ports verbatim and
by class, pickled as a dict), and per held-out circuit its predicted types, the designer rule's verdict, its ngspice
operating point under the same generic models and bias as the generated circuits, and its realism features."""

import pickle
import time

import pandas as pd

from neurips26.analogtobi import erc, spice
from neurips26.analogtobi.classifier import TypeClassifier
from neurips26.analogtobi.evaluation import FEATURES, features
from neurips26.analogtobi.netlist import parse
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job

p = snakemake.params.reference
log = start_job(snakemake)
table = pd.read_parquet(snakemake.input.circuits)
circuits = [parse(c.netlist, c.path, duplicate_names="renumber") for c in table.itertuples()]
train = (table["split"] == "train").to_numpy()
classifiers = {
    setting: TypeClassifier(**p["classifier"], canonical_ports=setting == "canonical").fit(
        [c for c, t in zip(circuits, train) if t], list(table.loc[train, "type"])
    )
    for setting in ("verbatim", "canonical")
}
test = table[~train].reset_index(drop=True)
test_circuits = [c for c, t in zip(circuits, train) if not t]
predicted = classifiers["verbatim"].predict(test_circuits)
began = time.perf_counter()
results = [spice.simulate(c, timeout_s=p["spice_timeout_s"]) for c in test_circuits]
seconds = time.perf_counter() - began
rows = test[["id", "type"]].assign(
    predicted=predicted,
    predicted_canonical=classifiers["canonical"].predict(test_circuits),
    design_fault=[erc.design_fault(c) for c in test_circuits],
    spice=[r.status for r in results],
    spice_reason=[r.reason for r in results],
    spice_seconds=seconds / max(len(results), 1),
    **{f"f_{name}": col for name, col in zip(FEATURES, zip(*[features(c) for c in test_circuits]))},
)
log.info("classifier: %.3f held-out accuracy on %d circuits; ngspice: %s in %.1f s", (rows["predicted"] ==
         rows["type"]).mean(), len(rows), rows["spice"].value_counts().to_dict(), seconds)  # fmt: skip
with open(snakemake.output.classifier, "wb") as f:
    pickle.dump(classifiers, f)
write_parquet(rows, snakemake.output.reference, job_provenance(snakemake))
