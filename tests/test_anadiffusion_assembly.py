"""Paper 03 (AnaDiffusion): the scaffold at fixed template supports with open boundaries, the right hemisphere
flipped back, injection through refine, and paired localized editing; only template masks enter assembly."""

import numpy as np
import pytest
import torch

from neurips26.anadiffusion import assembly as A
from neurips26.anadiffusion import diffusion as D
from neurips26.anadiffusion import model as M
from neurips26.anadiffusion.template import Support

GRID = (24, 28, 24)
SUPPORTS = {  # the hemispheres' boxes overlap across the midline (x 10-13), as the template's do
    "LH": Support((0, 0, 4), (14, 28, 20)),
    "RH": Support((10, 0, 4), (14, 28, 20), mirrored=True),
    "CB": Support((8, 0, 0), (8, 8, 8)),
}
SCHEDULE, STEPS = D.NoiseSchedule(num_train_timesteps=100), 8


def template_layout(open_band=True):
    """An ellipsoid brain split at the midline, a cerebellum box, and an open band of one voxel on each side of the
    midline (population-level masks, as a template would give)."""
    x, y, z = np.meshgrid(*(np.arange(n) for n in GRID), indexing="ij")
    brain = ((x - 11.5) / 11) ** 2 + ((y - 13.5) / 13) ** 2 + ((z - 13) / 10) ** 2 <= 1
    cb = np.zeros(GRID, bool)
    cb[SUPPORTS["CB"].slices] = True
    cb &= brain
    lh = brain & (x < 12) & ~cb
    rh = brain & (x >= 12) & ~cb
    band = (x >= 11) & (x <= 12) if open_band else None
    return A.TemplateLayout(GRID, SUPPORTS, {"LH": lh, "RH": rh, "CB": cb}, open=band)


def part_images(batch=2, seed=0):
    g = torch.Generator().manual_seed(seed)
    return {p: torch.rand((batch, 1, *s.shape), generator=g) for p, s in SUPPORTS.items()}


def test_scaffold_places_parts_at_their_supports_and_leaves_the_rest_open():
    layout, parts = template_layout(), part_images()
    scaffold = A.assemble_scaffold(parts, layout)
    assert scaffold.shape == (2, 1, *GRID)
    filled = torch.zeros(GRID, dtype=torch.bool)
    for part, support in SUPPORTS.items():
        where = layout.placement[part]
        filled |= where
        expected = parts[part].flip(-3) if part == "RH" else parts[part]  # RH generated mirrored, flipped back
        canvas = torch.full((2, 1, *GRID), -1.0)
        canvas[(..., *support.slices)] = expected
        np.testing.assert_array_equal(canvas.numpy(), support.place(parts[part].numpy(), GRID))  # template's twin
        assert torch.equal(scaffold[..., where], canvas[..., where])
    assert bool((scaffold[..., ~filled] == A.BACKGROUND).all())  # background, CSF and boundaries stay open
    assert not bool(layout.placement["LH"][11].any()) and not bool(layout.placement["RH"][12].any())  # the band
    # a voxel by hand: x = 22 is column 12 of the RH support, which the mirrored asset holds at column 14 - 1 - 12
    vox = (slice(None), 0, 22, 14, 13)
    assert bool(layout.placement["RH"][22, 14, 13])
    assert torch.equal(scaffold[vox], parts["RH"][:, 0, 1, 14, 9])
    # x = 10 lies in both hemispheres' boxes: the template masks give it to LH (column 10 of LH's unmirrored box)
    assert bool(layout.placement["LH"][10, 14, 13]) and not bool(layout.placement["RH"][10, 14, 13])
    assert torch.equal(scaffold[(slice(None), 0, 10, 14, 13)], parts["LH"][:, 0, 10, 14, 9])


