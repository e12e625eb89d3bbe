"""What paper 19's steps store and read back: policies as tensors and plain settings (weights_only=True), and the
report's tables built from the steps' outputs."""

import pandas as pd
import torch

from neurips26.amortix import summary
from neurips26.amortix.policy import load_policy_state, new_policy, policy_from_state, policy_state


def test_a_saved_policy_is_read_without_pickle_and_rebuilt_with_the_same_weights(tmp_path):
    torch.manual_seed(0)
    policy = new_policy({"d_model": 16, "n_layers": 2, "n_heads": 2}, n_elements=9, n_decoration=6)
    path = tmp_path / "policy.pt"
    torch.save(policy_state(policy), path)
    state = load_policy_state(path)  # torch.load(..., weights_only=True)
    rebuilt = policy_from_state(state)
    assert rebuilt.config == policy.config
    for (name, mine), (other, theirs) in zip(policy.state_dict().items(), rebuilt.state_dict().items(), strict=True):
        assert name == other and torch.equal(mine, theirs)


def test_split_sizes_count_molecules_scaffolds_decisions_and_clusters_per_split():
    split = pd.DataFrame({"scaffold": ["a", "b", "c"], "split": ["train", "train", "test"], "cluster": [0, 1, 2]})
    demos = pd.DataFrame({"scaffold": ["a", "a", "b", "c"], "smiles": ["w", "x", "y", "z"], "n_actions": [3, 4, 5, 6]})
    table = summary.split_sizes(demos, split).set_index("split")
    assert table.loc["train"].tolist() == [3, 2, 12, 2]
    assert table.loc["test"].tolist() == [1, 1, 6, 1]
