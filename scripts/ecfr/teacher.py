"""Paper 11's frozen teacher: pretrained by the pipeline on scikit-image's pictures with two pretext tasks (quick,
smoke; no ImageNet weights load offline), or torchvision's ImageNet ResNet-34 to layer 3 (paper, as the reference's
timm ResNet-34)."""

import pandas as pd
import torch

from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.ecfr.model import Backbone, torchvision_resnet_state
from neurips26.ecfr.teacher import pretrain_teacher

t = snakemake.params.teacher
log = start_job(snakemake)
if t["source"] == "pretext":
    settings = loop.LoopSettings(
        checkpoint=loop.checkpoint_path(snakemake.output.teacher),
        fingerprint=fingerprint(dict(snakemake.params), list(snakemake.input)),
        name="teacher pretext",
    )
    backbone, rows = pretrain_teacher(tuple(t["widths"]), tuple(t["blocks"]), 64, t["steps"], t["batch"], t["lr"],
                                      t["seed"], settings, log.info)  # fmt: skip
    trace = pd.DataFrame(rows)
else:
    backbone = Backbone(tuple(t["widths"]), 0, tuple(t["blocks"]))
    state = torch.load(snakemake.input.weights, map_location="cpu", weights_only=True)
    backbone.load_state_dict(torchvision_resnet_state(state, tuple(t["blocks"])))
    trace = pd.DataFrame({"step": [0], "loss": [float("nan")]})
    log.info("ImageNet ResNet-34 (torchvision) layers 1-3 loaded: %d parameters",
             sum(p.numel() for p in backbone.parameters()))  # fmt: skip
torch.save(backbone.state_dict(), snakemake.output.teacher)
write_parquet(trace.assign(source=t["source"]), snakemake.output.trace, job_provenance(snakemake))
if t["source"] == "pretext":
    loop.finish(settings)
