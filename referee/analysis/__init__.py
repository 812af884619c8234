"""Tools that make bots better: the pentanomial SPRT, openings books, reference-bot anchors,
record replay and annotation (see ``docs/tools.md``)."""
