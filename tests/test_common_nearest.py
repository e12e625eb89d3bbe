"""neurips26.common.nearest: the k nearest reference rows by Euclidean distance, streamed in chunks, against a
brute force, and its refusals (shared by paper 04's d1 / d2 memorization ratio and paper 03's nearest-training
distance)."""

import numpy as np
import pytest

from neurips26.common.nearest import flat_rows, k_nearest


def test_k_nearest_matches_a_brute_force_for_every_chunk_size():
    rng = np.random.default_rng(0)
    queries, reference = rng.normal(size=(6, 2, 3)), rng.normal(size=(13, 2, 3))
    reference[4] = queries[1]  # a query that is a reference row: distance 0 (the Gram form is clipped at 0)
    q, r = flat_rows(queries, "queries"), flat_rows(reference, "reference")
    brute = np.linalg.norm(q[:, None] - r[None], axis=-1)
    for k in (1, 2, 3):
        for chunk in (1, 4, 13, None):
            found = k_nearest(q, r, k, chunk)
            np.testing.assert_allclose(found.distances, np.sort(brute, axis=1)[:, :k], atol=1e-7)
            np.testing.assert_array_equal(found.indices, np.argsort(brute, axis=1)[:, :k])
    assert k_nearest(q, r, 1).indices[1, 0] == 4 and k_nearest(q, r, 1).distances[1, 0] == 0.0


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: flat_rows(np.zeros((0, 3)), "train"), r"train must be a non-empty batch"),
        (lambda: flat_rows(np.array([[1.0, np.nan]]), "train"), r"train contains 1 NaN or infinite values"),
        (lambda: k_nearest(np.zeros((2, 3)), np.zeros((4, 2))), r"one width F"),
        (lambda: k_nearest(np.zeros((2, 3)), np.zeros((4, 3)), k=5), r"k = 5: need an integer in \[1, 4\]"),
        (lambda: k_nearest(np.zeros((2, 3)), np.zeros((4, 3)), chunk=0), r"chunk must be a positive int"),
    ],
)
def test_bad_inputs_are_refused_naming_what_is_wrong(call, message):
    with pytest.raises(ValueError, match=message):
        call()
