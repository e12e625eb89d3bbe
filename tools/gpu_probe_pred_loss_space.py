"""GPU probe for paper 01 at paper scale (run once on the lent H200; not part of the pipeline or tests).

1. Inception-v3 (ours, no torchvision) against torchvision's Inception3: state-dict keys and shapes, and the
   stem's output under the same weights; then features of 10k images on the GPU, timed.
2. Training throughput of every paper-scale regime's architecture (batch 128) on the GPU, and the time 100k
   steps would take; Heun sampling of 10k samples with 50 steps.
3. A real cell on the GPU: digits16 / quick jit_tiny, x-pred x-loss, 1000 steps, then sampling and MSE.
"""

import json
import os
import sys
import time

import numpy as np
import torch
import yaml

sys.path.insert(0, "src")  # run from the repository root: python3 tools/gpu_probe_pred_loss_space.py
from neurips26.common.digits import digits16  # noqa: E402
from neurips26.pred_loss_space import experiment, inception, models, sampling, training  # noqa: E402

out = os.environ.get("OUT", "/tmp")
report = {"torch": torch.__version__, "device": torch.cuda.get_device_name(0)}
dev = "cuda"


def sync():
    torch.cuda.synchronize()


# 1. Inception
import torchvision  # noqa: E402  (only on the probe machine, as a cross-check)

tv = torchvision.models.inception_v3(weights=None, aux_logits=False, init_weights=False, num_classes=1008)
ours = inception.FIDInceptionV3()
tv_shapes = {k: tuple(v.shape) for k, v in tv.state_dict().items()}
our_shapes = {k: tuple(v.shape) for k, v in ours.state_dict().items()}
report["inception_keys_equal"] = tv_shapes == our_shapes
report["inception_key_diff"] = sorted(set(tv_shapes) ^ set(our_shapes))[:10]
path = f"{out}/tv_random_inception.pth"
torch.save(tv.state_dict(), path)
net = inception.load_inception(path, device=dev)
os.remove(path)
tv = tv.to(dev).eval()
x = torch.rand(8, 3, 299, 299, device=dev) * 2 - 1
with torch.no_grad():

    def stem(m, z):
        z = m.maxpool1(m.Conv2d_2b_3x3(m.Conv2d_2a_3x3(m.Conv2d_1a_3x3(z))))
        return m.maxpool2(m.Conv2d_4a_3x3(m.Conv2d_3b_1x1(z)))

    report["stem_max_abs_diff"] = float((stem(tv, x) - stem(net, x)).abs().max())
    y = torch.randn(2, 288, 35, 35, device=dev)
    report["mixed_6a_max_abs_diff"] = float((tv.Mixed_6a(y) - net.Mixed_6a(y)).abs().max())
    y = torch.randn(2, 768, 17, 17, device=dev)
    report["mixed_7a_max_abs_diff"] = float((tv.Mixed_7a(y) - net.Mixed_7a(y)).abs().max())
images = torch.rand(10000, 3, 32, 32) * 2 - 1
for bs in (200, 500):
    sync()
    t0 = time.perf_counter()
    feats = inception.inception_features(net, images, batch=bs, device=dev)
    sync()
    report[f"inception_10k_seconds_batch{bs}"] = round(time.perf_counter() - t0, 2)
report["inception_features_finite"] = bool(np.isfinite(feats).all())
print(json.dumps(report), flush=True)

# 2. throughput of the paper regimes
cfg = yaml.safe_load(open("config/pred_loss_space.yaml"))["paper"]
steps_cfg = cfg["train"]
for regime in cfg["regimes"]:
    dataset, arch = regime["dataset"], regime["arch"]
    spec = experiment.model_spec(cfg, dataset, arch)
    shape = (spec["dim"],) if "dim" in spec else (spec["channels"], spec["image_size"], spec["image_size"])
    torch.manual_seed(0)
    model = models.build_model(arch, spec).to(dev)
    x_train = torch.rand(4096, *shape) * 2 - 1
    n_steps = 200
    training.train_denoiser(model, x_train, "x", "x", 20, steps_cfg["batch"], steps_cfg["lr"], -0.8, 0.8, 0)
    sync()
    t0 = time.perf_counter()
    training.train_denoiser(
        model, x_train, "x", "x", n_steps, steps_cfg["batch"], steps_cfg["lr"], -0.8, 0.8, 0, log_every=0
    )
    sync()
    per_step = (time.perf_counter() - t0) / n_steps
    sync()
    t0 = time.perf_counter()
    s = sampling.heun_sample(model, 2000, shape, cfg["sample"]["steps"], "x", seed=1)
    sync()
    sample_s = (time.perf_counter() - t0) * cfg["sample"]["n"] / 2000
    row = {
        "regime": f"{dataset}/{arch}",
        "params": sum(p.numel() for p in model.parameters()),
        "ms_per_step": round(per_step * 1e3, 2),
        "hours_per_cell_100k": round(per_step * steps_cfg["steps"] / 3600, 2),
        "sample_10k_seconds": round(sample_s, 1),
        "finite": bool(torch.isfinite(s).all()),
    }
    print(json.dumps(row), flush=True)

# 3. a real cell on the GPU
q = yaml.safe_load(open("config/pred_loss_space.yaml"))["quick"]
x_train, _, x_test, _ = digits16(seed=0, n_train=1500)
spec = experiment.model_spec(q, "digits16", "jit_tiny")
torch.manual_seed(0)
model = models.build_model("jit_tiny", spec).to(dev)
t0 = time.perf_counter()
ema, log = training.train_denoiser(
    model, torch.from_numpy(x_train), "x", "x", 1000, 64, 2e-3, -0.8, 0.8, 0, ema_decay=0.995, t_eps=0.05, t_min=0.05
)
model.load_state_dict(ema)
model.cpu()  # evaluate.py scores MSE on the CPU

per_t = sampling.denoise_errors(
    model, torch.from_numpy(x_test), "x", q["evaluate"]["t_grid"], seed=2000, t_eps=0.05, t_min=0.05
)
model.to(dev)
s = sampling.heun_sample(model, 512, (1, 16, 16), 16, "x", seed=1000, t_eps=0.05, t_min=0.05)
print(
    json.dumps(
        {
            "cell": "digits16/jit_tiny/xxx quick on GPU",
            "seconds": round(time.perf_counter() - t0, 1),
            "final_loss": float(log["loss_native"].tail(5).mean()),
            "mse": float(per_t["mse_x"].mean()),
            "samples_finite": bool(torch.isfinite(s).all()),
        }
    ),
    flush=True,
)
