"""The retain core: from a session's messages to durable jobs to delivery (ADR 144).

Below the plugin's wiring and the importer, above the queue and the backends: it takes the
queue and the backend it needs, never the plugin's session runtime, and the queue never calls
back up into it. docs/retain.md walks the path; docs/design.md#layers places it.
"""
