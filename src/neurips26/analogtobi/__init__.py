"""AnalogToBi: analog circuit topologies as bipartite device-net walks, with grammar-guided decoding (Kim et al.
2026, arXiv 2603.08720): paper 02."""
