"""Paper 03 (AnaDiffusion): the config as the rules read it, and every bad config refused when the workflow is parsed
(before any job), naming the key."""

import copy
from pathlib import Path

import pytest
import yaml

from neurips26.anadiffusion import experiment as E
from neurips26.anadiffusion import model as M
from neurips26.common.config import validate

ROOT = Path(__file__).resolve().parents[1]
CONFIG = yaml.safe_load((ROOT / "config" / "anadiffusion.yaml").read_text())
SCHEMA = yaml.safe_load((ROOT / "workflow" / "schemas" / "anadiffusion.schema.yaml").read_text())


def test_every_scale_passes_the_schema_and_the_parse_time_check():
    validate(CONFIG, SCHEMA, "config/anadiffusion.yaml")
    for scale in ("smoke", "quick", "paper"):
        E.check_config(CONFIG[scale])
    quick = CONFIG["quick"]
    assert E.injections(quick) == {"ana": (10, 1.0), "ana_r7": (7, 1.0), "ana_r15": (15, 1.0)}
    assert E.denoisers(quick) == ["cb", "hemisphere", "whole"] and len(quick["seeds"]) >= 3
    assert quick["sampling"]["samples"] == quick["data"]["eval"]  # equal counts for the Frechet distances


def test_paper_scale_runs_the_separate_hemisphere_ablation_and_the_seg_cldm_baseline():
    paper, quick = CONFIG["paper"], CONFIG["quick"]
    assert E.injection_layouts(paper) == {"ana_separate": "separate"} and E.injection_layouts(quick) == {}
    assert E.layouts(paper) == ["shared_side_cond", "separate"]
    # the shared CB model once, both layouts' hemisphere models, the whole-brain model last
    assert E.denoisers(paper) == ["cb", "hemisphere", "lh", "rh", "whole"]
    assert E.injections(paper)["ana_separate"] == E.injections(paper)["ana"]  # paired with ana but for the parts
    assert E.seg_cldm(paper) and not E.seg_cldm(quick) and not E.seg_cldm(CONFIG["smoke"])
    # the separate hemisphere models: half the steps each, as many updates together as the shared model
    steps = paper["denoiser"]["steps"]
    assert [E.denoiser_steps(paper["denoiser"], n) for n in ("hemisphere", "lh", "rh", "cb", "whole", "seg_cldm")] == [
        steps, steps // 2, steps // 2, steps, steps, steps]  # fmt: skip
    assert E.denoiser_steps({"steps": 1}, "lh") == 1
    # the jobs whose input records K1 needs: the controls at every scale, the baseline's where it runs
    assert E.record_jobs(quick) == ["sample", "edit", "evaluate"] and E.record_jobs(paper)[-1] == "seg_cldm"
    assert M.denoiser_routes("rh") == {"RH": M.PART_MODELS["separate"]["RH"]}
    assert set(M.denoiser_routes("hemisphere")) == {"LH", "RH"} and set(M.denoiser_routes("cb")) == {"CB"}
    with pytest.raises(ValueError, match="'whole' is not a part denoiser"):
        M.denoiser_routes("whole")


def test_the_parse_time_tables_agree_with_the_model_registry():
    for part_model, names in E.DENOISERS_OF.items():
        assert list(names) == M.denoiser_names(part_model)
    for size, (ae, unet) in E.SIZE_FACTORS.items():
        assert (M.AUTOENCODERS[size].factor, M.DENOISERS[size].factor) == (ae, unet)


def bad(edit):
    cfg = copy.deepcopy(CONFIG["quick"])
    edit(cfg)
    return cfg


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda c: c["injections"]["ana"].update(r_inj=26), r"injections.ana.r_inj = 26 .*\[1, 25\]"),
        (lambda c: c["injections"]["ana_r7"].update(r_inj=0), r"injections.ana_r7.r_inj = 0"),
        (lambda c: c["injections"]["ana"].update(alpha=1.5), r"injections.ana.alpha = 1.5 must lie in \[0, 1\]"),
        (lambda c: c["methods"].append("ana_r3"), r"methods \['ana_r3'\] are unknown"),
        (lambda c: c["methods"].append("ldm"), r"methods repeat"),
        (lambda c: c["data"].update(shape=[24, 30, 24]), r"sides \[30\] are not multiples of 4"),
        (lambda c: c["edit"]["pairs"].append([5, 5]), r"edit.pairs\[8\]: donor 5 is its own recipient"),
        (lambda c: c["edit"]["pairs"].append([0, 32]), r"donor 32 is not among the 32 samples"),
        (lambda c: c["edit"].update(methods=["ldm"]), r"ldm has no part assets"),
        (lambda c: c["sampling"].update(samples=16), r"sampling.samples = 16 differs from data.eval = 32"),
        (lambda c: c["seeds"].append(0), r"seeds repeat"),
        (lambda c: c["injections"]["ana"].update(part_model="joint"), r"injections.ana.part_model = 'joint'"),
        (lambda c: c["injections"]["ana"].update(part_model="separate"), r"edit.methods \['ana'\]: .*another part"),
        (lambda c: c["methods"].append("seg_cldm"), r"seg_cldm is the segmentation-conditioned baseline"),
    ],
)
def test_bad_configs_are_refused_naming_the_key(edit, message):
    with pytest.raises(ValueError, match=message):
        E.check_config(bad(edit))


