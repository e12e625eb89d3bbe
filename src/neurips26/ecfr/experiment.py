"""Paper 11's config at one scale, read as the rules need it: the runs (``{method}_{setting}_s{seed}`` per
dataset), the models they build, how a run is fitted (one unified model, or one model per class), and the checks the
schema cannot express (run when the workflow is parsed, so this module imports no torch at the top).

Methods: ``ecfr`` (the paper's cross-modal reconstruction), ``same_modal`` (the same network, each stream
reconstructing its own modality: the identical-shortcut control of equal capacity) and ``cfm`` (crossmodal feature
mapping by per-pixel MLPs, Costanzino et al. 2024). Settings: ``unified`` (one model on the normal images of every
class, the paper's multi-class setting) and ``per_class`` (one model per class). A per-class model's budget is the
config's ``train.per_class``: ``steps`` trains each per-class model as many steps as the unified model (equal steps
per model, so the per-class set costs as many times the unified model's compute as there are classes), ``epochs``
as many epochs (each takes its class's share of the unified model's steps: equal total compute, the reference's 500
epochs for every model).
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from .names import CFM, METHODS, RECONSTRUCTION, SAME_MODAL, SETTINGS, cross_modal, train_seed

__all__ = ["build_model", "check_config", "class_steps", "fit_run", "model_config", "null_methods", "per_class_seeds",
           "runs", "score_run"]  # fmt: skip


def null_methods(cfg: dict) -> list[str]:
    """The runs of C1's null (comparisons.same_modal_null: the same-modal control refitted from another
    initialisation), unified only; none where the config names none."""
    null = cfg["comparisons"].get("same_modal_null")
    return [null] if null else []


def per_class_seeds(cfg: dict) -> list[int]:
    """The seeds whose per-class models are fitted (per_class_seeds, default: every seed): a per-class run costs as
    many unified models as there are classes, so quick fits them for a subset of the seeds."""
    return list(cfg.get("per_class_seeds", cfg["seeds"]))


def runs(cfg: dict) -> list[tuple[str, str, str, int]]:
    """Every trained run of a scale: (dataset, method, setting, seed)."""
    return [
        (d, m, setting, s)
        for d in cfg["datasets"]
        for setting in SETTINGS
        for m in ([*cfg["methods"], *null_methods(cfg)] if setting == "unified" else cfg["per_class_methods"])
        for s in (cfg["seeds"] if setting == "unified" else per_class_seeds(cfg))
    ]


def check_config(cfg: dict) -> None:
    """What the schema cannot say: repeated seeds or methods, per-class methods that are not compared, a teacher and
    decoder whose widths do not mirror, image sizes the networks' strides do not divide, classes and defects a data
    job does not know, a comparison that names nothing. These are also every refusal of the jobs' networks
    (``ECFRConfig`` built into ``ECFR``: mirrored, halving widths, heads dividing them, square agent counts), so
    that a block a job would refuse is refused when the workflow is parsed."""
    for key in ("seeds", "methods", "per_class_methods", "per_class_seeds"):
        if len(set(cfg.get(key, []))) != len(cfg.get(key, [])):
            raise ValueError(f"{key} repeat: {cfg[key]}")
    extra = [s for s in per_class_seeds(cfg) if s not in cfg["seeds"]]
    if extra:
        raise ValueError(f"per_class_seeds {extra} are not among the seeds {cfg['seeds']}")
    extra = [m for m in cfg["per_class_methods"] if m not in cfg["methods"]]
    if extra:
        raise ValueError(f"per_class_methods {extra} are not among the methods {cfg['methods']}")
    _check_networks(cfg["teacher"], cfg["model"])
    for name, d in cfg["datasets"].items():
        if d["size"] % 32:
            raise ValueError(f"dataset {name}: size {d['size']} is not a multiple of 32 (the bottleneck's stride)")
        classes = d.get("classes") or []
        if len(set(classes)) != len(classes):
            raise ValueError(f"dataset {name}: classes repeat: {classes}")
        if d["source"] == "synthetic":
            from .names import SYNTHETIC_CLASSES, SYNTHETIC_DEFECTS

            unknown = [c for c in classes if c not in SYNTHETIC_CLASSES]
            if unknown:
                raise ValueError(f"dataset {name}: unknown classes {unknown}; known: {list(SYNTHETIC_CLASSES)}")
            unknown = [x for x in d["defects"] if x not in SYNTHETIC_DEFECTS]
            if unknown:
                raise ValueError(f"dataset {name}: unknown defects {unknown}; known: {list(SYNTHETIC_DEFECTS)}")
        else:  # the data job's reader refuses classes its dataset does not have
            from .real import EYECANDIES_CLASSES, MVTEC3D_CLASSES

            known = {"mvtec3d": MVTEC3D_CLASSES, "eyecandies": EYECANDIES_CLASSES}[d["source"]]
            unknown = [c for c in classes if c not in known]
            if unknown:
                raise ValueError(f"dataset {name}: unknown {d['source']} classes {unknown}; known: {list(known)}")
        if d["source"] == "synthetic":
            if d["train_per_class"] < 1:
                raise ValueError(f"dataset {name}: every class needs normal training images, got train_per_class 0")
    comp = cfg["comparisons"]
    if comp["primary"] not in cfg["datasets"]:
        raise ValueError(f"comparisons.primary {comp['primary']!r} is not a dataset: {sorted(cfg['datasets'])}")
    primary = cfg["datasets"][comp["primary"]]
    if primary["source"] == "synthetic":
        from .names import MODALITY_OF

        expected = {d: MODALITY_OF[d] for d in primary["defects"] if MODALITY_OF[d] != "both"}
        if comp["single_modality"] != expected:
            raise ValueError(f"comparisons.single_modality {comp['single_modality']} must name the primary synthetic "
                             f"set's defects visible in one modality: {expected}")  # fmt: skip
    for key in ("proposed", "same_modal", "mapping"):
        if comp[key] not in cfg["methods"]:
            raise ValueError(f"comparisons.{key} {comp[key]!r} is not among the methods {cfg['methods']}")
    if null_methods(cfg) and comp["same_modal"] != SAME_MODAL:
        raise ValueError(f"comparisons.same_modal_null refits {SAME_MODAL!r}, but comparisons.same_modal is "
                         f"{comp['same_modal']!r}")  # fmt: skip
    if "tuning" in cfg:
        _check_tuning(cfg)


def _check_networks(teacher: dict, model: dict) -> None:
    if tuple(reversed(model["decoder"][1:])) != tuple(teacher["widths"]):
        raise ValueError(
            f"model.decoder stages 1-3 {model['decoder'][1:]} must mirror teacher.widths {teacher['widths']}"
        )
    for a, b in zip(model["decoder"], model["decoder"][1:]):
        if a != 2 * b:
            raise ValueError(f"model.decoder widths must halve from stage to stage, got {model['decoder']}")
    for d, h in zip(model["decoder"], model["heads"]):
        if d % h:
            raise ValueError(f"model.decoder width {d} is not a multiple of its {h} heads")
    for a in model["agents"]:
        if round(a**0.5) ** 2 != a:
            raise ValueError(f"model.agents must be squares (agent tokens pooled to a square), got {model['agents']}")


def _check_tuning(cfg: dict) -> None:
    """The tuning pilot (neurips26.ecfr.tuning) runs on the primary synthetic set drawn at its own data seed, with its
    own training seed: neither may be one that a claim scores; every candidate's networks must be buildable."""
    from .tuning import candidate_config, candidates

    tuning, primary = cfg["tuning"], cfg["datasets"][cfg["comparisons"]["primary"]]
    if primary["source"] != "synthetic":
        raise ValueError(f"tuning runs on a synthetic primary dataset, not {primary['source']!r}")
    scored = sorted(primary["data_seed"] + s for s in cfg["seeds"])
    if tuning["data_seed"] in scored:
        raise ValueError(f"tuning.data_seed {tuning['data_seed']} is the data seed of a scored draw "
                         f"(data_seed + seed: {scored})")  # fmt: skip
    if tuning["seed"] in cfg["seeds"]:
        raise ValueError(f"tuning.seed {tuning['seed']} is a scored seed {cfg['seeds']}")
    for candidate in candidates(tuning):
        run = candidate_config(cfg, candidate)
        try:
            _check_networks(run["teacher"], run["model"])
        except ValueError as error:
            raise ValueError(f"tuning.widths {list(candidate.widths)}: {error}") from None


