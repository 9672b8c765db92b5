/**
 * One Pi session's memory: the serve process, its start, its one restart, and the notices.
 *
 * The rules (issue 11, "never break Pi"):
 * - Python missing, too old, or speaking another protocol: one clear message at session start,
 *   then memory stays off and every handler returns at once, as if the extension were absent.
 * - A call that misses its deadline or is aborted is cancelled on the Python side and the turn
 *   goes on without memory; a slow call is reported once per kind of call, not every turn.
 * - The process dies: one notice, pending calls give up at once, and it is started again, once,
 *   before the next prompt. What it had acknowledged is in the retain queue on disk, which the
 *   restarted session delivers; the transcript is sent whole at each agent end, so the turn it
 *   missed is retained then (the plugin's cursor skips what is already stored).
 */

import type { ExtensionContext } from "@mariozechner/pi-coding-agent";
import { Bridge, BridgeFailure, isObject, type JsonObject, PROTOCOL_VERSION } from "./bridge.ts";
import type { Settings } from "./settings.ts";

export interface CommandInfo {
  name: string;
  description: string;
  usage: string;
  completions: string[];
}

export interface ToolInfo {
  name: string;
  label: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface Catalog {
  commands: CommandInfo[];
  tools: ToolInfo[];
}

type Level = "info" | "warning" | "error";
type Ui = Pick<ExtensionContext, "ui" | "hasUI">;
type Json = JsonObject;

function asList<T>(value: unknown, pick: (item: Json) => T | undefined): T[] {
  if (!Array.isArray(value)) return [];
  const out: T[] = [];
  for (const item of value) {
    const picked = isObject(item) ? pick(item) : undefined;
    if (picked !== undefined) out.push(picked);
  }
  return out;
}

export function describeFailure(err: unknown): string {
  if (err instanceof BridgeFailure) return err.message;
  return err instanceof Error ? err.message : String(err);
}

export class MemorySession {
  off = false;
  private readonly settings: Settings;
  private bridge: Bridge | undefined;
  private ui: Ui | undefined;
  private restartsLeft = 1;
  private closing = false;
  private readonly told = new Set<string>();
  private startParams: Json = {};
  private cwd = process.cwd();

  constructor(settings: Settings) {
    this.settings = settings;
  }

  /** The context whose UI the plugin's notices, status and questions go to (the latest one). */
  useUi(ctx: Ui): void {
    this.ui = ctx;
  }

  get pid(): number | undefined {
    return this.bridge?.alive ? this.bridge.pid : undefined;
  }

  get ready(): boolean {
    return !this.off && !this.closing && this.bridge !== undefined && this.bridge.alive;
  }

  notify(text: string, level: Level): void {
    const ui = this.ui;
    try {
      if (ui !== undefined && ui.hasUI) {
        ui.ui.notify(text, level);
        return;
      }
    } catch {
      // a stale context after session replacement: fall through to stderr
    }
    process.stderr.write(`[hindsight] ${text}\n`);
  }

  tellOnce(key: string, text: string, level: Level): void {
    if (this.told.has(key)) return;
    this.told.add(key);
    this.notify(text, level);
  }

  /** Start memory for this session; the catalog to register, or `undefined` when memory is off. */
  async open(ctx: ExtensionContext): Promise<Catalog | undefined> {
    this.ui = ctx;
    this.cwd = ctx.cwd;
    const sessionFile = ctx.sessionManager.getSessionFile();
    this.startParams = {
      protocolVersion: PROTOCOL_VERSION,
      cwd: ctx.cwd,
      hostName: "pi",
      ...(sessionFile ? { sessionFile } : { sessionId: `pi-${ctx.sessionManager.getSessionId()}` }),
    };
    if (!(await this.launch())) {
      this.off = true;
      return undefined;
    }
    const deadline = { timeoutMs: this.settings.deadlinesMs.catalog };
    try {
      const [commands, tools] = await Promise.all([
        this.bridge!.request("commands", {}, deadline),
        this.bridge!.request("tools", {}, deadline),
      ]);
      return {
        commands: asList(isObject(commands) ? commands["commands"] : undefined, (c) =>
          typeof c["name"] === "string"
            ? {
                name: c["name"],
                description: String(c["description"] ?? ""),
                usage: String(c["usage"] ?? ""),
                completions: Array.isArray(c["completions"]) ? c["completions"].map((x: unknown) => String(x)) : [],
              }
            : undefined,
        ),
        tools: asList(isObject(tools) ? tools["tools"] : undefined, (t) =>
          typeof t["name"] === "string" && isObject(t["parameters"])
            ? {
                name: t["name"],
                label: String(t["label"] ?? t["name"]),
                description: String(t["description"] ?? ""),
                parameters: t["parameters"],
              }
            : undefined,
        ),
      };
    } catch (err) {
      this.tellOnce("catalog", `hindsight: memory started, but its commands and tools could not be listed (${describeFailure(err)})`, "warning");
      return { commands: [], tools: [] };
    }
  }

