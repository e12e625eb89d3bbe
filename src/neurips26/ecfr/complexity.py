"""Model size and cost of paper 11's networks, as its Table 2 reports them: parameters counted with the frozen
backbone (the paper's 44.63 M convention: the reference's ResNet-34 to layer 3, both bottlenecks and the decoder) and
trainable only, and the floating-point operations of one forward pass of an RGB + depth pair, counted by torch's
``FlopCounterMode`` (a multiply-add counts 2). fvcore, which the reference's 15.76 "GFLOPs" come from, counts a
multiply-add as one, so ``gmacs`` = FLOPs / 2 is the number to set beside the paper's."""

from __future__ import annotations

import torch
from torch.utils.flop_counter import FlopCounterMode

__all__ = ["measure", "measure_configurations", "measure_published_cfm"]


def measure(net: torch.nn.Module, size: int, inputs: tuple | None = None) -> dict[str, float]:
    """{params_total_m, params_trainable_m, gflops, gmacs} of ``net`` on one pair of ``size``-pixel images (or on
    ``inputs``)."""
    net.eval()
    x = torch.zeros(1, 3, size, size)
    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        net(*(inputs if inputs is not None else (x, x)))
    flops = counter.get_total_flops()
    total = sum(p.numel() for p in net.parameters())
    trainable = sum(p.numel() for p in net.parameters() if p.requires_grad)
    return {"params_total_m": total / 1e6, "params_trainable_m": trainable / 1e6, "gflops": flops / 1e9,
            "gmacs": flops / 2e9}  # fmt: skip


def measure_published_cfm() -> dict[str, float]:
    """The published CFM (DINO ViT-B/8 at 224 px, Point-MAE on 1,024 groups of 128 points, its two MLPs), counted
    as :func:`measure` counts ECFR."""
    from .published import PublishedCFM

    net = PublishedCFM()
    points = torch.randn(1, net.groups, net.group_size, 3, generator=torch.Generator().manual_seed(0))
    return measure(net, 224, (torch.zeros(1, 3, 224, 224), points))


def measure_configurations(methods, configurations: dict[str, dict | None], build) -> list[dict]:
    """Rows (configuration, method, size, and :func:`measure`'s counts) of every method in every configuration
    (name -> {teacher, model, cfm, size}, None to skip it). ``build(method, teacher, model, cfm, size)`` makes a
    network; a configuration whose networks are another's (the paper scale's own and "paper", both the paper's
    block) is counted once: only the teacher's widths and blocks, the model, CFM and size make the network."""
    rows, counted = [], {}
    for name, cfg in configurations.items():
        if cfg is None:
            continue
        teacher = {k: cfg["teacher"][k] for k in ("widths", "blocks")}
        for method in methods:
            key = repr((method, teacher, cfg["model"], cfg["cfm"], cfg["size"]))
            if key not in counted:
                counted[key] = measure(build(method, teacher, cfg["model"], cfg["cfm"], cfg["size"]), cfg["size"])
            rows.append({"configuration": name, "method": method, "size": cfg["size"], **counted[key]})
    return rows
