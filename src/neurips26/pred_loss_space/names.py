"""Names shared by every step of paper 01, importable without torch (figures and reports run without it)."""

SPACES = ("x", "eps", "v")  # prediction and loss spaces
REGIME = ["dataset", "arch", "bottleneck"]  # the columns that name a regime in the metrics table
