"""Paper 15: the GPU rule softlabel_audit_train places its teacher's and members' classifiers and batches on the job's
device (tests/fake_gpu.py: a tensor left on the CPU next to one on the device fails, as it would on a GPU)."""

import numpy as np
import pytest

from fake_gpu import fake_gpu
from neurips26.softlabel_audit.experiment import teacher_logits
from neurips26.softlabel_audit.training import TrainSettings, members_grid, predict_proba, train_members


def _toy(n=24, k=10, seed=0):
    rng = np.random.default_rng(seed)
    return rng.random((n, 8, 8), dtype=np.float32), rng.integers(0, k, n)


@pytest.mark.gpu_rule("softlabel_audit_train")
def test_training_and_prediction_run_on_the_job_device():
    images, gold = _toy()
    members = members_grid(["hard_orig", "human_soft"], [0, 1])
    targets = np.tile(np.eye(10, dtype=np.float32)[gold], (len(members), 1, 1))
    with fake_gpu() as device:
        result = train_members(images, gold, targets, members, "convnet_tiny", TrainSettings(epochs=2, batch=8))
        assert next(iter(result.ensemble.params.values())).device == device
        probs = predict_proba(result, images)
    assert probs.shape == (4, 24, 10)  # values read off the fake device are zeros: placement is what is tested
    assert teacher_logits(probs[0]).shape == (24, 10)
