"""What the referee tells operators: structured logs (and metrics)."""
