/**
 * hindsight-hooks for Pi: long-term memory through `hindsight-hooks serve --stdio`.
 *
 * Pi's extensions are TypeScript and the plugin is Python, so this extension is a thin bridge:
 * on `session_start` it runs one serve process for the session (the Python recorded by
 * `hindsight-hooks install pi`), registers every command and tool that process offers, and then
 * maps Pi's events onto it:
 *
 * | Pi                       | bridge       | what happens                                       |
 * |--------------------------|--------------|----------------------------------------------------|
 * | `session_start`          | `start`      | the plugin's session starts; catalog registered     |
 * | `before_agent_start`     | (restart)    | a process that died is started again, once          |
 * | `context`                | `context`    | recall: the block is added for this model call only |
 * | `agent_end`              | `agentEnd`   | the branch's messages; the plugin retains the new part |
 * | `session_shutdown`       | `shutdown`   | the bounded flush; the process ends                 |
 * | `/hindsight:*` commands  | `command`    | the result is shown with `ctx.ui.notify`            |
 * | tool calls               | `callTool`   | the result goes back to the model                   |
 *
 * The plugin's notices, status line and questions come back as `ui/notify`, `ui/setStatus`
 * and `ui/select` and are shown with Pi's `ctx.ui`. Nothing here decides anything about memory:
 * that is the plugin's job, the same in every host.
 */

import { dirname } from "node:path";
import { fileURLToPath } from "node:url";
import type { AgentToolResult, ExtensionAPI, ExtensionContext } from "@mariozechner/pi-coding-agent";
import type { TSchema } from "typebox";
import { describeFailure, MemorySession, type Catalog } from "./session.ts";
import { loadSettings, type Settings } from "./settings.ts";

type Content = AgentToolResult<unknown>["content"];

function extensionDir(): string {
  try {
    return dirname(fileURLToPath(import.meta.url));
  } catch {
    return typeof __dirname === "string" ? __dirname : process.cwd();
  }
}

function textOf(content: unknown): string {
  if (!Array.isArray(content)) return "";
  for (const part of content) {
    if (typeof part === "object" && part !== null && (part as { type?: unknown }).type === "text") {
      return String((part as { text?: unknown }).text ?? "");
    }
  }
  return "";
}

function register(pi: ExtensionAPI, memory: MemorySession, settings: Settings, catalog: Catalog): void {
  for (const command of catalog.commands) {
    pi.registerCommand(command.name, {
      description: command.usage ? `${command.description} (${command.usage})` : command.description,
      getArgumentCompletions: (prefix: string) => {
        const items = command.completions.filter((c) => c.startsWith(prefix)).map((c) => ({ value: c, label: c }));
        return items.length > 0 ? items : null;
      },
      handler: async (args: string, ctx) => {
        memory.useUi(ctx);
        const line = args.trim() ? `/${command.name} ${args.trim()}` : `/${command.name}`;
        try {
          const result = await memory.request("command", { line }, settings.deadlinesMs.command, ctx.signal);
          const level = result["level"] === "warning" || result["level"] === "error" ? result["level"] : "info";
          memory.notify(String(result["text"] ?? ""), level);
        } catch (err) {
          memory.notify(`/${command.name}: ${describeFailure(err)}`, "error");
        }
      },
    });
  }
  for (const tool of catalog.tools) {
    pi.registerTool({
      name: tool.name,
      label: tool.label,
      description: tool.description,
      parameters: tool.parameters as unknown as TSchema,
      async execute(_toolCallId, params, signal, _onUpdate, ctx) {
        memory.useUi(ctx);
        const result = await memory.request(
          "callTool",
          { name: tool.name, arguments: (params ?? {}) as Record<string, unknown> },
          settings.deadlinesMs.callTool,
          signal,
        );
        const content = (Array.isArray(result["content"]) ? result["content"] : []) as Content;
        if (result["isError"] === true) {
          throw new Error(textOf(content) || `${tool.name} failed`); // Pi reports a thrown error to the model as isError
        }
        return { content, details: result["details"] ?? {} };
      },
    });
  }
}

function branchMessages(ctx: ExtensionContext): unknown[] {
  const messages: unknown[] = [];
  for (const entry of ctx.sessionManager.getBranch()) {
    if (entry.type === "message") messages.push(entry.message);
  }
  return messages;
}

export default function hindsight(pi: ExtensionAPI): void {
  const settings = loadSettings(extensionDir());
  const memory = new MemorySession(settings);

  pi.on("session_start", async (_event, ctx) => {
    const catalog = await memory.open(ctx);
    if (catalog !== undefined) register(pi, memory, settings, catalog);
  });

  pi.on("before_agent_start", async (_event, ctx) => {
    await memory.beforeTurn(ctx);
  });

  pi.on("context", async (event, ctx) => {
    if (!memory.ready) return undefined;
    memory.useUi(ctx);
    const answer = await memory.quiet("context", { messages: event.messages }, settings.deadlinesMs.context, ctx.signal);
    if (answer === undefined) return undefined;
    if (Array.isArray(answer["messages"])) return { messages: answer["messages"] as typeof event.messages };
    if (!Array.isArray(answer["inserts"])) return undefined;
    const messages = event.messages.slice();
    for (const insert of answer["inserts"] as Array<{ index: number; message: (typeof messages)[number] }>) {
      messages.splice(insert.index, 0, insert.message);
    }
    return { messages };
  });

  pi.on("agent_end", async (event, ctx) => {
    if (!memory.ready) return;
    memory.useUi(ctx);
    const branch = branchMessages(ctx);
    const messages = branch.length > 0 ? branch : event.messages;
    await memory.quiet("agentEnd", { messages }, settings.deadlinesMs.agentEnd);
  });

  pi.on("session_shutdown", async (_event, ctx) => {
    // A turn whose agent_end found the process down or slow is still in the branch: hand the
    // branch over once more before the bounded flush, so it is retained now rather than at the
    // session's next turn, which may never come. The retain cursor makes this a no-op when
    // every message is already queued.
    if (memory.ready) {
      const branch = branchMessages(ctx);
      if (branch.length > 0) await memory.quiet("agentEnd", { messages: branch }, settings.deadlinesMs.agentEnd);
    }
    await memory.close();
  });
}
