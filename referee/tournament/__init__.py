"""Tournaments: formats, pairings and the runner that plays them."""
