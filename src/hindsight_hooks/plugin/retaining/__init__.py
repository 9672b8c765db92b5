"""The plugin's retain wiring: ``agent_end``'s automatic retain (``retain_policy``) and the
background and shutdown flushes (``flusher``). The retain path itself (cursor, projection,
jobs, delivery) is the retain core, the top-level ``hindsight_hooks.retain`` package (ADR 144),
which the importer shares; this room is only the plugin's use of it.

Layer 4 of ADR 143. Imports nothing itself.
"""
