"""Score every run of one dataset of paper 17: the predictive mixture on the hidden entries (RMSE, NLPD with and
without the noise, 95% coverage), the reconstructions' distance to the true manifold, the bound (the structured one
by Monte Carlo), our bound against GPyTorch's at the latent means (check K1), with latent variance against GPyTorch
averaged over latent draws and the psi-statistics against a Monte Carlo of ``evaluate.psi_draws`` latent draws (K3)
and, structured, the bound given a draw of U against its Monte Carlo (K4), each with its standard error; the latents
for the plots, the uncertainty map, the breadth of q(U) relative to the noise, and how much the structured
posterior moves with U (with the inner steps, and the encoder alone)."""

import numpy as np
import pandas as pd
import torch

from neurips26.common.io import write_parquet
from neurips26.common.runtime import job_provenance, start_job
from neurips26.gplvm_assvi import crosscheck, evaluation, metrics
from neurips26.gplvm_assvi.elbo import draw_u
from neurips26.gplvm_assvi.experiment import build_model
from neurips26.gplvm_assvi.models import StructuredGPLVM, predictive_samples

p = snakemake.params
dataset = snakemake.wildcards.dataset
log = start_job(snakemake)
data = dict(np.load(snakemake.input.data))
surface = np.load(snakemake.input.surface)
y, mask = torch.as_tensor(data["y"]), torch.as_tensor(data["mask"])
e = p.evaluate
rows, latents, grids = [], [], []
for (method, seed), path in zip(p.runs, snakemake.input.models):
    torch.manual_seed(seed)
    model = build_model(method, y, mask, p.dataset, p.model, seed)
    model.load_state_dict(torch.load(path)["state"])
    model.eval()
    gen = torch.Generator().manual_seed(seed)
    means, variances = (t.numpy() for t in predictive_samples(model, y, mask, e["predictive_samples"], gen))
    noise = float(1 / model.log_beta.exp())
    reconstruction = means.mean(0)
    row = metrics.score(means, variances, data, reconstruction, surface if len(surface) else None)
    row["nlpd_without_noise"] = metrics.score(means, np.maximum(variances - noise, 1e-12), data, reconstruction, None)[
        "nlpd"
    ]
    with torch.no_grad():
        if isinstance(model, StructuredGPLVM):
            bound = float(model.objective(y, mask, samples=e["bound_samples"]))
        else:
            bound = float(model.objective(y, mask))
        mu, s = (t.detach() for t in model.latent(y, mask))
    params = dict(z=model.z.detach(), m=model.m.detach(), chol_s=model.chol_s().detach(),
                  variance=model.log_variance.exp().detach(), alpha=model.log_alpha.exp().detach(),
                  beta=model.log_beta.exp().detach())  # fmt: skip
    ours = crosscheck.our_bound_at_means(mu, y, mask, **params)
    theirs = crosscheck.gpytorch_bound(mu, y, mask, **params)
    check_gen = torch.Generator().manual_seed(seed)
    psi_z, psi_error = crosscheck.psi_bound_z(mu, s, y, mask, **params, draws=e["bound_samples"],
                                              generator=check_gen, with_error=True)  # fmt: skip
    statistics = crosscheck.psi_statistics_z(mu, s, params["z"], params["variance"], params["alpha"],
                                             draws=e["psi_draws"], generator=check_gen)  # fmt: skip
    given_u_z = given_u_error = float("nan")
    if isinstance(model, StructuredGPLVM):
        u = draw_u(params["m"], params["chol_s"], check_gen)
        mu_u, s_u = (t.detach() for t in model.latent_given_u(y, mask, u))
        fixed = {k: v for k, v in params.items() if k not in ("m", "chol_s")}
        given_u_z, given_u_error = crosscheck.structured_given_u_z(
            mu_u, s_u, u, y, mask, **fixed, draws=e["psi_draws"], generator=check_gen, with_error=True
        )
    rho, grid = evaluation.grid_table(model, mu, e["grid"])
    row.update(
        dataset=dataset, method=method, seed=seed, elbo=bound / len(y), noise_variance=noise,
        uncertainty_spearman=rho, bound_at_means_ours=ours, bound_at_means_gpytorch=theirs,
        crosscheck_relative=abs(ours - theirs) / max(abs(theirs), 1e-300), crosscheck_psi_z=psi_z,
        crosscheck_given_u_z=given_u_z, crosscheck_psi_error=psi_error, crosscheck_given_u_error=given_u_error,
        crosscheck_psi_stats_z=max(abs(v[0]) for v in statistics.values()),
        crosscheck_psi_stats_detectable=max(abs(v[1] / v[2]) for v in statistics.values()),
        **{f"crosscheck_{name}_z": v[0] for name, v in statistics.items()},
        latent_sd=float(s.sqrt().mean()), qu_breadth=evaluation.qu_breadth(model, mu),
        latent_dependence=evaluation.latent_dependence(model, y, mask, 16, gen),
        latent_dependence_encoder=evaluation.latent_dependence(model, y, mask, 16, gen, inner_steps=0),
        points=len(y),
    )  # fmt: skip
    log.info("%s seed %d: %s", method, seed, {k: round(v, 4) for k, v in row.items() if isinstance(v, float)})
    rows.append(row)
    latents.append(
        pd.DataFrame({f"x{q}": mu[:, q].numpy() for q in range(mu.shape[1])}).assign(
            coordinate=data["coordinate"], dataset=dataset, method=method, seed=seed
        )
    )
    grids.append(pd.DataFrame(grid).assign(dataset=dataset, method=method, seed=seed))
prov = job_provenance(snakemake)
write_parquet(pd.DataFrame(rows), snakemake.output.metrics, prov)
write_parquet(pd.concat(latents, ignore_index=True), snakemake.output.latents, prov)
write_parquet(pd.concat(grids, ignore_index=True), snakemake.output.grid, prov)
