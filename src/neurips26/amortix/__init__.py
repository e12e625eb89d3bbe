"""Paper 19, AMORTIX: amortized scaffold-constrained molecular optimization with group-relative policy gradients."""