def model_config(method: str, teacher: dict, model: dict, size: int, seed: int):
    from .model import ECFRConfig

    return ECFRConfig(
        backbone=tuple(teacher["widths"]), backbone_blocks=tuple(teacher["blocks"]), decoder=tuple(model["decoder"]),
        depths=tuple(model["depths"]), heads=tuple(model["heads"]), agents=tuple(model["agents"]),
        bottleneck_blocks=model["bottleneck_blocks"], drop_path=model["drop_path"], image_size=size,
        cross=cross_modal(method), seed=seed,
    )  # fmt: skip


def build_model(method: str, teacher: dict, model: dict, cfm: dict, size: int, seed: int, teacher_state=None):
    """A run's network, its trained parts initialised from ``seed``, its teacher loaded from ``teacher_state``."""
    if method in RECONSTRUCTION:
        from .model import ECFR

        net = ECFR(model_config(method, teacher, model, size, seed))
    elif method == CFM:
        from .cfm import CFM as CFMNet

        net = CFMNet(tuple(teacher["widths"]), cfm["hidden"], seed, tuple(teacher["blocks"]))
    else:
        raise ValueError(f"unknown method {method!r}; known: {list(METHODS)}")
    if teacher_state is not None:
        net.teacher.load_state_dict(teacher_state)
    return net