def test_layout_from_the_template_uses_its_supports_and_part_masks():
    from neurips26.anadiffusion.template import build_template

    template = build_template(12.0, (16, 20, 16))
    layout = A.TemplateLayout.from_template(template)
    assert layout.supports == template.supports and layout.shape == template.shape
    for part in template.supports:
        np.testing.assert_array_equal(layout.placement[part].numpy(), template.part_mask(part))
    # the pipeline's layout (sample and edit jobs): the template's seam band and CSF (ventricles) stay open
    pipeline = A.pipeline_layout(template)
    open_ = template.seam | template.ventricles
    assert open_.any() and (open_ & template.brain).sum() == open_.sum()
    np.testing.assert_array_equal(pipeline.open, open_)
    for part in template.supports:
        np.testing.assert_array_equal(pipeline.placement[part].numpy(), template.part_mask(part) & ~open_)
    parts = {p: torch.ones(1, 1, *s.shape) for p, s in template.supports.items()}
    scaffold = A.assemble_scaffold(parts, pipeline)[0, 0].numpy()
    assert (scaffold[open_] == A.BACKGROUND).all() and (scaffold[(template.parts > 0) & ~open_] == 1).all()
    volumes = torch.rand(2, 1, *template.shape)
    for support in template.supports.values():  # the torch crop is the template's numpy crop
        np.testing.assert_array_equal(A.crop(volumes, support).numpy(), support.crop(volumes.numpy()))


def test_layout_takes_population_masks_only_and_refuses_bad_ones():
    layout = template_layout()
    masks = {p: layout.placement[p].numpy() for p in SUPPORTS}
    per_subject = {p: np.stack([m, m]) for p, m in masks.items()}
    with pytest.raises(ValueError, match="never one per subject"):
        A.TemplateLayout(GRID, SUPPORTS, per_subject)
    overlapping = {**masks, "CB": masks["CB"] | masks["LH"] & (np.arange(24)[:, None, None] >= 8)}
    with pytest.raises(ValueError, match="outside its support|overlaps"):
        A.TemplateLayout(GRID, SUPPORTS, overlapping)
    shifted = {**masks, "CB": np.roll(masks["CB"], 10, axis=1)}
    with pytest.raises(ValueError, match="outside its support"):
        A.TemplateLayout(GRID, SUPPORTS, shifted)
    with pytest.raises(ValueError, match="axis X"):
        A.TemplateLayout(GRID, {**SUPPORTS, "CB": Support((20, 0, 0), (10, 8, 8))}, masks)
    with pytest.raises(ValueError, match="template.Support"):
        A.TemplateLayout(GRID, {**SUPPORTS, "CB": (slice(8, 16), slice(0, 8), slice(0, 8))}, masks)
    with pytest.raises(ValueError, match="boolean"):
        A.TemplateLayout(GRID, SUPPORTS, {**masks, "LH": masks["LH"].astype(np.uint8)})
    with pytest.raises(ValueError, match="expected"):
        A.assemble_scaffold({**part_images(), "CB": torch.zeros(2, 1, 8, 8, 4)}, layout)


def test_training_crops_keep_the_subjects_part_on_background_and_mirror_like_assembly():
    volumes = torch.rand(2, 1, *GRID)
    masks = torch.zeros_like(volumes, dtype=torch.bool)
    masks[..., 14:20, :, :] = True
    crop = A.part_training_crops(volumes, masks, SUPPORTS["RH"])
    assert crop.shape == (2, 1, 14, 28, 20)
    unflipped = crop.flip(-3)  # x = 4..9 of the RH support hold the subject's part, the rest is background
    torch.testing.assert_close(unflipped[..., 4:10, :, :], volumes[..., 14:20, :, 4:24])
    assert bool((unflipped[..., :4, :, :] == -1).all()) and bool((unflipped[..., 10:, :, :] == -1).all())
    with pytest.raises(ValueError, match="subject_masks"):
        A.part_training_crops(volumes, masks.float(), SUPPORTS["RH"])


def test_swap_takes_the_donors_part_and_refuses_a_donor_equal_to_its_recipient():
    parts = part_images(batch=4)
    swapped = A.swap_part(parts, "CB", torch.tensor([0, 3]), torch.tensor([2, 1]))
    assert torch.equal(swapped["CB"], parts["CB"][[2, 1]]) and torch.equal(swapped["LH"], parts["LH"][[0, 3]])
    with pytest.raises(ValueError, match="own recipient"):
        A.swap_part(parts, "LH", torch.tensor([0, 1]), torch.tensor([2, 1]))
    with pytest.raises(ValueError, match="outside"):
        A.swap_part(parts, "LH", torch.tensor([0]), torch.tensor([4]))
    with pytest.raises(ValueError, match="'XX'"):
        A.swap_part(parts, "XX", torch.tensor([0]), torch.tensor([1]))


