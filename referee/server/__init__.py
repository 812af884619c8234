"""The gRPC server: lifecycle, play sessions, lobby, matchmaker, auth, Arena service, live feeds."""
