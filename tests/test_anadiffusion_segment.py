"""The SynthSeg proxy and SynthSeg label counting: regional volumes of synthetic volumes with known structures."""

import numpy as np
import pytest

from neurips26.anadiffusion import segment

SHAPE = (20, 20, 20)


def phantom(ventricle_depth):
    """Background -1, a brain box of tissue (0.6), a CSF ventricle (-0.5) of 3 x 4 x `ventricle_depth` voxels, a
    CSF voxel outside every ROI, and a cerebellum with two CSF sulcus voxels; with the template ROIs."""
    v = np.full(SHAPE, -1.0, dtype=np.float32)
    v[2:18, 2:18, 2:18] = 0.6
    v[8:11, 8:12, 8 : 8 + ventricle_depth] = -0.5
    v[3, 3, 3] = -0.5  # CSF outside the ventricle ROI
    v[4, 14, 4], v[5, 14, 4] = -0.2, -0.2  # sulci inside the cerebellum ROI
    rois = {name: np.zeros(SHAPE, dtype=bool) for name in segment.STRUCTURES}
    rois["ventricles"][6:14, 6:14, 6:14] = True  # 512 voxels, most of them tissue
    rois["cerebellum"][0:8, 12:20, 0:8] = True  # reaches outside the brain box: background is not tissue
    rois["brainstem"][9:12, 2:6, 2:12] = True  # 3 * 4 * 10 tissue voxels
    return v, rois


def test_proxy_volumes_of_known_structures():
    volumes, rois = zip(*(phantom(depth) for depth in (2, 5)))
    volumes = np.stack(volumes)
    got = segment.proxy_structure_volumes(volumes, rois[0], voxel_size_mm=(1.5, 1.5, 2.0))
    unit = 1.5 * 1.5 * 2.0
    np.testing.assert_allclose(got["ventricles"], np.array([3 * 4 * 2, 3 * 4 * 5]) * unit)
    # cerebellum ROI inside the brain box: x 2..7, y 12..17, z 2..7 = 6 * 6 * 6, less the two sulcus voxels
    np.testing.assert_allclose(got["cerebellum"], (6 * 6 * 6 - 2) * unit)
    np.testing.assert_allclose(got["brainstem"], 3 * 4 * 10 * unit)


def test_the_threshold_splits_csf_from_tissue_at_the_boundary():
    v, rois = phantom(2)
    v[2:18, 2:18, 2:18] = np.where(v[2:18, 2:18, 2:18] > 0, 0.0, v[2:18, 2:18, 2:18])  # tissue exactly at 0
    got = segment.proxy_structure_volumes(v[None], rois, 1.0, csf_threshold=0.0)
    assert got["brainstem"][0] == 3 * 4 * 10  # at the threshold is tissue
    darker = segment.proxy_structure_volumes(v[None], rois, 1.0, csf_threshold=0.3)
    assert darker["brainstem"][0] == 0 and darker["ventricles"][0] == 512  # everything in the ROI counts as CSF


def test_proxy_refuses_per_subject_or_bad_rois_and_bad_volumes():
    v, rois = phantom(2)
    with pytest.raises(ValueError, match="one for every volume"):
        segment.proxy_structure_volumes(v[None], {"ventricles": rois["ventricles"][None]}, 1.0)
    with pytest.raises(ValueError, match="unknown structure 'hippocampus'"):
        segment.proxy_structure_volumes(v[None], {"hippocampus": rois["ventricles"]}, 1.0)
    with pytest.raises(ValueError, match="ROI brainstem is empty"):
        segment.proxy_structure_volumes(v[None], {"brainstem": np.zeros(SHAPE, dtype=bool)}, 1.0)
    with pytest.raises(ValueError, match=r"outside \[-1, 1\], the paper's"):
        segment.proxy_structure_volumes(3 * v[None], rois, 1.0)
    with pytest.raises(ValueError, match="voxel_size_mm must be positive"):
        segment.proxy_structure_volumes(v[None], rois, (1.0, 0.0, 1.0))
    with pytest.raises(ValueError, match=r"\(N, D, H, W\)"):
        segment.proxy_structure_volumes(v, rois, 1.0)


def test_synthseg_label_volumes_join_their_label_ids():
    labels = np.zeros((2, 6, 6, 6), dtype=np.int16)
    labels[0, 0, :4, 0] = 4  # left lateral ventricle, 4 voxels
    labels[0, 1, :3, 0] = 43  # right lateral ventricle, 3 voxels
    labels[0, 2, 0, 0] = 15  # 4th ventricle
    labels[0, 3, :, :] = 8  # left cerebellar cortex, 36 voxels
    labels[0, 4, :2, 0] = 46  # right cerebellar white matter, 2 voxels
    labels[1, 5, :5, 0] = 16  # brainstem, 5 voxels
    labels[1, 0, 0, 0] = 2  # cerebral white matter, counted nowhere
    got = segment.label_volumes(labels, voxel_size_mm=2.0)
    np.testing.assert_allclose(got["ventricles"], np.array([8, 0]) * 8.0)
    np.testing.assert_allclose(got["cerebellum"], np.array([38, 0]) * 8.0)
    np.testing.assert_allclose(got["brainstem"], np.array([0, 5]) * 8.0)
    with pytest.raises(ValueError, match="integer array"):
        segment.label_volumes(labels.astype(float), 1.0)