def class_steps(steps: int, n_class: int, n_total: int, budget: str) -> int:
    """A per-class model's steps under ``budget`` (the config's train.per_class): ``steps``, the unified model's
    steps (equal steps per model); ``epochs``, the unified model's steps times the class's share of the training
    images (equal epochs, equal total compute), at least 1."""
    if budget == "steps":
        return steps
    if budget == "epochs":
        return max(1, round(steps * n_class / n_total))
    raise ValueError(f"unknown per-class budget {budget!r}; known: ['steps', 'epochs']")


def fit_run(method: str, setting: str, seed: int, rgb, depth, classes: np.ndarray, cfg: dict, teacher_state,
            checkpoint: Callable[[str], object] | None = None, log=None) -> tuple[dict, list[dict]]:  # fmt: skip
    """Train a run on prepared normal images, on the job's device: ``{group: state_dict}`` (group "all" when unified,
    else the class; tensors on the CPU) and the training rows (group, step, loss, lr). ``checkpoint(group)`` gives
    each fit's loop settings."""
    from . import cfm as cfm_training
    from . import training

    size = rgb.shape[-1]
    groups = ["all"] if setting == "unified" else list(dict.fromkeys(classes.tolist()))
    states, rows = {}, []
    for group in groups:
        idx = np.arange(len(classes)) if group == "all" else np.flatnonzero(classes == group)
        if len(idx) == 0:
            raise ValueError(f"class {group!r} has no normal training images")
        train = cfg["train"]
        steps = train["steps"] if group == "all" else class_steps(train["steps"], len(idx), len(classes),
                                                                  train["per_class"])  # fmt: skip
        net = build_model(method, cfg["teacher"], cfg["model"], cfg["cfm"], size, train_seed(method, seed),
                          teacher_state)  # fmt: skip
        settings = checkpoint(group) if checkpoint else None
        if log:
            log(f"{method} {setting} seed {seed}: {group}, {len(idx)} images, {steps} steps")
        if method == CFM:
            fitted = cfm_training.train_cfm(net, rgb[idx], depth[idx], steps, cfg["train"]["batch"], cfg["cfm"]["lr"],
                                            seed, settings, log)  # fmt: skip
        else:
            fitted = training.train(net, rgb[idx], depth[idx], steps, train["batch"], train["lr"],
                                    cross=cross_modal(method), seed=seed, weight_decay=train["weight_decay"],
                                    decay_at=train["decay_at"], loop_settings=settings, log=log)  # fmt: skip
        rows += [{"group": group, **r} for r in fitted]
        # saved from the CPU, so that the scoring job loads them on any machine
        states[group] = {k: v.detach().cpu() for k, v in net.state_dict().items() if not k.startswith("teacher.")}
    return states, rows


def score_run(method: str, states: dict, rgb, depth, classes: np.ndarray, cfg: dict, teacher_state,
              sigma: float) -> np.ndarray:  # fmt: skip
    """(N, H, W) anomaly maps of prepared test images, each scored by its group's model (per class: its class's), on
    the job's device."""
    from . import cfm as cfm_training
    from . import training

    size = rgb.shape[-1]
    maps = np.zeros((len(rgb), size, size), dtype=np.float32)
    for group, state in states.items():
        idx = np.arange(len(classes)) if group == "all" else np.flatnonzero(classes == group)
        if len(idx) == 0:
            continue
        net = build_model(method, cfg["teacher"], cfg["model"], cfg["cfm"], size, 0, teacher_state)
        result = net.load_state_dict(state, strict=False)  # the saved states leave out the frozen teacher
        untrained = [k for k in result.missing_keys if not k.startswith("teacher.")]
        if untrained or result.unexpected_keys:
            raise ValueError(f"the {method} model of {group!r} does not match its network: missing {untrained}, "
                             f"unexpected {result.unexpected_keys}")  # fmt: skip
        if method == CFM:
            maps[idx] = cfm_training.cfm_maps(net, rgb[idx], depth[idx], sigma)
        else:
            maps[idx] = training.anomaly_maps(net, rgb[idx], depth[idx], cross_modal(method), sigma)
    missing = sorted(set(classes.tolist()) - set(states) - {"all"}) if "all" not in states else []
    if missing:
        raise ValueError(f"no per-class model for test classes {missing}")
    return maps
