"""The method, setting and class names of paper 11, shared by the experiment (which builds the models), the config
checks run at parse time and the claims (which read the metrics) without importing torch."""

ECFR_METHOD = "ecfr"
SAME_MODAL = "same_modal"
CFM = "cfm"
RECONSTRUCTION = (ECFR_METHOD, SAME_MODAL)
METHODS = (*RECONSTRUCTION, CFM)
SETTINGS = ("unified", "per_class")
# the folder names the Eyecandies tools (ec-get) and M3DM's preprocessing give the categories
EYECANDIES_CLASSES = ("CandyCane", "ChocolateCookie", "ChocolatePraline", "Confetto", "GummyBear", "HazelnutTruffle",
                      "LicoriceSandwich", "Lollipop", "Marshmallow", "PeppermintCandy")  # fmt: skip
SYNTHETIC_CLASSES = ("ring", "cookie", "capsule", "dome", "hexcyl")
SYNTHETIC_DEFECTS = ("crack", "dent", "hole", "contamination", "bump_depth")
# the modality a synthetic defect shows in (data.py builds them so; tested)
MODALITY_OF = {"crack": "both", "dent": "both", "hole": "both", "contamination": "rgb", "bump_depth": "depth"}
