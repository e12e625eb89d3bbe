"""The method, setting and class names of paper 11, shared by the experiment (which builds the models), the config
checks run at parse time and the claims (which read the metrics) without importing torch."""

ECFR_METHOD = "ecfr"
SAME_MODAL = "same_modal"
# C1's null: the same-modal control fitted a second time, from another initialisation and batch order (training seed +
# NULL_SEED_OFFSET) on the same draw; the same comparison without the cross-modal mechanism
SAME_MODAL_NULL = "same_modal_b"
NULL_SEED_OFFSET = 1000
CFM = "cfm"
RECONSTRUCTION = (ECFR_METHOD, SAME_MODAL, SAME_MODAL_NULL)
METHODS = (*RECONSTRUCTION, CFM)
SETTINGS = ("unified", "per_class")
# the folder names the Eyecandies tools (ec-get) and M3DM's preprocessing give the categories
EYECANDIES_CLASSES = ("CandyCane", "ChocolateCookie", "ChocolatePraline", "Confetto", "GummyBear", "HazelnutTruffle",
                      "LicoriceSandwich", "Lollipop", "Marshmallow", "PeppermintCandy")  # fmt: skip
SYNTHETIC_CLASSES = ("ring", "cookie", "capsule", "dome", "hexcyl")
SYNTHETIC_DEFECTS = ("crack", "dent", "hole", "contamination", "bump_depth")
# the modality a synthetic defect shows in (data.py builds them so; tested)
MODALITY_OF = {"crack": "both", "dent": "both", "hole": "both", "contamination": "rgb", "bump_depth": "depth"}


def cross_modal(method: str) -> bool:
    """Whether a reconstruction method compares each stream with the *other* modality's teacher (ecfr) or with its
    own (same_modal and its refit, the null)."""
    return method not in (SAME_MODAL, SAME_MODAL_NULL)


def train_seed(method: str, seed: int) -> int:
    """The seed a run's network is initialised and its batches drawn from: the run's seed, or for the null's refit of
    the same-modal control that seed + NULL_SEED_OFFSET (another initialisation on the same draw)."""
    return seed + NULL_SEED_OFFSET if method == SAME_MODAL_NULL else seed
