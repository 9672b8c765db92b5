"""The plugin's recall room: automatic recall before a turn (``recall_policy``), its query
(``recall_query``), cache, rendering and tag look-alikes, the snapshot, mental models, the
recall tool's structured details and ``/hindsight:recall-cleanup``.

Layer 4 of ADR 143 (a core below the wiring). Imports nothing itself, so that loading one
module here does not load the rest.
"""
