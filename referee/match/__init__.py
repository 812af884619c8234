"""One game: the match runner around the engine's adjudicator, written against a seat protocol; each
seat's transcript and failure packs, reconnect windows, reports and records."""
