"""Paper 03's evaluation against the held-out real volumes (the eval split): regional Frechet distances on the
feature network's features with subject-cluster bootstrap intervals (fd; regions whole, brain, LH, RH, CB, seam;
beside the methods the real-vs-real reference, method real: disjoint training subsets as large as the eval set
against it), regional volumes by the one proxy
segmenter (volumes) and Cohen's d (cohen_d), editing scores (edit), nearest-training-neighbour memorization
(memorization), and the part assets (assets): their share inside their template part beside the real training
crops' (source train_crop, seed -1), and what the assembly guarantees, read back from the paste
(evaluation.scaffold_table). Where the scale runs the Seg. cLDM baseline (input seg_cldm: samples/seg_cldm.npz),
its samples join every table as method seg_cldm and its edits the edit table, and its samples from the recipients'
noise with the donors' whole maps the conditioning table (evaluation.conditioning_table; empty where it is not
run). The job records its inputs
(evaluation/inputs.parquet): it reads the splits with their per-subject labels, so its record is K1's positive
control at every scale (the content detector must name the labels)."""

import pandas as pd

from neurips26.anadiffusion import assembly, evaluation, features
from neurips26.anadiffusion.artifacts import input_record, job_inputs, load_edits, load_samples, load_split
from neurips26.anadiffusion.experiment import SEG_CLDM
from neurips26.anadiffusion.template import template_from_arrays
from neurips26.common import loop
from neurips26.common.io import load_npz, write_parquet
from neurips26.common.runtime import job_provenance, start_job

p = snakemake.params
e, out = p.evaluate, snakemake.output
log = start_job(snakemake, e["feature_seed"])
prov = job_provenance(snakemake, e["feature_seed"])
template = template_from_arrays(load_npz(snakemake.input.template))
real, _ = load_split(snakemake.input.eval)
training, training_labels = load_split(snakemake.input.train)
samples = load_samples(snakemake.input.samples)
seeds = samples["seeds"].tolist()
generated = {(m, s): samples[f"volumes_{m}"][i] for m in p.methods for i, s in enumerate(seeds)}
edits = load_edits(snakemake.input.edits)
edit_files = {method: (samples, edits) for method in p.edit_methods}  # method -> (its originals, its edits)
if snakemake.input.get("seg_cldm"):  # the baseline's samples and edits, one file
    seg = load_samples(snakemake.input.seg_cldm)
    if seg["seeds"].tolist() != seeds:
        raise ValueError(f"{snakemake.input.seg_cldm} holds seeds {seg['seeds'].tolist()}, the samples {seeds}")
    generated.update({(SEG_CLDM, s): seg[f"volumes_{SEG_CLDM}"][i] for i, s in enumerate(seeds)})
    edit_files[SEG_CLDM] = (seg, seg)

network = features.build_feature_network(e["features"], snakemake.input.get("weights"), seed=e["feature_seed"])
device = loop.job_device()
masks = evaluation.regions(template)
fd = pd.concat([evaluation.fd_table(network, real, generated, masks, e["bootstrap"], e["confidence"], device=device),
                evaluation.real_reference(network, real, training, masks, e["bootstrap"], e["confidence"],
                                          device=device)], ignore_index=True)  # fmt: skip
write_parquet(fd, out.fd, prov)
log.info("FD (whole, mean over seeds): %s", fd[fd.region == "whole"].groupby("method")["value"].mean().to_dict())

volumes = evaluation.volume_table({("real", 0): real, **generated}, template)
write_parquet(volumes, out.volumes, prov)
write_parquet(evaluation.cohen_d_table(volumes, e["bootstrap"], e["confidence"]), out.cohen_d, prov)
write_parquet(evaluation.memorization_table(generated, real, training), out.memorization, prov)
assets = {part: samples[f"asset_{part}"] for part in template.supports}
generated_assets = evaluation.asset_table(assets, seeds, template, e["asset_threshold"]).merge(
    evaluation.scaffold_table(samples["volumes_paste"], assets, seeds, template, assembly.open_voxels(template)),
    on=["seed", "part", "sample"],
)
crops = evaluation.training_crops(training, training_labels, template)  # the real reference (seed -1: no seed)
reference = evaluation.asset_table(crops, [-1], template, e["asset_threshold"])
write_parquet(pd.concat([generated_assets.assign(source="generated"), reference.assign(source="train_crop")],
                        ignore_index=True), out.assets, prov)  # fmt: skip

ms, frames = e["ms_ssim"], []
for method, (originals, edits) in edit_files.items():
    recipients, donors = edits["recipients"], edits["donors"]
    for i, seed in enumerate(seeds):
        for j, part in enumerate(edits["parts"].tolist()):
            volumes_of = originals[f"volumes_{method}"][i]
            frames.append(evaluation.edit_table(method, seed, part, volumes_of[recipients], volumes_of[donors],
                                                edits[f"edited_{method}"][i, j], template, recipients, donors,
                                                ms["n_scales"], ms["kernel_size"], ms["dilation_voxels"],
                                                device))  # fmt: skip
table = pd.concat(frames, ignore_index=True)
write_parquet(table, out.edit, prov)

# does the Seg. cLDM follow its conditioning? (from the same noise: its own map against another subject's)
conditioning = pd.DataFrame(columns=list(evaluation.CONDITIONING_COLUMNS))
if SEG_CLDM in edit_files:
    maps = training_labels[seg["conditioning_scans"]]
    recipients, donors = seg["recipients"], seg["donors"]
    conditioning = pd.concat([evaluation.conditioning_table(seed, seg[f"volumes_{SEG_CLDM}"][i][recipients],
                                                            seg[f"swapped_{SEG_CLDM}"][i], maps[recipients],
                                                            maps[donors], e["asset_threshold"], recipients, donors)
                              for i, seed in enumerate(seeds)], ignore_index=True)  # fmt: skip
    log.info("Seg. cLDM conditioning response per seed: %s", conditioning.groupby("seed")["response"].mean().to_dict())
write_parquet(conditioning, out.conditioning, prov)
log.info("edits: %s", table.groupby(["method", "part"])["locality_contrast"].mean().round(4).to_dict())
write_parquet(input_record("evaluate", job_inputs(snakemake.input, snakemake.params), population_files=[p.population]),
              out.inputs, prov)  # fmt: skip
