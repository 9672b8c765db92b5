"""``hindsight-hooks migrate --to hindsight``: the embedded store's banks copied to a Hindsight server.

The path for someone who outgrows one machine (ADR 150-153, docs/migrate.md). Split by job:
``source`` reads the embedded store through SQLite, ``progress`` is the resumable record of
what is done, ``run`` sends batches and checks the server, ``switch`` points the project's
config at the server. Only the CLI imports this package; the hook path never does.
"""
