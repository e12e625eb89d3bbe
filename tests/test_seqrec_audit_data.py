"""seqrec_audit data: ordering of tied interactions, k-core, the leave-2-out split (sequences), ML-100k (movielens),
the synthetic regimes (synthetic, catalog)."""

import numpy as np
import pandas as pd
import pytest
import scipy.sparse as sp

from neurips26.seqrec_audit import catalog, movielens, sequences, synthetic


def transitions(sequences: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
    pairs = [(s[:-1], s[1:]) for s in map(np.asarray, sequences["items"])]
    return np.concatenate([p[0] for p in pairs]), np.concatenate([p[1] for p in pairs])


# --- ordering ---------------------------------------------------------------------------------------------------------


def test_sequences_break_timestamp_ties_by_file_row():
    frame = pd.DataFrame(
        {
            "user": [1, 1, 1, 2, 2],
            "item": [10, 11, 12, 20, 21],
            "timestamp": [5, 5, 3, 7, 7],
            "row": [2, 0, 1, 4, 3],
        }
    )
    seqs = sequences.interactions_to_sequences(frame)
    assert seqs["user"].tolist() == [1, 2]
    assert seqs["items"].tolist() == [[12, 11, 10], [21, 20]]


def test_sequences_keep_frame_order_on_ties_without_row():
    frame = pd.DataFrame({"user": [3, 3, 3, 3, 1], "item": [7, 8, 9, 6, 5], "timestamp": [4, 4, 1, 4, 0]})
    seqs = sequences.interactions_to_sequences(frame)
    assert seqs["items"].tolist() == [[5], [9, 7, 8, 6]]  # the stable sort keeps 7, 8, 6 as listed


def test_sequences_refuse_missing_timestamps():
    frame = pd.DataFrame({"user": [1, 1], "item": [1, 2], "timestamp": [1.0, np.nan]})
    with pytest.raises(ValueError, match="1 interactions have no timestamp"):
        sequences.interactions_to_sequences(frame)


# --- k-core -----------------------------------------------------------------------------------------------------------


def test_k_core_needs_a_second_round():
    # k=2: item c has one interaction, so (u3, c) goes in round 1; that leaves u3 with one, gone in round 2
    frame = pd.DataFrame({"user": ["u1", "u1", "u2", "u2", "u3", "u3"], "item": list("ababac")})
    kept, counts = sequences.k_core(frame, 2)
    assert list(zip(kept["user"], kept["item"])) == [("u1", "a"), ("u1", "b"), ("u2", "a"), ("u2", "b")]
    assert counts == {
        "users_before": 3,
        "items_before": 3,
        "interactions_before": 6,
        "users_after": 2,
        "items_after": 2,
        "interactions_after": 4,
        "rounds": 2,
    }


def test_k_core_trivial_and_empty_cases():
    frame = pd.DataFrame({"user": [1, 1, 2], "item": [1, 2, 1]})
    kept, counts = sequences.k_core(frame, 1)
    assert len(kept) == 3 and counts["rounds"] == 0
    kept, counts = sequences.k_core(frame, 3)
    assert len(kept) == 0 and counts["users_after"] == 0 and counts["rounds"] == 1
    with pytest.raises(ValueError, match="k must be"):
        sequences.k_core(frame, 0)


def test_k_core_is_the_fixed_point_of_alternating_filters():
    rng = np.random.default_rng(0)
    frame = pd.DataFrame({"user": rng.zipf(1.6, 3000) % 200, "item": rng.zipf(1.4, 3000) % 300})
    kept, counts = sequences.k_core(frame, 4)
    # the k-core is unique, so filtering users and items alternately must reach the same rows
    slow = frame
    while True:
        slow = slow[slow.groupby("user")["user"].transform("size") >= 4]
        slow = slow[slow.groupby("item")["item"].transform("size") >= 4]
        if (slow.groupby("user").size() >= 4).all():
            break
    assert kept.equals(slow.reset_index(drop=True))
    assert kept.groupby("user").size().min() >= 4 and kept.groupby("item").size().min() >= 4
    assert counts["interactions_after"] == len(kept) > 0 and counts["rounds"] >= 2


# --- leave-2-out ------------------------------------------------------------------------------------------------------


def test_leave_two_out_by_hand():
    seqs = pd.DataFrame(
        {
            "user": [1, 2, 3, 4, 5, 6],
            "items": [[1, 2, 3, 4], [5, 6], [2, 7, 8], [3, 1, 2], [1, 8, 7], [2, 1, 4]],
        }
    )
    split = sequences.leave_one_out(seqs)
    assert split.users.tolist() == [1, 3, 4, 5, 6] and split.n_dropped_short == 1
    assert [t.tolist() for t in split.train] == [[1, 2], [2], [3], [1], [2]]
    assert split.valid_target.tolist() == [3, 7, 1, 8, 1]
    assert split.test_target.tolist() == [4, 8, 2, 7, 4]
    assert split.valid_history is split.train
    assert [h.tolist() for h in split.test_history] == [[1, 2, 3], [2, 7], [3, 1], [1, 8], [2, 1]]
    # training items {1, 2, 3}: valid 7, 8 cold; test 4 (twice), 8, 7 cold; only 4 is never seen before the test
    assert split.cold == {
        "valid_targets_cold": 2,
        "valid_items_cold": 2,
        "test_targets_cold": 4,
        "test_items_cold": 3,
        "test_items_only_target": 1,
    }


def test_leave_two_out_min_length():
    seqs = pd.DataFrame({"user": [1, 2], "items": [[1, 2, 3], [1, 2, 3, 4]]})
    split = sequences.leave_one_out(seqs, min_length=4)
    assert split.users.tolist() == [2] and split.n_dropped_short == 1
    with pytest.raises(ValueError, match="min_length"):
        sequences.leave_one_out(seqs, min_length=2)


# --- MovieLens-100k ---------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def ml100k():
    paths = catalog.movielens100k_files()
    return movielens.read_movielens100k(paths["inter"], paths["item"])


def test_movielens100k_counts(ml100k):
    interactions, items = ml100k
    assert len(interactions) == 100_000
    assert interactions["user"].nunique() == 943 and interactions["item"].nunique() == 1682 and len(items) == 1682
    assert set(interactions["item"]) == set(items["item"])
    assert interactions["row"].tolist() == list(range(100_000))
    seqs = sequences.interactions_to_sequences(interactions)
    lengths = seqs["items"].map(len)
    assert len(seqs) == 943 and lengths.mean() == pytest.approx(106.04, abs=0.01) and lengths.min() == 20
    split = sequences.leave_one_out(seqs)
    assert split.n_users == 943 and split.n_dropped_short == 0


def test_movielens100k_item_fields(ml100k):
    _, items = ml100k
    assert items.loc[0, "genres"] == ["Animation", "Children's", "Comedy"] and items.loc[0, "year"] == 1995
    assert sorted(items.loc[items["year"].isna(), "item"]) == [267, 1412]  # "unkonwn" and "V" in the wheel
    features = movielens.item_feature_matrix_movielens(items)
    assert features.shape[0] == 1682
    np.testing.assert_allclose(np.linalg.norm(features, axis=1), 1.0)
    # equal genres and decade fill two of the three equally weighted blocks, so the cosine is at least 2/3
    decade = items["year"] // 10
    twin = np.flatnonzero((items["genres"].map(tuple) == tuple(items.loc[0, "genres"])) & (decade == decade[0]))[1]
    assert features[0] @ features[twin] >= 2 / 3 - 1e-12


def test_read_movielens_refuses_missing_timestamps(tmp_path):
    inter = tmp_path / "x.inter"
    inter.write_text("user_id:token\titem_id:token\trating:float\ttimestamp:float\n1\t1\t3\t10\n1\t2\t4\t\n2\t1\t5\t\n")
    item = tmp_path / "x.item"
    item.write_text("item_id:token\tmovie_title:token_seq\trelease_year:token\tclass:token_seq\n1\tA\t1990\tDrama\n")
    with pytest.raises(ValueError, match="2 of 3 interactions"):
        movielens.read_movielens100k(inter, item)


def test_movielens_files_missing_package(monkeypatch):

    monkeypatch.setattr(catalog.importlib.util, "find_spec", lambda name: None)

    def no_distribution(name):
        raise catalog.importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(catalog.importlib.metadata, "distribution", no_distribution)
    with pytest.raises(FileNotFoundError, match="recbole"):
        catalog.movielens100k_files()


def test_check_features_errors():
    catalog.check_features(np.ones((3, 2)), 3)
    with pytest.raises(ValueError, match="3 rows but there are 4 items"):
        catalog.check_features(np.ones((3, 2)), 4)
    bad = np.ones((3, 2))
    bad[1, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        catalog.check_features(bad, 3)
    with pytest.raises(ValueError, match="2-D"):
        catalog.check_features(np.ones(3), 3)


# --- synthetic --------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def regimes():
    return {name: synthetic.generate(catalog.regime_spec(name)) for name in catalog.REGIMES}


def test_synthetic_is_deterministic():
    spec = catalog.SyntheticSpec(n_users=200, n_items=300, seed=7)
    first, second, other = (
        synthetic.generate(spec),
        synthetic.generate(spec),
        synthetic.generate(catalog.regime_spec("shortcut_rich", n_users=200, n_items=300)),
    )
    assert first[0].equals(second[0])
    np.testing.assert_array_equal(first[1], second[1])
    assert (first[2] != second[2]).nnz == 0
    assert not first[0].equals(other[0])


@pytest.mark.parametrize("name", sorted(catalog.REGIMES))
def test_synthetic_kernel_and_shapes(regimes, name):
    sequences, features, kernel = regimes[name]
    b = catalog.REGIMES[name]["branching"]
    assert isinstance(kernel, sp.csr_matrix) and kernel.shape == (1000, 1000)
    assert (np.diff(kernel.indptr) == b).all()  # every item has exactly b successors
    assert kernel.diagonal().sum() == 0 and (kernel.data > 0).all()
    np.testing.assert_allclose(np.asarray(kernel.sum(axis=1)).ravel(), 1.0)
    assert features.shape == (1000, 16)
    np.testing.assert_allclose(np.linalg.norm(features, axis=1), 1.0)
    lengths = sequences["items"].map(len)
    assert len(sequences) == 2000 and lengths.min() >= 5 and lengths.mean() == pytest.approx(17, abs=0.5)


def test_synthetic_history_knob_sets_the_share_of_kernel_steps(regimes):
    for name in ("shortcut_rich", "only_lowbranch"):
        sequences, _, kernel = regimes[name]
        last, nxt = transitions(sequences)
        on_kernel = (np.asarray(kernel[last, nxt]).ravel() > 0).mean()
        expected = (1 - 0.02) * (1 - catalog.REGIMES[name]["history"])
        assert on_kernel == pytest.approx(expected, abs=0.03), name


def test_synthetic_branching_is_far_lower_when_shortcut_rich(regimes):
    def perplexity(sequences):
        last, nxt = transitions(sequences)
        counts = sp.csr_matrix((np.ones(len(last)), (last, nxt)), shape=(1000, 1000))
        counts.sum_duplicates()
        rows = np.repeat(np.arange(1000), np.diff(counts.indptr))
        p_next = counts.data / np.asarray(counts.sum(axis=1)).ravel()[rows]
        return np.exp(-(counts.data * np.log(p_next)).sum() / counts.data.sum()), np.diff(counts.indptr).mean()

    rich_ppl, rich_degree = perplexity(regimes["shortcut_rich"][0])
    poor_ppl, poor_degree = perplexity(regimes["shortcut_poor"][0])
    assert rich_ppl < 0.25 * poor_ppl and rich_degree < 0.5 * poor_degree


def test_synthetic_smoothness_follows_the_knob(regimes):
    def consecutive_cosine(name):
        sequences, features, _ = regimes[name]
        last, nxt = transitions(sequences)
        return (features[last] * features[nxt]).sum(axis=1).mean()

    poor = consecutive_cosine("shortcut_poor")
    assert consecutive_cosine("shortcut_rich") > poor + 0.1
    assert consecutive_cosine("only_smooth") > poor + 0.1
    # in the kernel itself: smooth regimes draw most successors from the 50 feature neighbours
    for name, low, high in (("shortcut_rich", 0.8, 1.0), ("only_lowbranch", 0.0, 0.3)):
        _, features, kernel = regimes[name]
        similarity = features @ features.T
        np.fill_diagonal(similarity, -np.inf)
        nearest = np.argsort(-similarity, axis=1)[:, :50]
        rows = np.repeat(np.arange(1000), np.diff(kernel.indptr))
        share = (nearest[rows] == kernel.indices[:, None]).any(axis=1).mean()
        assert low <= share <= high, name


@pytest.mark.parametrize(
    "field, value",
    [
        ("branching", 0),
        ("branching", 1000),
        ("smoothness", 1.5),
        ("history", -0.1),
        ("noise", 2.0),
        ("n_users", 0),
        ("kappa", float("nan")),
        ("neighbours", 1000),
        ("n_clusters", 0),
        ("dirichlet", 0.0),
    ],
)
def test_bad_spec_names_the_field(field, value):
    with pytest.raises(ValueError, match=f"SyntheticSpec.{field}"):
        catalog.SyntheticSpec(**{field: value})


def test_regime_spec_lookup():
    spec = catalog.regime_spec("only_smooth", seed=3)
    assert (spec.branching, spec.smoothness, spec.history, spec.seed) == (60, 0.9, 0.1, 3)
    with pytest.raises(KeyError, match="unknown regime"):
        catalog.regime_spec("nope")
    with pytest.raises(ValueError, match="unknown SyntheticSpec field"):
        catalog.regime_spec("shortcut_rich", bogus=1)
