"""One game: the adjudicator, the match runner around it, clocks, verdicts, reports and records."""
