"""Paper 03's figures: orthogonal slices of a held-out real volume and of each method's first sample (seed
``samples['seeds'][0]``), that sample's part assets beside its naive paste, the first edit pair of each part
before and after (method ``params.edit_method``), and the regional Frechet distances with seed and bootstrap
intervals.

snakemake.input: samples (samples/samples.npz: seeds, volumes_<method> (S, N, X, Y, Z), asset_<part>
(S, N, x, y, z)), edits (samples/edits.npz: parts, recipients, donors, edited_<method> (S, P, K, X, Y, Z)), eval
(data/eval.npz: volumes (N, X, Y, Z)), fd (evaluation/fd.parquet).
snakemake.params: methods (the config's methods, in order), edit_method (the edits' method shown, e.g. ``ana``).
snakemake.output: slices, assets, edit, regional_fd (PNG)."""

import numpy as np
import pandas as pd

from neurips26.anadiffusion import plots
from neurips26.anadiffusion.summary import regional_long
from neurips26.common.figures import save_figure
from neurips26.common.runtime import start_job

inp, out, p = snakemake.input, snakemake.output, snakemake.params
log = start_job(snakemake)
with np.load(inp.eval) as real, np.load(inp.samples) as samples:  # arrays are read one key at a time
    volumes = {"real": real["volumes"][0], **{m: samples[f"volumes_{m}"][0, 0] for m in p.methods}}
    parts = [k.removeprefix("asset_") for k in samples.files if k.startswith("asset_")]
    assets = {part: samples[f"asset_{part}"][0, 0] for part in parts}
    shown = samples[f"volumes_{p.edit_method}"][0]
save_figure(plots.orthogonal_slices(volumes), out.slices)
save_figure(plots.part_assets(assets, volumes["paste"]), out.assets)
with np.load(inp.edits) as edits:
    recipient, donor = int(edits["recipients"][0]), int(edits["donors"][0])
    edited = edits[f"edited_{p.edit_method}"][0]
    pairs = {str(part): {"recipient": shown[recipient], "donor": shown[donor], "edited": edited[j, 0]}
             for j, part in enumerate(edits["parts"])}  # fmt: skip
save_figure(plots.edit_panels(pairs), out.edit)
save_figure(plots.regional_fd(regional_long(pd.read_parquet(inp.fd))), out.regional_fd)
log.info("figures written: %s", list(out.keys()))