def test_paper_scale_needs_grid_sides_the_paper_networks_can_halve_four_times():
    cfg = copy.deepcopy(CONFIG["paper"])
    cfg["data"]["shape"] = [120, 128, 128]
    with pytest.raises(ValueError, match=r"\[120\] are not multiples of 16"):
        E.check_config(cfg)


def test_the_support_multiple_is_what_each_scales_networks_halve():
    assert {scale: E.support_multiple(CONFIG[scale]) for scale in ("smoke", "quick", "paper")} == {
        "smoke": 4, "quick": 4, "paper": 16}  # fmt: skip
    for scale in ("smoke", "quick", "paper"):
        ae, unet = M.AUTOENCODERS[CONFIG[scale]["autoencoder"]["size"]], M.DENOISERS[CONFIG[scale]["denoiser"]["size"]]
        assert E.support_multiple(CONFIG[scale]) == ae.factor * unet.factor
    with pytest.raises(ValueError, match="denoiser.size 'huge'"):
        E.support_multiple({**CONFIG["paper"], "denoiser": {"size": "huge"}})


def test_the_paper_blocks_supports_are_accepted_by_the_paper_networks():
    """At the paper's 1.5 mm on 128^3, supports rounded to multiples of 4 (LH 60 x 128 x 104) are refused by the
    paper-size networks (x4 autoencoder, 3-level U-Net: 16); the template step rounds them to the config's multiple."""
    from neurips26.anadiffusion.template import build_template

    paper = CONFIG["paper"]
    grid = paper["data"]
    template = build_template(grid["voxel_mm"], tuple(grid["shape"]), grid["support_margin_mm"], grid["seam_mm"],
                              grid["ventricle_margin_mm"], E.support_multiple(paper))  # fmt: skip
    ae, unet = M.AUTOENCODERS[paper["autoencoder"]["size"]], M.DENOISERS[paper["denoiser"]["size"]]
    shapes = M.part_latent_shapes({p: s.shape for p, s in template.supports.items()}, ae, unet)
    assert shapes["LH"] == shapes["RH"] and all(side % unet.factor == 0 for shape in shapes.values() for side in shape)
    assert M.latent_shape(template.shape, ae, unet, where="grid") == (32, 32, 32)
    for part, support in template.supports.items():  # each support still holds its part
        outside = template.part_mask(part).copy()
        outside[support.slices] = False
        assert not outside.any(), part


@pytest.mark.parametrize("factor", [1, 2])
def test_the_rehearsal_block_keeps_the_paper_shapes_and_cuts_budgets(factor):
    from neurips26.common.config import derived_rehearsal

    block = derived_rehearsal("anadiffusion", CONFIG, SCHEMA, factor)
    E.check_config(block)
    paper = CONFIG["paper"]
    for key in ("schedule", "methods", "injections", "evaluate"):
        assert block[key] == paper[key] or key == "evaluate" and block[key]["bootstrap"] == 10, key
    assert block["data"]["shape"] == [128, 128, 128] and block["autoencoder"]["size"] == "paper"
    assert block["autoencoder"]["batch"] == factor and block["denoiser"]["steps"] == 2
    assert block["seeds"] == [max(paper["seeds"])] and block["edit"]["pairs"] == paper["edit"]["pairs"][:1]
    assert block["data"]["adni_root"] and block["data"]["adni_manifest"]  # fixture paths replace the user's
