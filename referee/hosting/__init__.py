"""Hosting games on a server: pairing (matchmaker, challenges), casual games, the ladder of
submitted bots, hosted tournaments with their presence and skipped-game notices, and the read
services (Arena, Submissions, live feeds) over what was played and stored."""
