"""Paper 17: GPLVM with amortized structured stochastic variational inference (work in progress: the quick data,
the SE-ARD psi-statistics, the mean-field and structured bounds, the models and the reconstruction metrics; no rules,
claims or report yet)."""
