"""Paper 04 (BIRD): the GPU rule bird_train places its network and batches on the job's device.

Run under a fake accelerator (tests/fake_gpu.py): a tensor left on the CPU next to one on the device fails,
as it would on a GPU. The networks are as in the smoke config, at a tiny training set.
"""

import pytest
import torch

from fake_gpu import fake_gpu
from neurips26.bird import data, networks, training
from neurips26.common import loop

SPECS = {"unet_tiny": {"fsizes": [16, 32], "emb_dim": 32}, "dit_tiny": {"hidden": 32, "depth": 1, "heads": 2}}


@pytest.mark.gpu_rule("bird_train")
@pytest.mark.parametrize("seeds", [[0], [0, 1]], ids=["one seed", "a batched seed group"])
@pytest.mark.parametrize("arch", sorted(SPECS))
def test_bird_train_runs_on_the_job_device(arch, seeds):
    x = torch.as_tensor(data.toeplitz_field(24, seed=0))
    with fake_gpu() as device:
        models = [networks.build_network(arch, SPECS[arch], 1, 16, seed=s).to(loop.job_device()) for s in seeds]
        log, kept = training.train_epsilon(
            models, x, epochs=2, batch=16, lr=1e-3, seeds=seeds, checkpoint_epochs=[0, 2]
        )
        assert all(next(model.parameters()).device == device for model in models)
    assert log["step"].tolist() == [step for _ in seeds for step in range(4)] and sorted(kept) == seeds
    assert all(sorted(by_epoch) == [0, 2] for by_epoch in kept.values())
    assert all(
        v.device.type == "cpu" for by_epoch in kept.values() for state in by_epoch.values() for v in state.values()
    )


def test_a_batch_left_on_the_cpu_fails_under_the_fake_device():
    """The check has teeth: the same model fed a CPU batch fails."""
    with fake_gpu():
        model = networks.build_network("dit_tiny", SPECS["dit_tiny"], 1, 16, seed=0).to(loop.job_device())
        with pytest.raises((RuntimeError, NotImplementedError)):
            model(torch.zeros(2, 1, 16, 16), torch.full((2,), 0.5))
