"""Paper-scale ADNI input: the user's manifest check, the subject split and the preprocessing chain (paper 03).

N4 and the affine registration need antspyx and skull stripping needs hd-bet (with its downloaded weights); both are
in the ADNI rule's own env (envs/adni.yaml), not in the development environment, so their tests run only where
antspyx is importable, and the chain is tested with those steps replaced by stand-ins."""

import hashlib
import sys

import nibabel as nib
import numpy as np
import pytest

from neurips26.anadiffusion import adni
from neurips26.anadiffusion.adni import AdniDataError, check_manifest, read_manifest, resample_to_grid, split_subjects
from neurips26.anadiffusion.template import build_template, load_mni152
from neurips26.anadiffusion.volumes import check_volumes


@pytest.fixture
def folder(tmp_path):
    """An ADNI-like folder with three files and a correct manifest."""
    root = tmp_path / "adni"
    rows = ["path,sha256,subject,group"]
    for i, subject in enumerate(["002_S_0295", "002_S_0295", "011_S_0003"]):
        path = root / subject / f"scan{i}.nii.gz"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(f"scan {i}".encode())
        rows.append(f"{subject}/scan{i}.nii.gz,{hashlib.sha256(path.read_bytes()).hexdigest()},{subject},CN")
    manifest = tmp_path / "manifest.csv"
    manifest.write_text("\n".join(rows) + "\n")
    return root, manifest


def test_manifest_check_accepts_matching_files(folder):
    root, manifest = folder
    table = check_manifest(root, manifest)
    assert list(table["subject"]) == ["002_S_0295", "002_S_0295", "011_S_0003"]
    assert list(table["group"]) == ["CN"] * 3  # extra columns are kept
    assert all(p.startswith(str(root.resolve())) for p in table["file"])


def test_checksum_mismatch_names_the_file_and_both_hashes(folder):
    root, manifest = folder
    changed = root / "011_S_0003" / "scan2.nii.gz"
    expected = hashlib.sha256(changed.read_bytes()).hexdigest()
    changed.write_bytes(b"tampered")
    actual = hashlib.sha256(b"tampered").hexdigest()
    with pytest.raises(AdniDataError, match=f"scan2.nii.gz: expected sha256 {expected}, got {actual}"):
        check_manifest(root, manifest)


def test_missing_folder_or_manifest_explains_how_to_obtain_adni(folder, tmp_path):
    root, manifest = folder
    for args in ((tmp_path / "nowhere", manifest), (root, tmp_path / "none.csv")):
        with pytest.raises(AdniDataError, match="ida.loni.usc.edu") as error:
            check_manifest(*args)
        assert "Data Use Agreement" in str(error.value)


def test_missing_file_is_named(folder):
    root, manifest = folder
    (root / "002_S_0295" / "scan1.nii.gz").unlink()
    with pytest.raises(AdniDataError, match="1 files of manifest .* are not in .*scan1.nii.gz"):
        check_manifest(root, manifest)


@pytest.mark.parametrize(
    "line, message",
    [
        ("a.nii.gz,abc,s1", "is not 64 hex digits"),
        ("../a.nii.gz," + "0" * 64 + ",s1", "must be relative"),
        ("/abs/a.nii.gz," + "0" * 64 + ",s1", "must be relative"),
        ("a.nii.gz," + "0" * 64 + ",", "subject of 'a.nii.gz' is empty"),
    ],
)
def test_malformed_manifest_rows_are_refused(tmp_path, line, message):
    manifest = tmp_path / "m.csv"
    manifest.write_text(f"path,sha256,subject\n{line}\n")
    with pytest.raises(AdniDataError, match=message):
        read_manifest(manifest)


def test_manifest_needs_its_columns_and_unique_paths(tmp_path):
    manifest = tmp_path / "m.csv"
    manifest.write_text("path,sha256\na.nii.gz," + "0" * 64 + "\n")
    with pytest.raises(AdniDataError, match=r"missing columns \['subject'\]"):
        read_manifest(manifest)
    manifest.write_text("path,sha256,subject\n" + ("a.nii.gz," + "0" * 64 + ",s\n") * 2)
    with pytest.raises(AdniDataError, match="paths listed twice"):
        read_manifest(manifest)


def test_subject_split_is_disjoint_deterministic_and_proportional():
    subjects = [f"{i:03d}_S_{i:04d}" for i in range(407)] * 4  # several scans per subject
    split = split_subjects(subjects, seed=1)
    assert set(split) == set(subjects)  # every subject in exactly one split
    counts = {name: sum(v == name for v in split.values()) for name in ("train", "val", "test")}
    assert counts == {"train": 305, "val": 41, "test": 61}
    assert split_subjects(subjects, seed=1) == split and split_subjects(subjects, seed=2) != split
    with pytest.raises(ValueError, match="cannot fill"):
        split_subjects(["a", "b"])


