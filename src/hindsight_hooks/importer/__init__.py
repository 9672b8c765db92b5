"""Importing past sessions into memory (docs/import.md).

The pure half parses files and builds documents; the runner half writes them through the
durable queue and keeps a manifest and a checkpoint so a re-run is cheap and an interrupted
run resumes. Module map:

* ``formats`` — which kind of file this is, by its content;
* ``pi_session`` — Pi session JSONL (v1–v3) → a tree of entries, its leaves and branches;
* ``chat_transcript`` — chat / gateway event JSONL → kept messages;
* ``jsonl_lines``, ``claude_session``, ``codex_session`` — the Claude Code and Codex transcript
  readers, shared with their hook adapters in ``hosts/`` (ADR-110);
* ``claude_import``, ``codex_import``, ``host_import`` — those sessions as documents that skip
  what the hooks retained, through the session's own retain cursor (ADR-110);
* ``chunking`` — curated turns and byte-bounded chunks;
* ``quality`` — the ``strict`` profile's noise filter;
* ``documents`` — the docs/import.md document (content, hash, context, tags, metadata);
* ``manifest`` / ``checkpoint`` — the two state files;
* ``queue_ops`` — stale / identical queued jobs and "is it still queued?";
* ``sources``, ``claude_sources``, ``codex_sources``, ``discovery`` — which files belong to this
  project, and where each agent keeps them;
* ``runner`` — preview and the real import.
"""
