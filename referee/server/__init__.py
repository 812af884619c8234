"""The gRPC play wire: the server's lifecycle, play sessions and their lobby, the login gate
(tokens, roles per call, throttling) and the bounds of every request field."""
