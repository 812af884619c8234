"""Students' uploaded bots: hostile-archive vetting, the content-addressed store, validation
games, quotas. The entry point is :class:`referee.submissions.service.Submissions` (or the
one-shot :func:`referee.submissions.service.submit`); see docs/submissions.md.

Importing this package stays light; import the modules you need.
"""
