/**
 * The JSON-RPC 2.0 client for `hindsight-hooks serve --stdio` (protocol: docs/pi-bridge-protocol.md).
 *
 * Why it is written this way: the extension must never break Pi. So every request has a
 * deadline and an optional abort signal; when either fires, the request is cancelled on the
 * Python side ($/cancelRequest) and the promise rejects at once. When the child exits, every
 * pending request rejects at once. Records are split on "\n" only (never Node's readline, which
 * also splits on U+2028/U+2029 inside JSON strings). The child's stderr is kept as a short tail
 * for error messages and never printed: Pi's terminal belongs to Pi.
 */

import { spawn, type ChildProcess } from "node:child_process";

export const PROTOCOL_VERSION = 1;

/** Why a request did not produce a result. */
export type FailureKind = "timeout" | "aborted" | "gone" | "error";

export class BridgeFailure extends Error {
  readonly kind: FailureKind;
  readonly code: number | undefined;
  readonly data: unknown;

  constructor(kind: FailureKind, message: string, code?: number, data?: unknown) {
    super(message);
    this.kind = kind;
    this.code = code;
    this.data = data;
  }
}

export interface RequestOptions {
  timeoutMs: number;
  signal?: AbortSignal | undefined;
}

/** What the Python side may ask of the host (the plugin's UI). */
export interface BridgeHandlers {
  notify(text: string, level: "info" | "warning" | "error"): void;
  setStatus(key: string, text: string | undefined): void;
  select(title: string, options: string[]): Promise<string | undefined>;
  exited(code: number | null, signal: string | null): void;
}

interface Pending {
  method: string;
  resolve: (value: unknown) => void;
  reject: (reason: BridgeFailure) => void;
  cleanup: () => void;
}

export type JsonObject = Record<string, unknown>;

const STDERR_TAIL_CHARS = 4000;

