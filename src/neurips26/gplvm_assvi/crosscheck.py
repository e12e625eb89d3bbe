r"""Our bound against GPyTorch's on a case both compute exactly (the check K1 of paper 17, and a test).

With the latents known (``s = 0``) the Bayesian GPLVM's bound of :func:`.elbo.elbo_terms` without its
``KL(q(X))`` term is the sparse variational GP bound of Hensman et al. 2013 for each output ``d``: GPyTorch's
``VariationalELBO`` of an ``ApproximateGP`` with an ``UnwhitenedVariationalStrategy`` over the same inducing inputs,
a ``CholeskyVariationalDistribution`` set to our ``q(u_d)``, a ``ScaleKernel(RBFKernel)`` with our SE-ARD settings
and a ``GaussianLikelihood`` with noise ``1 / beta``. GPyTorch averages over the data points, so each output's bound
is multiplied by its number of observed entries; missing entries are left out of that output's data.
"""

from __future__ import annotations

import torch

from .elbo import JITTER, elbo_terms

__all__ = ["gpytorch_bound", "our_bound_at_means"]


def gpytorch_bound(x, y, mask, z, m, chol_s, variance, alpha, beta) -> float:
    """GPyTorch's sparse variational bound summed over the outputs, for latents ``x`` (N, Q) held fixed."""
    import gpytorch
    from gpytorch.distributions import MultivariateNormal
    from gpytorch.variational import CholeskyVariationalDistribution, UnwhitenedVariationalStrategy

    jitter = float(JITTER * variance)

    class _Strategy(UnwhitenedVariationalStrategy):
        @property
        def prior_distribution(self):  # GPyTorch's prior adds a fixed 1e-3 jitter; ours adds the strategy's
            out = self.model.forward(self.inducing_points)
            return MultivariateNormal(out.mean, out.lazy_covariance_matrix.add_jitter(self.jitter_val))

    class _SVGP(gpytorch.models.ApproximateGP):
        def __init__(self):
            dist = CholeskyVariationalDistribution(len(z))
            super().__init__(_Strategy(self, z, dist, learn_inducing_locations=False, jitter_val=jitter))
            self.mean_module = gpytorch.means.ZeroMean()
            self.covar_module = gpytorch.kernels.ScaleKernel(gpytorch.kernels.RBFKernel(ard_num_dims=z.shape[1]))

        def forward(self, inputs):
            return MultivariateNormal(self.mean_module(inputs), self.covar_module(inputs))

    total = 0.0
    with torch.no_grad():
        for d in range(y.shape[1]):
            rows = mask[:, d]
            if not rows.any():
                continue
            model = _SVGP().to(y.dtype)
            model.covar_module.outputscale = variance
            model.covar_module.base_kernel.lengthscale = alpha.rsqrt()
            dist = model.variational_strategy._variational_distribution
            dist.variational_mean.copy_(m[d])
            dist.chol_variational_covar.copy_(chol_s[d])
            model.variational_strategy.variational_params_initialized.fill_(1)  # else the first call resets q(u)
            likelihood = gpytorch.likelihoods.GaussianLikelihood(
                noise_constraint=gpytorch.constraints.GreaterThan(0.0)
            ).to(y.dtype)
            likelihood.noise = 1 / beta
            n = int(rows.sum())
            bound = gpytorch.mlls.VariationalELBO(likelihood, model, num_data=n)
            model.train()
            likelihood.train()
            total += n * float(bound(model(x[rows]), y[rows, d]))
    return total


def our_bound_at_means(x, y, mask, z, m, chol_s, variance, alpha, beta) -> float:
    """Our bound's likelihood minus KL(q(U)) with the latents at ``x`` and zero latent variance."""
    terms = elbo_terms(y, mask, x, torch.zeros_like(x), z, m, chol_s, variance, alpha, beta)
    return float(terms["likelihood"] - terms["kl_u"])
