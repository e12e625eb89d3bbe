"""neurips26: reproductions of NeurIPS 2026 papers as one Snakemake workflow."""
