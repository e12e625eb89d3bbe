"""Paper 03 (AnaDiffusion): the segmentation-conditioned LDM baseline (Seg. cLDM), which needs each subject's part
label map at inference: its conditioning, sampler, label-map edit and one training step."""

import numpy as np
import pytest
import torch

from neurips26.anadiffusion import diffusion as D
from neurips26.anadiffusion import model as M
from neurips26.anadiffusion import seg_cldm as S
from neurips26.anadiffusion.artifacts import load_seg_cldms, save_network

UNET = M.DENOISERS["smoke"]
SCHEDULE = D.NoiseSchedule(num_train_timesteps=50)
C, GRID, FACTOR, STEPS = 2, (4, 4, 4), 2, 3
IMAGE = tuple(s * FACTOR for s in GRID)


def label_maps(n=2, seed=0):
    """Label maps (n, 8, 8, 8) with every label present: left half LH, right half RH, a bottom slab CB, a random
    scatter of background."""
    g = np.random.default_rng(seed)
    maps = np.zeros((n, *IMAGE), dtype=np.uint8)
    maps[:, : IMAGE[0] // 2] = 1
    maps[:, IMAGE[0] // 2 :] = 2
    maps[:, :, :, :2] = 3
    maps[g.random(maps.shape) < 0.2] = 0
    return maps


def network():
    """A Seg. cLDM with random non-zero weights everywhere (MONAI zero-initialises the output convolution, which
    would make every output 0 and hide the conditioning)."""
    torch.manual_seed(0)
    net = S.build_seg_cldm(UNET, C)
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for p in net.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * 0.2)
    return net.eval()


def noise(seed=0, batch=2):
    return D.draw_sampling_noise((batch, C, *GRID), torch.Generator().manual_seed(seed))


def test_conditioning_is_label_fractions_on_the_latent_grid():
    maps = label_maps()
    cond = S.label_conditioning(maps, GRID, FACTOR)
    assert cond.shape == (2, S.N_LABELS, *GRID)
    torch.testing.assert_close(cond.sum(dim=1), torch.ones(2, *GRID))
    # the fraction of LH in latent voxel (0, 0, 3) is the fraction of label 1 in its 2x2x2 image block
    block = maps[1, 0:2, 0:2, 6:8]
    assert float(cond[1, 1, 0, 0, 3]) == pytest.approx(float((block == 1).mean()))
    assert float(cond[0, 2, 0].sum()) == 0.0  # no RH in the left half


def test_network_takes_the_latent_and_four_label_channels():
    net = network()
    out = net(torch.zeros(1, C + S.N_LABELS, *GRID), torch.tensor([3]))
    assert out.shape == (1, C, *GRID)
    with pytest.raises(RuntimeError):
        net(torch.zeros(1, C, *GRID), torch.tensor([3]))
    plain = M.build_denoiser(UNET, C).state_dict()  # the same network but for the input convolution's width
    shapes = {k: v.shape for k, v in net.state_dict().items()}
    assert shapes.keys() == plain.keys() and net.in_channels == C + S.N_LABELS
    assert shapes["conv_in.conv.weight"] == (UNET.channels[0], C + S.N_LABELS, 3, 3, 3)
    assert all(shapes[k] == v.shape for k, v in plain.items() if not k.startswith("conv_in."))


def test_wrong_shapes_and_unknown_labels_are_refused():
    maps = label_maps()
    with pytest.raises(ValueError, match="spatial shape"):
        S.label_conditioning(maps[:, :6], GRID, FACTOR)
    with pytest.raises(ValueError, match="one label map per subject"):
        S.label_conditioning(maps[0, 0], GRID, FACTOR)
    bad = maps.copy()
    bad[0, 1, 1, 1] = 7
    with pytest.raises(ValueError, match=r"unknown label\(s\) \[7\]"):
        S.label_conditioning(bad, GRID, FACTOR)
    with pytest.raises(ValueError, match="non-integer"):
        S.label_conditioning(maps.astype(np.float32) + 0.5, GRID, FACTOR)
    with pytest.raises(ValueError, match="batch"):  # three label maps for two noise samples
        S.sample_seg_cldm(network(), label_maps(3), FACTOR, noise(), SCHEDULE, STEPS)
    with pytest.raises(ValueError, match="spatial shape"):
        S.sample_seg_cldm(network(), label_maps(), 4, noise(), SCHEDULE, STEPS)


def test_sampling_is_deterministic_and_the_conditioning_changes_it():
    net, maps = network(), label_maps()
    a = S.sample_seg_cldm(net, maps, FACTOR, noise(), SCHEDULE, STEPS)
    b = S.sample_seg_cldm(net, maps, FACTOR, noise(), SCHEDULE, STEPS)
    assert a.shape == (2, C, *GRID) and bool(torch.isfinite(a).all())
    torch.testing.assert_close(a, b, rtol=0, atol=0)
    swapped = maps[:, ::-1].copy()  # LH and RH exchange sides
    c = S.sample_seg_cldm(net, swapped, FACTOR, noise(), SCHEDULE, STEPS)
    assert float((a - c).abs().max()) > 1e-3
    # one subject's conditioning serves every seed of a seed-batched noise (S, B, ...)
    seeded = D.draw_sampling_noise((2, 2, C, *GRID), torch.Generator().manual_seed(5))
    both = S.sample_seg_cldm(net, maps, FACTOR, seeded, SCHEDULE, STEPS)
    one = S.sample_seg_cldm(net, maps, FACTOR, D.SamplingNoise(seeded.start[1], seeded.injection[1]), SCHEDULE, STEPS)
    torch.testing.assert_close(both[1], one)


def test_edited_label_map_takes_the_donors_part_and_keeps_the_rest():
    recipient = torch.as_tensor(label_maps(seed=1)[:1]).long()
    donor = recipient.clone()
    donor[donor == 3] = 0
    donor[:, 1:7, 1:7, 1:4] = 3  # the donor's CB: another place, over the recipient's hemispheres
    edited = S.edit_label_maps(recipient, donor, "CB")
    inside_donor = donor == 3
    inside_recipient = recipient == 3
    assert bool((edited[inside_donor] == 3).all())
    outside = ~inside_donor & ~inside_recipient
    assert bool((edited[outside] == recipient[outside]).all())
    vacated = inside_recipient & ~inside_donor
    assert bool(vacated.any()) and bool((edited[vacated] == 0).all())
    with pytest.raises(ValueError, match="cannot edit part"):
        S.edit_label_maps(recipient, donor, "ventricles")


def test_edit_resamples_with_the_recipients_noise_and_refuses_self_donors():
    net, maps = network(), label_maps(3)
    torch.manual_seed(0)
    ae = M.build_autoencoder(M.AUTOENCODERS["smoke"]).eval()
    batch_noise = noise(batch=3)
    out = S.edit_seg_cldm(net, ae, maps, "LH", torch.tensor([2]), torch.tensor([0]), batch_noise, SCHEDULE, STEPS)
    assert out.volumes.shape == (1, 1, *IMAGE) and out.label_maps.shape == (1, *IMAGE)
    expected = S.sample_seg_cldm(net, out.label_maps, FACTOR, batch_noise.select(torch.tensor([2])), SCHEDULE, STEPS)
    torch.testing.assert_close(out.volumes, ae.decode(expected).clamp(-1, 1))
    with pytest.raises(ValueError, match="its own recipient"):
        S.edit_seg_cldm(net, ae, maps, "LH", torch.tensor([1]), torch.tensor([1]), batch_noise, SCHEDULE, STEPS)


def test_one_training_step_gives_finite_losses_and_changes_the_weights():
    torch.manual_seed(0)
    models = [S.build_seg_cldm(UNET, C)]
    before = [p.detach().clone() for p in models[0].parameters()]
    latents = torch.randn(2, C, *GRID, generator=torch.Generator().manual_seed(3))
    log = S.train_seg_cldm(models, latents, label_maps(), FACTOR, 1, 2, 1e-3, [0], SCHEDULE)
    assert list(log["step"]) == [1] and np.isfinite(log["loss"]).all()
    assert any(not torch.equal(a, b) for a, b in zip(before, models[0].parameters()))
    assert all(bool(torch.isfinite(p).all()) for p in models[0].parameters())
    with pytest.raises(ValueError, match="one per latent"):
        S.train_seg_cldm(models, latents, label_maps(3), FACTOR, 1, 2, 1e-3, [0], SCHEDULE)


def test_samples_take_one_scan_per_training_subject_permuted_and_the_stored_network_loads_back(tmp_path):
    subjects = ["a", "a", "a", "b", "c", "c"]  # ADNI-like: several scans of one subject
    scans = S.conditioning_scans(subjects, 3, seed=0)
    assert sorted(subjects[i] for i in scans) == ["a", "b", "c"]  # one scan per distinct subject
    assert S.conditioning_scans(subjects, 3, seed=0).tolist() == scans.tolist()  # deterministic in the seed
    orders = {tuple(subjects[i] for i in S.conditioning_scans(subjects, 3, seed=s)) for s in range(8)}
    assert len(orders) > 1  # the sampling seed permutes the subjects
    wrapped = S.conditioning_scans(subjects, 5, seed=0)
    assert wrapped[3:].tolist() == wrapped[:2].tolist()  # wraps round after the last subject
    with pytest.raises(ValueError, match="subject ids"):
        S.conditioning_scans([], 2, seed=0)
    named = [subjects[i] for i in wrapped]
    S.check_pair_subjects(named, [0, 1], [1, 2])
    with pytest.raises(ValueError, match="same subject"):  # indices differ, the subject is the same (wrap-round)
        S.check_pair_subjects(named, [0], [3])
    with pytest.raises(ValueError, match="not among the 5 samples"):
        S.check_pair_subjects(named, [0], [5])
    net = network()
    path = tmp_path / "seg_cldm.pt"
    save_network(path, "seg_cldm", "smoke", [3], [net.state_dict()], {"latent_channels": C, "factor": FACTOR})
    (loaded,) = load_seg_cldms(path, [3])
    x, t = torch.randn(1, C + S.N_LABELS, *GRID), torch.tensor([5])
    torch.testing.assert_close(loaded(x, t), net(x, t))
    with pytest.raises(ValueError, match="holds the seeds"):
        load_seg_cldms(path, [0])


def test_conditioning_response_is_zero_for_a_model_that_ignores_its_map_and_one_for_one_that_follows_it():
    from neurips26.anadiffusion.evaluation import conditioning_table

    own, other = np.zeros((2, 6, 6, 6), np.uint8), np.zeros((2, 6, 6, 6), np.uint8)
    own[:, 1:5, 1:5, 1:5], other[:, 1:5, 1:5, 2:6] = 1, 2  # two subjects' brains, shifted along z

    def brain_of(maps):  # a sample whose brain is exactly that map
        return np.where(maps > 0, 0.5, -1.0)

    follows = conditioning_table(0, brain_of(own), brain_of(other), own, other, -0.5, [0, 2], [1, 3])
    assert follows["response"].tolist() == [1.0, 1.0] and follows["recipient"].tolist() == [0, 2]
    assert (follows["disagreement_voxels"] == 32).all() and (follows["change"] > 0).all()
    ignores = conditioning_table(0, brain_of(own), brain_of(own), own, other, -0.5)  # the same sample twice
    assert ignores["response"].tolist() == [0.0, 0.0] and (ignores["change"] == 0).all()
    reversed_ = conditioning_table(1, brain_of(other), brain_of(own), own, other, -0.5)
    assert reversed_["response"].tolist() == [-1.0, -1.0]
    assert np.isnan(conditioning_table(0, brain_of(own), brain_of(own), own, own, -0.5)["response"]).all()
    with pytest.raises(ValueError, match="one shape"):
        conditioning_table(0, brain_of(own), brain_of(own)[:1], own, other, -0.5)
