"""Train the image classifier whose penultimate layer gives the features of the FD proxy (in the shared
training loop: on the job's device, resumed from its checkpoint after a kill)."""

import torch

from neurips26.common import loop
from neurips26.common.checkpoint import fingerprint
from neurips26.common.io import load_npz
from neurips26.common.runtime import start_job
from neurips26.pred_loss_space import artifacts, training

params = snakemake.params
log = start_job(snakemake, seed=params.seed)
arrays = load_npz(snakemake.input.data)
cfg = params.features
settings = loop.LoopSettings(
    checkpoint=loop.checkpoint_path(snakemake.output[0]),
    fingerprint=fingerprint(dict(params), list(snakemake.input)),
    name="feature net",
)
net, train_accuracy = training.train_feature_net(
    torch.from_numpy(arrays["x_train"]),
    torch.from_numpy(arrays["y_train"]).long(),
    cfg["steps"],
    cfg["batch"],
    cfg["lr"],
    params.seed,
    feature_dim=cfg["dim"],
    settings=settings,
)
with torch.no_grad():
    test_accuracy = float((net(torch.from_numpy(arrays["x_test"])).argmax(1).numpy() == arrays["y_test"]).mean())
log.info("feature classifier: train accuracy %.3f, test accuracy %.3f", train_accuracy, test_accuracy)
features = {
    "feature_dim": cfg["dim"],
    "channels": arrays["x_train"].shape[1],
    "n_classes": int(arrays["y_train"].max()) + 1,
}
accuracy = {"train_accuracy": train_accuracy, "test_accuracy": test_accuracy}
artifacts.save_model(snakemake.output[0], net.state_dict(), {**features, **accuracy})
loop.finish(settings)
