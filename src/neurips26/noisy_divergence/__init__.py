"""Noisy data and LLM pretraining loss divergence (Zhang et al. 2026, arXiv 2602.02400): paper 09."""
