/**
 * Which Python to run and how long to wait for it.
 *
 * `hindsight-hooks install pi` writes `hindsight.json` beside this file with the absolute path
 * of the Python that has hindsight-hooks installed, so Pi never depends on PATH or on an
 * activated virtualenv. `HINDSIGHT_PI_PYTHON` overrides it (for a one-off run). Deadlines
 * are per call: a Python that is slower than its deadline costs one turn its memory, never the
 * turn itself. They can be tuned in `hindsight.json` under `deadlinesMs`.
 */

import { readFileSync } from "node:fs";
import { join } from "node:path";

export interface Deadlines {
  start: number;
  catalog: number;
  context: number;
  agentEnd: number;
  command: number;
  callTool: number;
  shutdown: number;
}

export interface Settings {
  python: string;
  args: string[];
  deadlinesMs: Deadlines;
  source: string;
}

export const SETTINGS_FILE = "hindsight.json";
export const SERVE_MODULE = "hindsight_hooks.hosts.serve_stdio";

/** Defaults in milliseconds: the plugin bounds its own work (recall, flush) well inside these. */
export const DEFAULT_DEADLINES: Deadlines = {
  start: 20000,
  catalog: 10000,
  context: 15000,
  agentEnd: 15000,
  command: 120000,
  callTool: 60000,
  shutdown: 12000,
};

function positive(value: unknown, fallback: number): number {
  return typeof value === "number" && Number.isFinite(value) && value > 0 ? value : fallback;
}

export function loadSettings(extensionDir: string, env: NodeJS.ProcessEnv = process.env): Settings {
  const path = join(extensionDir, SETTINGS_FILE);
  let raw: Record<string, unknown> = {};
  let source = path;
  try {
    const parsed: unknown = JSON.parse(readFileSync(path, "utf8"));
    if (typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)) {
      raw = parsed as Record<string, unknown>;
    }
  } catch {
    source = `${path} (missing or unreadable: using python3 from PATH)`;
  }
  const given = raw["deadlinesMs"];
  const deadlines: Record<string, unknown> = typeof given === "object" && given !== null ? (given as Record<string, unknown>) : {};
  const python = env["HINDSIGHT_PI_PYTHON"] || (typeof raw["python"] === "string" ? raw["python"] : "") || "python3";
  return {
    python,
    args: ["-m", SERVE_MODULE, "--stdio"],
    deadlinesMs: {
      start: positive(deadlines["start"], DEFAULT_DEADLINES.start),
      catalog: positive(deadlines["catalog"], DEFAULT_DEADLINES.catalog),
      context: positive(deadlines["context"], DEFAULT_DEADLINES.context),
      agentEnd: positive(deadlines["agentEnd"], DEFAULT_DEADLINES.agentEnd),
      command: positive(deadlines["command"], DEFAULT_DEADLINES.command),
      callTool: positive(deadlines["callTool"], DEFAULT_DEADLINES.callTool),
      shutdown: positive(deadlines["shutdown"], DEFAULT_DEADLINES.shutdown),
    },
    source: env["HINDSIGHT_PI_PYTHON"] ? "HINDSIGHT_PI_PYTHON" : source,
  };
}
