"""The referee: gRPC server, match runner, tournaments, ratings, storage and CLI.

Kept free of imports on purpose: course bots import ``referee.game`` and must not pay for
(or be broken by) the server machinery.
"""
