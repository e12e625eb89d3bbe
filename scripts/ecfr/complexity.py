"""Parameters and FLOPs of paper 11's networks (Table 2): each compared method as this scale builds it, at the
dataset's image size, the paper's configuration at 256 pixels (ImageNet ResNet-34 teacher), whatever the scale, and
the published CFM (DINO ViT-B/8 and Point-MAE backbones, counted, never trained)."""

import pandas as pd

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.ecfr.complexity import measure_configurations, measure_published_cfm
from neurips26.ecfr.experiment import build_model

p = snakemake.params
log = start_job(snakemake)
scale = {"teacher": p.teacher, "model": p.model, "cfm": p.cfm, "size": p.size}
rows = measure_configurations(p.methods, {"this scale": scale, "paper": p.paper}, lambda *a: build_model(*a, 0))
if p.paper is None:
    log.info("the paper configurations are not measured at this scale (complexity.paper_configuration)")
else:
    rows.append({"configuration": "paper", "method": "cfm_published", "size": 224, **measure_published_cfm()})
table = pd.DataFrame(rows)
log.info("\n%s", table.to_string(index=False))
write_parquet(table, snakemake.output[0], job_provenance(snakemake))
