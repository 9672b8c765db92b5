"""Importing past sessions into memory (BEHAVIOUR.md §12).

The pure half parses files and builds documents; the runner half writes them through the
durable queue and keeps a manifest and a checkpoint so a re-run is cheap and an interrupted
run resumes. Module map:

* ``pi_session`` — Pi session JSONL (v1–v3) → a tree of entries, its leaves and branches;
* ``chat_transcript`` — chat / gateway event JSONL → kept messages;
* ``chunking`` — curated turns and byte-bounded chunks;
* ``quality`` — the ``strict`` profile's noise filter;
* ``documents`` — the §12 document (content, hash, context, tags, metadata);
* ``manifest`` / ``checkpoint`` — the two state files;
* ``queue_ops`` — stale / identical queued jobs and "is it still queued?";
* ``sources`` — which files belong to this project, discovery;
* ``runner`` — preview and the real import.
"""
