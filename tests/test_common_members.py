"""neurips26.common.members.call_members: every member of a stacked ensemble on its own slice of the arguments,
member after member or under vmap, equal to each model called alone."""

import pytest
import torch
from torch import nn

from neurips26.common.ensemble import Ensemble, build
from neurips26.common.members import call_members


class Pair(nn.Module):
    """y = W x + b and, shared by all members, x + shift: a tuple output and an argument given to every member."""

    def __init__(self):
        super().__init__()
        self.linear = nn.Linear(3, 2)

    def forward(self, x, shift):
        return self.linear(x), x + shift


def test_members_see_their_own_slice_looped_or_vectorized_and_match_the_models_alone():
    models = build(Pair, [0, 1, 2])
    ens = Ensemble(models)
    x, shift = torch.randn(3, 4, 3), torch.randn(3)
    for vectorize in (False, True):
        y, z = call_members(ens, models[0], x, shift, in_dims=(0, None), vectorize=vectorize)
        for i, model in enumerate(models):
            alone = model(x[i], shift)
            torch.testing.assert_close(y[i], alone[0])
            torch.testing.assert_close(z[i], alone[1])
    assert not torch.allclose(y[0], y[1])  # the members differ: each saw its own weights
    with pytest.raises(ValueError, match=r"in_dims \(0, 1\)"):
        call_members(ens, models[0], x, shift, in_dims=(0, 1))
