"""Governance: who may see and store what (modes, tags, identity, scopes, redaction, router)."""
