"""One game on a referee server: its seats (launched or remote), a local match between bot
specs, and the stored row of a finished game."""
