"""VAIR, the production-evaluation gap on valid-answer-invalid-reasoning solutions (arXiv 2606.01462): paper 08."""
