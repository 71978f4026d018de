// Drives an ACP agent over stdio with the official TypeScript SDK's v2 client
// (@agentclientprotocol/sdk 2.4.0, entry point experimental/v2) and reports, one JSON object per
// line on stdout, every frame both ways and every outcome the SDK gave the app, for
// tests/e2e/test_v2_client.py to check.
//
//   node driver.mjs --cwd DIR [--step STEP]... -- AGENT [ARGS...]
//
// Steps, run in order after `initialize` (each reads the session's updates it causes):
//   new                  session/new in --cwd (the session every later step uses)
//   prompt TEXT          session/prompt, then the session's updates up to its idle state
//   cancel TEXT          session/prompt, session/cancel at the first agent chunk, read to idle
//   resume ID            session/resume of session ID with replayFrom {type: "start"}, then
//                        the updates the SDK queued up to the state snapshot
//   close                session/close of the session
//
// Records: {"agent_pid"}, {"dir": "c2a"|"a2c", "frame"}, {"sdk": STEP, "ok", "value"|"error"},
// {"delivered": TAG} (an update the SDK handed the app; "stop" for an idle state), {"sdk_log"}
// (what the SDK printed: it logs and drops a frame it cannot parse), {"done"}, {"agent_exit"}.

import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import * as acp from "@agentclientprotocol/sdk/experimental/v2";

const argv = process.argv.slice(2);
const dash = argv.indexOf("--");
if (dash < 0 || dash === argv.length - 1) {
  process.stderr.write("usage: node driver.mjs --cwd DIR [--step STEP]... -- AGENT [ARGS...]\n");
  process.exit(2);
}
let cwd = process.cwd();
const steps = [];
for (let i = 0; i < dash; i += 2) {
  if (argv[i] === "--cwd") cwd = argv[i + 1];
  else if (argv[i] === "--step") steps.push(argv[i + 1]);
  else {
    process.stderr.write(`unknown option ${argv[i]}\n`);
    process.exit(2);
  }
}
const [command, ...args] = argv.slice(dash + 1);

function emit(record) {
  process.stdout.write(JSON.stringify(record) + "\n");
}

// The SDK reports a frame it drops only on console.error: record it (a test fails on it).
console.error = (...parts) => emit({ sdk_log: parts.map((p) => String(p?.message ?? p)) });

const child = spawn(command, args, { stdio: ["pipe", "pipe", "inherit"], env: process.env });
emit({ agent_pid: child.pid });
const exited = new Promise((resolve) =>
  child.on("exit", (code, signal) => {
    emit({ agent_exit: { code, signal } });
    resolve();
  }),
);

const raw = acp.ndJsonStream(Writable.toWeb(child.stdin), Readable.toWeb(child.stdout));
const readable = raw.readable.pipeThrough(
  new TransformStream({
    transform(frame, controller) {
      emit({ dir: "a2c", frame });
      controller.enqueue(frame);
    },
  }),
);
const writer = raw.writable.getWriter();
const writable = new WritableStream({
  async write(frame) {
    emit({ dir: "c2a", frame });
    await writer.write(frame);
  },
  async close() {
    await writer.close();
  },
});

function failure(error) {
  return { name: error?.name, code: error?.code, message: String(error?.message ?? error), data: error?.data };
}

async function step(name, run) {
  try {
    const value = await run();
    emit({ sdk: name, ok: true, value: value ?? null });
    return value;
  } catch (error) {
    emit({ sdk: name, ok: false, error: failure(error) });
    throw error;
  }
}

async function readToIdle(session, onUpdate = () => {}) {
  for (;;) {
    const message = await session.nextUpdate(AbortSignal.timeout(60_000));
    emit({ delivered: message.kind === "stop" ? "stop" : message.update.sessionUpdate });
    if (message.kind === "stop") return message;
    onUpdate(message.update);
  }
}

const app = acp
  .client({ name: "acp-server-tests" })
  .onNotification(acp.methods.client.session.update, () => {})
  .onRequest(acp.methods.client.session.requestPermission, async ({ params }) => {
    const allow = params.options.find((o) => o.kind === "allow_once") ?? params.options[0];
    return { outcome: { outcome: "selected", optionId: allow.optionId } };
  })
  .onRequest(acp.methods.client.elicitation.create, async () => ({ action: "decline" }))
  .onNotification(acp.methods.client.elicitation.complete, () => {});

await app
  .connectWith({ readable, writable }, async (agent) => {
    await step("initialize", () =>
      agent.request(acp.methods.agent.initialize, {
        protocolVersion: acp.PROTOCOL_VERSION,
        info: { name: "acp-server-tests", version: "1" },
        capabilities: {},
      }),
    );
    let session;
    for (const spec of steps) {
      const [name, ...rest] = spec.split(" ");
      const text = rest.join(" ");
      if (name === "new") {
        session = await agent.buildSession(cwd).start().catch((error) => {
          emit({ sdk: "session/new", ok: false, error: failure(error) });
          throw error;
        });
        emit({ sdk: "session/new", ok: true, value: session.newSessionResponse });
      } else if (name === "prompt") {
        await step("session/prompt", () => session.prompt(text));
        const stop = await readToIdle(session);
        emit({ sdk: "idle", ok: true, value: { stopReason: stop.stopReason ?? null } });
      } else if (name === "cancel") {
        const answered = step("session/prompt", () => session.prompt(text)).catch(() => {});
        let sent = false;
        const stop = await readToIdle(session, (update) => {
          if (!sent && update.sessionUpdate === "agent_message_chunk") {
            sent = true;
            void step("session/cancel", () =>
              agent.notify(acp.methods.agent.session.cancel, { sessionId: session.sessionId }),
            );
          }
        });
        await answered;
        emit({ sdk: "idle", ok: true, value: { stopReason: stop.stopReason ?? null, cancelSent: sent } });
      } else if (name === "resume") {
        session = agent.attachSession({ sessionId: text });
        await step("session/resume", () =>
          agent.request(acp.methods.agent.session.resume, {
            sessionId: text,
            cwd,
            replayFrom: { type: "start" },
          }),
        );
        const stop = await readToIdle(session);
        emit({ sdk: "snapshot", ok: true, value: { stopReason: stop.stopReason ?? null } });
      } else if (name === "close") {
        await step("session/close", () =>
          agent.request(acp.methods.agent.session.close, { sessionId: session.sessionId }),
        );
      } else {
        throw new Error(`unknown step ${spec}`);
      }
    }
    session?.dispose();
  })
  .then(
    () => emit({ done: true }),
    (error) => emit({ done: false, error: failure(error) }),
  );

child.stdin.end();
await exited;
