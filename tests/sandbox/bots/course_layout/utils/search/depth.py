"""Nested in the namespace helper folder."""

DEPTH = 2