export function isObject(value: unknown): value is JsonObject {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

export class Bridge {
  readonly child: ChildProcess;
  private buffer = "";
  private stderrTail = "";
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private exitedFlag = false;
  private spawnError: Error | undefined;
  private readonly handlers: BridgeHandlers;

  constructor(command: string, args: string[], cwd: string, handlers: BridgeHandlers) {
    this.handlers = handlers;
    this.child = spawn(command, args, { cwd, stdio: ["pipe", "pipe", "pipe"], env: process.env });
    this.child.stdout?.setEncoding("utf8");
    this.child.stdout?.on("data", (chunk: string) => this.onData(chunk));
    this.child.stderr?.setEncoding("utf8");
    this.child.stderr?.on("data", (chunk: string) => {
      this.stderrTail = (this.stderrTail + chunk).slice(-STDERR_TAIL_CHARS);
    });
    this.child.stdin?.on("error", () => undefined); // EPIPE after the child died: the exit handler reports it
    this.child.on("error", (err: Error) => {
      this.spawnError = err;
      this.onExit(null, null);
    });
    // "close", not "exit": it comes after the pipes are drained, so the stderr tail is complete.
    this.child.on("close", (code: number | null, signal: NodeJS.Signals | null) => this.onExit(code, signal));
  }

  get alive(): boolean {
    return !this.exitedFlag;
  }

  get pid(): number | undefined {
    return this.child.pid;
  }

  /** The last line the child wrote on stderr (for "why did it not start"). */
  lastStderrLine(): string {
    const lines = this.stderrTail.split("\n").map((l) => l.trim()).filter((l) => l.length > 0);
    return lines.length > 0 ? lines[lines.length - 1]! : "";
  }

  startError(): Error | undefined {
    return this.spawnError;
  }

  request(method: string, params: JsonObject, options: RequestOptions): Promise<unknown> {
    if (this.exitedFlag) {
      return Promise.reject(new BridgeFailure("gone", "the memory process is not running"));
    }
    if (options.signal?.aborted) {
      return Promise.reject(new BridgeFailure("aborted", `${method}: aborted`));
    }
    const id = this.nextId++;
    return new Promise<unknown>((resolve, reject) => {
      const cancel = (kind: FailureKind, message: string): void => {
        if (!this.pending.has(id)) return;
        this.settle(id);
        this.send({ jsonrpc: "2.0", method: "$/cancelRequest", params: { id } });
        reject(new BridgeFailure(kind, message));
      };
      const timer = setTimeout(() => cancel("timeout", `${method}: no answer within ${options.timeoutMs} ms`), options.timeoutMs);
      const onAbort = (): void => cancel("aborted", `${method}: aborted`);
      options.signal?.addEventListener("abort", onAbort, { once: true });
      this.pending.set(id, {
        method,
        resolve,
        reject,
        cleanup: () => {
          clearTimeout(timer);
          options.signal?.removeEventListener("abort", onAbort);
        },
      });
      this.send({ jsonrpc: "2.0", id, method, params });
    });
  }

  /** End the session's pipe: stdin closes (the server ends its session), then a kill if it lingers. */
  close(graceMs: number): void {
    if (this.exitedFlag) return;
    try {
      this.child.stdin?.end();
    } catch {
      // already closed
    }
    const timer = setTimeout(() => {
      if (!this.exitedFlag) this.child.kill("SIGTERM");
    }, graceMs);
    timer.unref();
  }

  /** Wait (at most `ms`) for the child to exit. */
  waitForExit(ms: number): Promise<void> {
    if (this.exitedFlag) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, ms);
      this.child.once("close", () => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  private settle(id: number): Pending | undefined {
    const entry = this.pending.get(id);
    if (entry === undefined) return undefined;
    this.pending.delete(id);
    entry.cleanup();
    return entry;
  }

  private send(message: JsonObject): void {
    if (this.exitedFlag || this.child.stdin === null || this.child.stdin.destroyed) return;
    try {
      this.child.stdin.write(JSON.stringify(message) + "\n");
    } catch {
      // the exit handler reports a dead child
    }
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    let newline = this.buffer.indexOf("\n");
    while (newline >= 0) {
      const line = this.buffer.slice(0, newline).replace(/\r$/, "");
      this.buffer = this.buffer.slice(newline + 1);
      if (line.trim().length > 0) this.onLine(line);
      newline = this.buffer.indexOf("\n");
    }
  }

  private onLine(line: string): void {
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      return; // not ours to act on; the server never writes anything but JSON-RPC on stdout
    }
    if (!isObject(message)) return;
    const method = message["method"];
    if (typeof method === "string") {
      void this.onServerMessage(method, message);
      return;
    }
    const id = message["id"];
    if (typeof id !== "number") return;
    const entry = this.settle(id);
    if (entry === undefined) return; // cancelled or timed out: the late answer is dropped
    const error = message["error"];
    if (isObject(error)) {
      const code = typeof error["code"] === "number" ? error["code"] : undefined;
      entry.reject(new BridgeFailure("error", String(error["message"] ?? "error"), code, error["data"]));
    } else {
      entry.resolve(message["result"]);
    }
  }

  private async onServerMessage(method: string, message: JsonObject): Promise<void> {
    const params = isObject(message["params"]) ? message["params"] : {};
    try {
      if (method === "ui/notify") {
        const level = params["level"] === "warning" || params["level"] === "error" ? params["level"] : "info";
        this.handlers.notify(String(params["text"] ?? ""), level);
      } else if (method === "ui/setStatus") {
        const text = typeof params["text"] === "string" ? params["text"] : undefined;
        this.handlers.setStatus(String(params["key"] ?? "hindsight"), text);
      } else if (method === "ui/select" && "id" in message) {
        const options = Array.isArray(params["options"]) ? params["options"].map((o) => String(o)) : [];
        const choice = await this.handlers.select(String(params["title"] ?? ""), options);
        this.send({ jsonrpc: "2.0", id: message["id"], result: { value: choice ?? null } });
      } else if ("id" in message) {
        this.send({ jsonrpc: "2.0", id: message["id"], error: { code: -32601, message: `unknown method: ${method}` } });
      }
    } catch {
      if (method === "ui/select" && "id" in message) {
        this.send({ jsonrpc: "2.0", id: message["id"], result: { value: null } });
      }
    }
  }

  private onExit(code: number | null, signal: string | null): void {
    if (this.exitedFlag) return;
    this.exitedFlag = true;
    for (const id of [...this.pending.keys()]) {
      this.settle(id)?.reject(new BridgeFailure("gone", "the memory process stopped"));
    }
    this.handlers.exited(code, signal);
  }
}
