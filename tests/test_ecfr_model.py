"""Paper 11's networks: shapes at every scale, a frozen teacher, the reference's bottleneck size, the cross- and
same-modal pairings, and bad widths refused."""

from __future__ import annotations

import pytest
import torch

from neurips26.ecfr.model import ECFR, ECFRConfig, n_parameters, pairs

SMALL = ECFRConfig(backbone=(8, 16, 32), decoder=(64, 32, 16, 8), depths=(2, 2, 2, 2), heads=(2, 2, 1, 1),
                   agents=(4, 4, 4, 4), bottleneck_blocks=1, image_size=64)  # fmt: skip


def test_the_student_returns_the_teachers_three_scales_for_both_streams():
    model = ECFR(SMALL)
    x, d = torch.randn(2, 3, 64, 64), torch.randn(2, 3, 64, 64)
    t_rgb, t_depth, s_rgb, s_depth = model(x, d)
    assert [t.shape for t in t_rgb] == [s.shape for s in s_rgb] == [s.shape for s in s_depth]
    assert [t.shape[1:] for t in t_depth] == [(8, 16, 16), (16, 8, 8), (32, 4, 4)]
    cross, same = pairs(t_rgb, t_depth, s_rgb, s_depth, True), pairs(t_rgb, t_depth, s_rgb, s_depth, False)
    assert cross[0][1] is s_depth and cross[1][1] is s_rgb and same[0][1] is s_rgb and same[1][1] is s_depth


def test_the_teacher_is_frozen_and_stays_in_eval_mode():
    model = ECFR(SMALL).train()
    assert not model.teacher.training and not any(p.requires_grad for p in model.teacher.parameters())
    x = torch.randn(2, 3, 64, 64)
    t_rgb, _, s_rgb, _ = model(x, x)
    sum(s.mean() for s in s_rgb).backward()
    assert all(p.grad is None for p in model.teacher.parameters())
    assert any(p.grad is not None for p in model.decoder.parameters())
    assert n_parameters(model, trainable_only=True) < n_parameters(model)


def test_the_paper_configurations_bottleneck_has_the_references_size():
    model = ECFR(ECFRConfig())  # the reference's widths: FeatureAggregation x 2 is 2.917 M parameters
    assert 2.90e6 < 2 * n_parameters(model.agg_rgb) < 2.93e6


def test_bad_widths_are_refused():
    with pytest.raises(ValueError, match="must mirror the teacher's widths"):
        ECFR(ECFRConfig(backbone=(8, 16, 32), decoder=(64, 32, 16, 16)))
    with pytest.raises(ValueError, match="must halve"):
        ECFR(ECFRConfig(backbone=(8, 16, 32), decoder=(80, 32, 16, 8)))
    with pytest.raises(ValueError, match="agent tokens must be a square"):
        ECFR(ECFRConfig(backbone=(8, 16, 32), decoder=(64, 32, 16, 8), heads=(2, 2, 1, 1), agents=(5, 4, 4, 4)))


def test_the_paper_configuration_counts_as_table_2_less_what_we_leave_out():
    """Teacher: ResNet-34 to layer 3, exactly the reference's 8,170,304 parameters. Whole network: 41.57 M, the
    paper's 44.63 M less the agent/position biases and two modules the reference never calls (deviations); 15.59
    GMACs per pair at 256 px against the paper's 15.76 (fvcore's count)."""
    from neurips26.ecfr.complexity import measure

    model = ECFR(ECFRConfig())
    assert n_parameters(model.teacher) == 8_170_304
    counts = measure(model, 256)
    assert counts["params_total_m"] == pytest.approx(41.572736, abs=1e-6)
    assert counts["gmacs"] == pytest.approx(15.59, abs=0.01)
