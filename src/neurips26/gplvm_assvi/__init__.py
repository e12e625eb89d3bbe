"""Paper 17: GPLVM with amortized structured stochastic variational inference (work in progress: data and the
SE-ARD psi-statistics only; no rules yet)."""
