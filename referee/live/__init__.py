"""The spectator hub: games being played right now, move by move, for whoever watches them
(the Arena service, the web front, the workers' live feed)."""
