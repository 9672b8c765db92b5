"""The plugin's control room: what a person or the model drives. Slash commands
(``commands``, ``import_commands``, ``memories`` and its export format), the model-facing
tools and their parameter models (``tools``, ``tool_params``) and ``/hindsight:doctor``.

Layer 6 of ADR 143 (the wiring): it may use the recall and retain rooms, the runtime and the
importer; nothing below imports it. Imports nothing itself.
"""
