"""Paper 06: information-theoretic measures, with Shapley attribution, for auditing unfairness bias in training data."""
