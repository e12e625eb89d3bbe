"""Symmetry-compatible matrix optimizers (Lau and Su 2026, arXiv 2605.18106): paper 07."""