class Recorder(torch.nn.Module):
    """A stand-in denoiser that records its class labels and predicts a fixed function of z."""

    def __init__(self):
        super().__init__()
        self.w = torch.nn.Parameter(torch.tensor(0.2))
        self.labels = []

    def forward(self, z, t, class_labels=None):
        self.labels.append(None if class_labels is None else class_labels.tolist())
        return self.w * torch.tanh(z)


@pytest.fixture(scope="module")
def autoencoder():
    torch.manual_seed(0)
    return M.build_autoencoder(M.AUTOENCODERS["smoke"]).eval()


def test_generate_parts_routes_each_part_to_its_model_and_side(autoencoder):
    nets = {"hemisphere": Recorder(), "cb": Recorder()}
    c = M.AUTOENCODERS["smoke"].latent_channels
    noise = {
        p: D.draw_sampling_noise((2, c, *(n // 2 for n in s.shape)), torch.Generator().manual_seed(i))
        for i, (p, s) in enumerate(SUPPORTS.items())
    }
    assets = A.generate_parts(nets, autoencoder, "shared_side_cond", noise, SCHEDULE, STEPS)
    assert nets["hemisphere"].labels == [[0, 0]] * STEPS + [[1, 1]] * STEPS  # LH left, then RH right
    assert nets["cb"].labels == [None] * STEPS
    for part, support in SUPPORTS.items():
        assert assets.images[part].shape == (2, 1, *support.shape)
        torch.testing.assert_close(assets.images[part], autoencoder.decode(assets.latents[part]))


def test_refine_without_injection_is_the_monolithic_sample_and_an_edit_is_paired(autoencoder):
    layout, whole = template_layout(), Recorder()
    latent = (M.AUTOENCODERS["smoke"].latent_channels, 12, 14, 12)
    noise = D.draw_sampling_noise((3, *latent), torch.Generator().manual_seed(5))
    parts = part_images(batch=3)
    parts["LH"][1] = parts["LH"][0]  # sample 1's left hemisphere is sample 0's
    scaffold = A.assemble_scaffold(parts, layout)
    with torch.no_grad():
        mono = autoencoder.decode(D.ddim_sample(M.as_denoise(whole), noise, SCHEDULE, STEPS))
        off = A.refine(whole, autoencoder, scaffold, noise, SCHEDULE, STEPS, r_inj=4, alpha=0.0)
        ours = A.refine(whole, autoencoder, scaffold, noise, SCHEDULE, STEPS, r_inj=4, alpha=1.0)
        assets = A.PartAssets(latents={}, images=parts)

        def edit_from(donor):
            args = (layout, whole, autoencoder, noise, SCHEDULE, STEPS)
            return A.edit(assets, "LH", torch.tensor([0]), torch.tensor([donor]), *args, r_inj=4)

        # recipient 0 takes donor 1's LH, which equals its own: the edit reproduces sample 0 (same noise)
        same, changed = edit_from(1), edit_from(2)
    assert torch.equal(off, mono)
    assert (ours - mono).abs().mean() > 1e-3
    assert torch.equal(same.scaffold, scaffold[[0]])
    torch.testing.assert_close(same.volumes, ours[[0]], rtol=0, atol=1e-5)  # batch 1 against 3: conv rounding only
    lh = layout.placement["LH"]
    assert not torch.equal(changed.scaffold[..., lh], scaffold[[0]][..., lh])
    assert torch.equal(changed.scaffold[..., ~lh], scaffold[[0]][..., ~lh])  # only the edited part's voxels move
    with pytest.raises(ValueError, match="r_inj"):
        A.refine(whole, autoencoder, scaffold, noise, SCHEDULE, STEPS, r_inj=STEPS + 1)


def test_sample_methods_share_one_noise_ldm_is_alpha_zero_and_paste_is_the_scaffold(autoencoder):
    layout = template_layout()
    nets = {"hemisphere": Recorder(), "cb": Recorder(), "whole": Recorder()}
    c = M.AUTOENCODERS["smoke"].latent_channels
    part_noise = {
        p: D.draw_sampling_noise((2, c, *(n // 2 for n in s.shape)), torch.Generator().manual_seed(i))
        for i, (p, s) in enumerate(SUPPORTS.items())
    }
    whole_noise = D.draw_sampling_noise((2, c, 12, 14, 12), torch.Generator().manual_seed(9))
    injections = {"ana": (4, 1.0), "off": (4, 0.0)}
    args = (nets, autoencoder, layout, "shared_side_cond", part_noise, whole_noise, SCHEDULE, STEPS)
    assets, volumes = A.sample_methods(*args, injections)
    scaffold = A.assemble_scaffold(assets.images, layout)
    assert set(volumes) == {"ldm", "paste", "ae_roundtrip", "ana", "off"}
    torch.testing.assert_close(volumes["paste"], scaffold.clamp(-1, 1))
    # the refinement's null: the scaffold through the autoencoder, no diffusion
    torch.testing.assert_close(volumes["ae_roundtrip"], autoencoder.decode(autoencoder.encode(scaffold)).clamp(-1, 1))
    assert not torch.allclose(volumes["ae_roundtrip"], volumes["ana"])
    torch.testing.assert_close(volumes["off"], volumes["ldm"])  # alpha 0 is the monolithic LDM, same noise
    ours = A.refine(nets["whole"], autoencoder, scaffold, whole_noise, SCHEDULE, STEPS, r_inj=4, alpha=1.0)
    torch.testing.assert_close(volumes["ana"], ours.clamp(-1, 1))
    assert all(float(v.abs().max()) <= 1.0 for v in volumes.values())
    with pytest.raises(ValueError, match="injection 'bad'.*r_inj"):
        A.sample_methods(*args, {"bad": (STEPS + 1, 1.0)})
    for reserved in ("paste", "ae_roundtrip"):
        with pytest.raises(ValueError, match="reserved"):
            A.sample_methods(*args, {reserved: (4, 1.0)})


def test_an_injection_of_another_part_layout_refines_that_layouts_assets_from_the_same_noise(autoencoder):
    """Table 2's ablation: ana_separate differs from ana only by its part models (one per hemisphere)."""
    layout = template_layout()
    nets = {"hemisphere": Recorder(), "cb": Recorder(), "whole": Recorder(), "lh": Recorder(), "rh": Recorder()}
    with torch.no_grad():
        nets["lh"].w.fill_(0.6)
        nets["rh"].w.fill_(-0.3)
    c = M.AUTOENCODERS["smoke"].latent_channels
    part_noise = {
        p: D.draw_sampling_noise((2, c, *(n // 2 for n in s.shape)), torch.Generator().manual_seed(i))
        for i, (p, s) in enumerate(SUPPORTS.items())
    }
    whole_noise = D.draw_sampling_noise((2, c, 12, 14, 12), torch.Generator().manual_seed(9))
    args = (nets, autoencoder, layout, "shared_side_cond", part_noise, whole_noise, SCHEDULE, STEPS)
    assets, volumes = A.sample_methods(*args, {"ana": (4, 1.0), "sep": (4, 1.0)}, {"sep": "separate"})
    separate = A.generate_parts(nets, autoencoder, "separate", part_noise, SCHEDULE, STEPS)
    scaffold = A.assemble_scaffold(separate.images, layout)
    expected = A.refine(nets["whole"], autoencoder, scaffold, whole_noise, SCHEDULE, STEPS, r_inj=4, alpha=1.0)
    torch.testing.assert_close(volumes["sep"], expected.clamp(-1, 1))
    assert not torch.allclose(volumes["sep"], volumes["ana"])
    torch.testing.assert_close(assets.images["CB"], separate.images["CB"])  # the one CB model, the same noise
    assert not torch.allclose(assets.images["LH"], separate.images["LH"])  # the returned assets are the shared ones
    assert nets["lh"].labels and all(label is None for label in nets["lh"].labels)  # unconditional per hemisphere
    with pytest.raises(ValueError, match=r"names \['other'\], not among the injections"):
        A.sample_methods(*args, {"ana": (4, 1.0)}, {"other": "separate"})
