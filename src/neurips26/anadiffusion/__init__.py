"""Paper 03, AnaDiffusion: anatomically compositional latent diffusion for controllable 3D brain MRI generation
(Han, Liu et al., arXiv 2608.23014; project page AnaDiffusion/AnaDiffusion.github.io)."""
