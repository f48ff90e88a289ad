"""Computes the answer with torch itself: rejected by the custom-code rule in every backend."""
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
    def forward(self, a, b):
        return a + b
