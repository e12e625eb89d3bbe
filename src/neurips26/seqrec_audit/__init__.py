"""Paper 10: a simple transition-graph heuristic (TGH) audits sequential-recommendation benchmarks for shortcuts."""