def test_resampling_to_the_template_grid_ignores_the_source_orientation():
    template = build_template(8.0, (24, 28, 24))
    t1, affine = load_mni152("t1")
    ras = resample_to_grid(nib.Nifti1Image(t1, affine), template.shape, template.affine)
    flip = np.diag([-1.0, 1.0, 1.0, 1.0])
    flip[0, 3] = t1.shape[0] - 1
    las = nib.Nifti1Image(t1[::-1].copy(), affine @ flip)  # the same image stored left-to-right
    assert nib.aff2axcodes(las.affine) == ("L", "A", "S")
    assert np.allclose(resample_to_grid(las, template.shape, template.affine), ras, atol=1e-5)
    assert np.corrcoef(ras.ravel(), template.t1.ravel())[0, 1] > 0.9
    with pytest.raises(ValueError, match="order"):
        resample_to_grid(las, template.shape, template.affine, order=2)


def test_preprocessing_chain_with_stand_in_tools(monkeypatch):
    """The chain's own steps (canonical orientation, masking, resampling, clip and scale) around stand-ins for N4,
    HD-BET and the registration (an image already in MNI space, stripped by its non-zero voxels)."""
    template = build_template(8.0, (24, 28, 24))
    t1, affine = load_mni152("t1")
    calls = []

    def n4(image):
        calls.append("n4")
        return image

    def strip(image, device):
        calls.append("strip")
        data = np.asarray(image.dataobj)
        return image, nib.Nifti1Image((data > 0).astype(np.uint8), image.affine)

    def register(image, reference, masks, seed):
        calls.append("register")
        assert reference.shape == t1.shape  # registered to the 1 mm MNI152 T1
        return image, list(masks)

    monkeypatch.setattr(adni, "n4_bias_correct", n4)
    monkeypatch.setattr(adni, "skull_strip", strip)
    monkeypatch.setattr(adni, "register_affine", register)
    raw = nib.Nifti1Image(t1 * 1000 + 5 * (t1 > 0), affine)
    volume = adni.preprocess_t1(raw, template)
    assert calls == ["n4", "strip", "register"]
    check_volumes(volume, template)
    assert volume.max() == 1 and ((volume > -1) != template.brain).mean() < 0.03  # background -1 outside the brain
    assert np.corrcoef(volume.ravel(), template.t1.ravel())[0, 1] > 0.95


def test_missing_tools_are_named(monkeypatch):
    image = nib.Nifti1Image(np.zeros((4, 4, 4), np.float32), np.eye(4))
    monkeypatch.setitem(sys.modules, "ants", None)
    with pytest.raises(ImportError, match="pip install antspyx"):
        adni.n4_bias_correct(image)
    monkeypatch.setitem(sys.modules, "nnunetv2", None)
    with pytest.raises(ImportError, match="pip install hd-bet"):
        adni.skull_strip(image)


def _small_mni(voxel_mm=4.0):
    """The MNI152 T1 at `voxel_mm` (a quick stand-in scan for the ANTs tests)."""
    t1, affine = load_mni152("t1")
    step = int(voxel_mm)
    return nib.Nifti1Image(np.ascontiguousarray(t1[::step, ::step, ::step]), affine @ np.diag([step, step, step, 1]))


def test_n4_removes_a_smooth_bias_field():
    pytest.importorskip("ants")
    image = _small_mni(4.0)
    data = np.asarray(image.dataobj)
    x = np.linspace(-1, 1, data.shape[0])[:, None, None]
    biased = nib.Nifti1Image((data * (1 + 0.3 * x)).astype(np.float32), image.affine)
    corrected = np.asarray(adni.n4_bias_correct(biased).dataobj)
    inside, third = data > 0.1, data.shape[0] // 3

    def left_right(v):
        return v[:third][inside[:third]].mean() / v[-third:][inside[-third:]].mean()

    assert abs(1 - left_right(corrected)) < 0.5 * abs(1 - left_right(np.asarray(biased.dataobj)))


def test_affine_registration_recovers_a_shift_and_scale():
    pytest.importorskip("ants")
    reference = _small_mni(4.0)
    moved_affine = reference.affine.copy()
    moved_affine[:3, :3] *= 1.06
    moved_affine[:3, 3] += [8.0, -6.0, 4.0]
    moving = nib.Nifti1Image(np.asarray(reference.dataobj), moved_affine)
    registered, (mask,) = adni.register_affine(moving, reference, masks=(moving,))
    before = resample_to_grid(moving, reference.shape, reference.affine)
    after = np.asarray(registered.dataobj)
    target = np.asarray(reference.dataobj)
    assert np.corrcoef(after.ravel(), target.ravel())[0, 1] > 0.97 > np.corrcoef(before.ravel(), target.ravel())[0, 1]
    assert mask.shape == reference.shape


