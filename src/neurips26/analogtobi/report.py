"""The tables paper 02's report renders besides the claims and the closing sections."""

from __future__ import annotations

import pandas as pd

__all__ = ["held_out_table", "report_tables"]

_ABLATION = ["config", "decoding", "seeds", "samples", "validity", "validity_sd", "novelty", "novel_of_valid",
             "novel_of_valid_canonical", "memorisation", "memorised_of_valid", "memorised_topology_of_valid",
             "type_accuracy", "type_accuracy_canonical", "electrical", "electrical_sd", "realism_mmd"]  # fmt: skip
_PER_TYPE = ["type", "samples", "valid", "validity", "novelty", "novel_of_valid", "memorisation", "type_accuracy",
             "electrical", "realism_mmd", "mean_devices"]  # fmt: skip


def held_out_table(reference: pd.DataFrame) -> pd.DataFrame:
    """Per type of the held-out real circuits: the classifiers' accuracy (ports verbatim and by class), the share
    the designer rule accepts, and the share that converges in ngspice, ``unavailable`` (not 0) for a type with a
    circuit ngspice could not run on (not installed)."""
    table = (
        reference.assign(
            correct=reference["predicted"] == reference["type"],
            correct_canonical=reference["predicted_canonical"] == reference["type"],
            designer_valid=reference["design_fault"] == "",
            converged=reference["spice"] == "converged",
        )
        .groupby("type")
        .agg(
            circuits=("id", "size"),
            classifier_accuracy=("correct", "mean"),
            classifier_accuracy_canonical=("correct_canonical", "mean"),
            designer_valid=("designer_valid", "mean"),
            ngspice_converged=("converged", "mean"),
        )  # fmt: skip
        .reset_index()
    )
    unavailable = reference.groupby("type")["spice"].apply(lambda s: (s == "unavailable").any())
    rates = table["ngspice_converged"].map("{:.3f}".format)
    table["ngspice_converged"] = rates.where(~table["type"].map(unavailable).to_numpy(), "unavailable")
    return table


def report_tables(inp, params) -> dict:
    """Everything the report template renders besides the claims and the closing sections."""
    circuits = pd.read_parquet(inp.circuits)
    rejects = pd.read_parquet(inp.rejects)
    reference = pd.read_parquet(inp.reference)
    summary = pd.read_parquet(inp.summary)
    ablation = pd.read_parquet(inp.ablation)
    training = pd.read_parquet(inp.training)
    throughput = pd.read_parquet(inp.throughput)
    data = (
        circuits.groupby("type")
        .agg(
            circuits=("id", "size"),
            test=("split", lambda s: int((s == "test").sum())),
            median_devices=("n_devices", "median"),
            max_devices=("n_devices", "max"),
        )  # fmt: skip
        .reset_index()
        .sort_values("circuits", ascending=False)
    )
    held_out = held_out_table(reference)
    final = (
        training.sort_values("step")
        .groupby(["config", "seed"])
        .agg(
            steps=("step", "max"),
            final_loss=("loss", "last"),
            held_out_loss=("val_loss", "last"),
            seconds=("seconds", "first"),
            parameters=("parameters", "first"),
        )  # fmt: skip
        .reset_index()
    )
    speed = (
        throughput.groupby(["config", "decoding"], sort=False)
        .agg(seeds=("seed", "nunique"), samples=("samples", "sum"), seconds=("seconds", "sum"))
        .reset_index()
    )
    speed["circuits_per_s"] = speed["samples"] / speed["seconds"]
    spice = (
        throughput.drop_duplicates(["config", "seed"])
        .groupby("config", sort=False)
        .agg(simulations=("simulations", "sum"), spice_seconds=("spice_seconds", "sum"))
        .reset_index()
    )
    spice["simulations_per_s"] = spice["simulations"] / spice["spice_seconds"]
    return {
        "data": data,
        "n_circuits": len(circuits),
        "rejects": rejects.groupby("stage").size().rename("circuits").reset_index() if len(rejects) else None,
        "held_out": held_out,
        "classifier_accuracy": float((reference["predicted"] == reference["type"]).mean()),
        "classifier_accuracy_canonical": float((reference["predicted_canonical"] == reference["type"]).mean()),
        "real_designer_valid": float((reference["design_fault"] == "").mean()),
        "real_converged": float((reference["spice"] == "converged").mean()),
        "spice_unavailable": bool((reference["spice"] == "unavailable").any()),
        "ablation": summary[[c for c in _ABLATION if c in summary]],
        "ablation_seeds": ablation[
            [
                "config",
                "decoding",
                "seed",
                "samples",
                "terminated",
                "valid",
                "novel",
                "memorised",
                "type_ok",
                "spice_first",
                "spice_converged",
            ]
        ],  # fmt: skip
        "invalid": ablation.groupby(["config", "decoding"], sort=False)[
            ["samples", "terminated", "valid", "cut", "erc1", "erc2", "erc3", "erc4", "erc5"]
        ]
        .sum()
        .reset_index(),
        "per_type": pd.read_parquet(inp.per_type)[_PER_TYPE],
        "training": final,
        "speed": speed,
        "spice_speed": spice,
    }