  /** Before a prompt: start the process again if it died (once per session). */
  async beforeTurn(ctx: Ui): Promise<void> {
    this.ui = ctx;
    if (this.off || this.closing || (this.bridge !== undefined && this.bridge.alive)) return;
    if (this.restartsLeft <= 0) {
      this.off = true;
      return;
    }
    this.restartsLeft -= 1;
    if (await this.launch()) {
      this.notify("hindsight: the memory process was restarted", "info");
    } else {
      this.off = true;
    }
  }

  /** A request whose failure the caller reports (commands, tools). Throws `BridgeFailure`. */
  async request(method: string, params: Json, timeoutMs: number, signal?: AbortSignal): Promise<Json> {
    if (!this.ready) {
      throw new BridgeFailure("gone", this.off ? "memory is off for this session" : "the memory process is not running");
    }
    const answer = await this.bridge!.request(method, params, { timeoutMs, signal });
    return isObject(answer) ? answer : {};
  }

  /** A request on the turn's path (context, agent end): any failure is `undefined`, told once. */
  async quiet(method: string, params: Json, timeoutMs: number, signal?: AbortSignal): Promise<Json | undefined> {
    if (!this.ready) return undefined;
    try {
      return await this.request(method, params, timeoutMs, signal);
    } catch (err) {
      if (err instanceof BridgeFailure && err.kind === "timeout") {
        this.tellOnce(
          `slow:${method}`,
          `hindsight: memory did not answer ${method} within ${timeoutMs} ms; the turn went on without it`,
          "warning",
        );
      } else if (err instanceof BridgeFailure && err.kind === "error") {
        this.tellOnce(`error:${method}`, `hindsight: ${method} failed: ${err.message}`, "warning");
      }
      return undefined;
    }
  }

  /** End the session: the bounded flush on the Python side, then the process ends. */
  async close(): Promise<void> {
    if (this.closing) return;
    const bridge = this.bridge;
    const alive = this.ready;
    this.closing = true;
    if (bridge === undefined) return;
    if (alive) {
      try {
        await bridge.request("shutdown", {}, { timeoutMs: this.settings.deadlinesMs.shutdown });
      } catch {
        // the queue on disk keeps whatever was not delivered
      }
    }
    bridge.close(2000);
    await bridge.waitForExit(3000);
  }

  private async launch(): Promise<boolean> {
    let started = false;
    let exit = "";
    const bridge = new Bridge(this.settings.python, this.settings.args, this.cwd, {
      notify: (text, level) => this.notify(text, level),
      setStatus: (key, text) => {
        try {
          if (this.ui?.hasUI) this.ui.ui.setStatus(key, text);
        } catch {
          // stale context
        }
      },
      select: async (title, options) => {
        const ui = this.ui;
        if (ui === undefined || !ui.hasUI) return undefined;
        return ui.ui.select(title, options);
      },
      exited: (code, signal) => {
        exit = signal !== null ? `signal ${signal}` : `exit code ${code ?? "?"}`;
        if (!started || this.closing || this.bridge !== bridge) return;
        if (this.restartsLeft > 0) {
          this.notify(
            `hindsight: the memory process stopped (${exit}); this turn goes on without memory and it restarts for your next prompt. Memories it had queued are safe on disk.`,
            "warning",
          );
        } else {
          this.off = true;
          this.notify(`hindsight: the memory process stopped again (${exit}); memory is off for the rest of this session.`, "error");
        }
      },
    });
    this.bridge = bridge;
    try {
      const answer = await bridge.request("start", this.startParams, { timeoutMs: this.settings.deadlinesMs.start });
      if (!isObject(answer) || answer["protocolVersion"] !== PROTOCOL_VERSION) {
        throw new BridgeFailure("error", `it answered protocol ${JSON.stringify(isObject(answer) ? answer["protocolVersion"] : answer)}`);
      }
      started = true;
      return true;
    } catch (err) {
      bridge.close(0);
      await bridge.waitForExit(2000);
      this.tellOnce("start", this.startFailure(bridge, err, exit), "error");
      return false;
    }
  }

  private startFailure(bridge: Bridge, err: unknown, exit: string): string {
    const python = this.settings.python;
    const fix = `Install hindsight-hooks in a Python 3.11+ environment and run \`hindsight-hooks install pi\` from it (this records which Python Pi runs; settings: ${this.settings.source}).`;
    const head = "hindsight: memory is off for this session:";
    const spawnError = bridge.startError() as NodeJS.ErrnoException | undefined;
    if (spawnError !== undefined) {
      return `${head} Python was not found at ${python} (${spawnError.code ?? spawnError.message}). ${fix}`;
    }
    if (err instanceof BridgeFailure && err.code === -32003) {
      const data = isObject(err.data) ? JSON.stringify(err.data["supported"]) : "?";
      return `${head} the hindsight-hooks at ${python} speaks bridge protocol ${data}, this extension speaks ${PROTOCOL_VERSION}. Upgrade hindsight-hooks, then run \`hindsight-hooks install pi\` again.`;
    }
    if (err instanceof BridgeFailure && err.kind === "gone") {
      const why = bridge.lastStderrLine() || exit || "it exited";
      return `${head} ${python} could not run hindsight-hooks (${why}). ${fix}`;
    }
    return `${head} ${python} did not start hindsight-hooks (${describeFailure(err)}). ${fix}`;
  }
}
