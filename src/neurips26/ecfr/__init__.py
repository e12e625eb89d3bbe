"""Paper 11: ECFR, efficient cross-modal feature reconstruction for unified multi-class multimodal anomaly detection
(work in progress: the procedural RGB + depth data)."""
