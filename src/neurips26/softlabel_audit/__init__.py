"""Paper 15: human soft labels against synthetic labels, decoupled from label mode shifts (arXiv 2605.18648)."""