def test_the_adni_rule_has_its_own_env_with_the_preprocessing_packages_at_versions_their_pins_allow():
    """antspyx 0.6.3 requires numpy < 2.4 and scipy < 1.16 (its wheel's Requires-Dist); hd-bet 2.0.1 needs nnunetv2
    and SimpleITK. The project's numpy 2.4.6 and scipy 1.17.1 do not satisfy antspyx, so the rule has its own env."""
    import re
    from pathlib import Path

    import yaml
    from packaging.version import Version

    root = Path(__file__).resolve().parents[1]
    rules = (root / "rules/anadiffusion.smk").read_text()
    block = rules[rules.index("rule anadiffusion_adni:") :].split("\nrule ", 1)[0]
    env = re.search(r'conda:\s*"\.\./(envs/[^"]+)"', block).group(1)
    assert env == "envs/adni.yaml"
    spec = yaml.safe_load((root / env).read_text())
    pins = dict(item.split("==") for dep in spec["dependencies"] if isinstance(dep, dict) for item in dep["pip"])
    assert {"antspyx", "hd-bet", "nnunetv2", "simpleitk", "nibabel", "torch"} <= set(pins)
    assert pins["antspyx"] == "0.6.3" and pins["hd-bet"] == "2.0.1"
    assert Version(pins["numpy"]) < Version("2.4") and Version(pins["scipy"]) < Version("1.16")
    assert Version(pins["nnunetv2"]) >= Version("2.5.1")  # hd-bet 2.0.1's floor


# --- per-subject part labels by atlas-based segmentation (neurips26.anadiffusion.atlas) ---


def _atlas_parts():
    """A 3-part label map (1 LH, 2 RH, 3 CB) on an 8x6x6 grid, its brain the box [1:7, 1:5, 1:5]."""
    parts = np.zeros((8, 6, 6), np.uint8)
    parts[1:4, 1:5, 2:5] = 1
    parts[4:7, 1:5, 2:5] = 2
    parts[1:7, 1:5, 1] = 3
    return parts


def test_warp_labels_identity_shift_and_outside():
    from neurips26.anadiffusion.atlas import warp_labels

    parts = _atlas_parts()
    identity = np.indices(parts.shape, dtype=np.float32)
    np.testing.assert_array_equal(warp_labels(parts, identity), parts)
    shifted = identity.copy()
    shifted[0] += 1.2  # each voxel reads the template one voxel further along x (nearest: 1.2 -> 1)
    warped = warp_labels(parts, shifted)
    np.testing.assert_array_equal(warped[:-1], parts[1:])
    assert (warped[-1] == 0).all()  # beyond the grid: background
    shifted[:, 0, 0, 0] = np.nan
    assert warp_labels(parts, shifted)[0, 0, 0] == 0
    with pytest.raises(ValueError, match="integer map"):
        warp_labels(parts.astype(np.float32), identity)
    with pytest.raises(ValueError, match=r"\(3, X, Y, Z\)"):
        warp_labels(parts, identity[:2])


def test_subject_part_labels_cut_to_the_brain_and_fill_holes():
    from neurips26.anadiffusion.atlas import subject_part_labels
    from neurips26.anadiffusion.volumes import check_parts

    parts = _atlas_parts()
    volume = np.full(parts.shape, -1.0, np.float32)
    volume[1:7, 1:5, 1:6] = 0.3  # the subject's brain reaches one slice further in z than the warped parts
    labels = subject_part_labels(volume, parts)
    check_parts(labels, volume > -1)  # the parts partition the subject's brain
    assert (labels[:, :, 5][volume[:, :, 5] > -1] == parts[:, :, 4][volume[:, :, 5] > -1]).all()  # nearest part
    outside = volume.copy()
    outside[1:4, 1:5, 2:5] = -1  # the subject has no brain where the template's LH is
    assert not (subject_part_labels(outside, parts) == 1).any()
    with pytest.raises(ValueError, match="registration failed"):
        subject_part_labels(volume, np.zeros_like(parts))


def test_atlas_part_labels_follow_the_subject_not_the_template():
    """Two subjects whose brains the (stand-in) registration maps differently get different label maps: the
    labels are the subject's, not the template's part map cut to each brain."""
    from types import SimpleNamespace

    from neurips26.anadiffusion.atlas import atlas_part_labels

    parts = _atlas_parts()
    template = SimpleNamespace(parts=parts, shape=parts.shape)
    volume = np.where(parts > 0, 0.2, -1.0).astype(np.float32)

    def shifted(by):
        def coordinates(vol, tpl, seed):
            grid = np.indices(tpl.shape, dtype=np.float32)
            grid[0] += by
            return grid

        return coordinates

    same = atlas_part_labels(volume, template, coordinates=shifted(0))
    np.testing.assert_array_equal(same, parts)
    moved = atlas_part_labels(volume, template, coordinates=shifted(1))
    assert (moved != same).sum() > 0
    assert (moved[3][volume[3] > -1] == 2).any()  # the RH boundary moved one voxel towards the LH


def test_template_coordinates_with_antspyx():
    """SyN of the template to itself maps every brain voxel close to itself (needs antspyx: the ADNI env)."""
    pytest.importorskip("ants")
    from neurips26.anadiffusion.atlas import template_coordinates

    template = build_template(voxel_mm=8.0, shape=(24, 28, 24), support_multiple=4)
    coordinates = template_coordinates(template.t1, template, seed=0)
    identity = np.indices(template.shape, dtype=np.float32)
    brain = template.brain
    assert np.nanmax(np.abs(coordinates - identity)[:, brain]) < 1.0
