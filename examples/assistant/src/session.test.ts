import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadHostConfig, startHost, type RunningHost } from "@toolpact/server";
import { decideOnConfirmationPage } from "./confirmation-page-visit.js";
import {
  DEMO_POLICY,
  DEMO_TENANT,
  demoIdentity,
  examplesConfig,
  freePort,
  generateSecrets,
  hostEnvironment,
  setUpTenant,
  type DemoSecrets,
} from "./demo-world.js";
import { mintActorToken, mintPresenceToken } from "./identity.js";
import { createTextNarrator } from "./narrator.js";
import { ASSISTANT_ID, SessionCheckError, runAssistantSession, type AssistantSessionOptions } from "./session.js";
import { adminHeaders, trpcMutation } from "./wire.js";

const USER = { id: "ada", email: "ada@example.com" };
let dir: string;
let host: RunningHost;
let secrets: DemoSecrets;
let pluginKey: string;

/** The whole session's options against the in-process host, narrated into `lines`. */
async function sessionOptions(lines: string[], userId = USER.id): Promise<AssistantSessionOptions> {
  const identity = demoIdentity(secrets);
  const person = { tenantId: DEMO_TENANT, userId };
  return {
    url: host.url,
    pluginKey,
    actorToken: await mintActorToken(identity, person, { level: 1, issuedTo: ASSISTANT_ID }),
    user: { id: userId, email: `${userId}@example.com` },
    narrator: createTextNarrator((line) => lines.push(line)),
    async userApproves(confirmUrl, narrator) {
      const visit = await decideOnConfirmationPage({
        confirmUrl,
        presenceToken: await mintPresenceToken(identity, person),
        decision: "approve",
        onStep: (text) => narrator.say(userId, text),
      });
      expect(visit.status).toBe("approved");
    },
  };
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "toolpact-assistant-"));
  secrets = generateSecrets();
  const env = hostEnvironment(secrets, dir);
  const configFile = path.join(dir, "toolpact.config.json");
  writeFileSync(configFile, JSON.stringify(examplesConfig(dir, await freePort())));
  // The plugins read where to keep their data from the environment when the host activates them.
  process.env.NOTES_DB_PATH = env.NOTES_DB_PATH;
  process.env.MAILER_OUTBOX_PATH = env.MAILER_OUTBOX_PATH;
  try {
    host = await startHost({ config: await loadHostConfig({ cwd: dir, file: configFile, env: {} }), env: { ...env } });
  } finally {
    delete process.env.NOTES_DB_PATH;
    delete process.env.MAILER_OUTBOX_PATH;
  }
  ({ pluginKey } = await setUpTenant(host.url, secrets.adminKey));
});

afterAll(async () => {
  await host?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe("the assistant's scripted session, against a host on 127.0.0.1", () => {
  it("runs every step as the demo tells it", async () => {
    const lines: string[] = [];
    const result = await runAssistantSession(await sessionOptions(lines));
    const text = lines.join("\n");

    expect(host.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(result.noteId).toMatch(/^rec_/);
    expect(result.messageId).toMatch(/^msg_/);
    expect(text).toContain('preview:      Create the note "Q3 plan"');
    expect(text).toContain('preview:      Email "Summary: Q3 plan" to ada@example.com');
    expect(text).toMatch(/ada:\s+read the CSRF token from the approve form and pressed Approve/);
    expect(text).toMatch(/refused:\s+CONFIRMATION_USED: /);
    expect(text).toMatch(/refused:\s+CONFIRMATION_MISMATCH: /);

    const outcomes = result.activity.map((event) => `${event.kind}/${event.phase}/${event.outcome}/${event.errorCode ?? "-"}`);
    expect(outcomes).toEqual(
      expect.arrayContaining(["call/execute/succeeded/-", "call/execute/denied/CONFIRMATION_USED", "call/execute/denied/CONFIRMATION_MISMATCH"]),
    );
    expect(result.activity.some((event) => event.kind === "confirmation" && event.outcome === "approved")).toBe(true);
    // The user's view of the log holds the user's events only.
    expect(result.activity.every((event) => event.actorUserId === undefined || event.actorUserId === USER.id)).toBe(true);
  });

  it("fails its check when a step does not behave as expected (a policy with token mode for mail)", async () => {
    const headers = adminHeaders(secrets.adminKey);
    const tokenModeEverywhere = { ...DEMO_POLICY, rules: DEMO_POLICY.rules.map(({ mode: _mode, ...rule }) => rule) };
    await trpcMutation(host.url, "admin.setPolicy", { tenantId: DEMO_TENANT, policy: tokenModeEverywhere }, headers);
    try {
      const attempt = runAssistantSession(await sessionOptions([], "bea"));
      await expect(attempt).rejects.toThrow(SessionCheckError);
      await expect(attempt).rejects.toThrow(/send-summary should need platform-mode confirmation/);
    } finally {
      await trpcMutation(host.url, "admin.setPolicy", { tenantId: DEMO_TENANT, policy: DEMO_POLICY }, headers);
    }
  });

  it("does not let another signed-in user approve the request on the page", async () => {
    const options = await sessionOptions([], "dee");
    const attempt = runAssistantSession({
      ...options,
      async userApproves(confirmUrl) {
        const intruder = { tenantId: DEMO_TENANT, userId: "mallory" };
        await decideOnConfirmationPage({ confirmUrl, presenceToken: await mintPresenceToken(demoIdentity(secrets), intruder), decision: "approve" });
      },
    });
    await expect(attempt).rejects.toThrow(/the confirmation page answered HTTP (403|404)/);
  });

  it("does not let the assistant approve its own platform-mode request with its credentials", async () => {
    const lines: string[] = [];
    const options = await sessionOptions(lines, "cy");
    const attempt = runAssistantSession({
      ...options,
      async userApproves(confirmUrl) {
        // The page's approve, but sent with the plugin key and actor token instead of a person's session.
        const response = await fetch(`${confirmUrl}/approve`, {
          method: "POST",
          redirect: "manual",
          headers: {
            authorization: `Bearer ${pluginKey}`,
            "x-toolpact-actor": options.actorToken,
            "content-type": "application/x-www-form-urlencoded",
          },
          body: "csrf=forged",
        });
        throw new SessionCheckError(`the assistant's own approve answered HTTP ${response.status}`);
      },
    });
    await expect(attempt).rejects.toThrow(/the assistant's own approve answered HTTP 403/);
  });
});
