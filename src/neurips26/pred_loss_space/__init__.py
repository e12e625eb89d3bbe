"""Paper 01: prediction space vs loss space in denoising generative models (the 3x3 x/eps/v matrix)."""
