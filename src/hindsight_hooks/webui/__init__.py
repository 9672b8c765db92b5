"""``hindsight-hooks ui``: a small page on loopback to browse, search and forget memories (ADR 155).

Imported only by the ``ui`` subcommand (``cli_webui``), never by the plugin or the hook path.
``actions`` runs the existing commands, ``render`` turns their answers into escaped HTML,
``server`` serves them with a one-time token to this machine only.
"""
