"""Small-model policies: heuristics that plug into the loop at named hook points."""
