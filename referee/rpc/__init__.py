"""The gRPC read services beside the Play stream: the Arena service (tables, tournaments,
games, live games) and the Submissions service (uploads and what each caller may see), faces
over storage and over the games being hosted, as ``web/`` is over HTTP."""
