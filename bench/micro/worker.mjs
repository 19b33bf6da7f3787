// The micro costs of toolpact's guarantees, in process: input validation (toolpact's compiled JSON Schema,
// its own exact evaluator with ECMA-262 patterns on RE2) against zod's safeParse of the same shape, confirmation token mint and verify,
// the JWT libraries a token could be made with (side by side, same checks), the canonical input digest,
// and AES-256-GCM sealing of kept payloads. Uses the built dist.
import { createHmac, randomBytes } from "node:crypto";
import { canonicalJson, compileSchema, inputDigest, prepareInput, schemaHash } from "@toolpact/contract";
import { z } from "zod";
import { ConfirmationTokens } from "../../packages/runtime/dist/confirmation/confirmation-tokens.js";
import { PayloadCipher } from "../../packages/runtime/dist/sealed/payload-cipher.js";
import { costPerCall } from "../lib/measure.mjs";
import { serveRequests } from "../lib/processes.mjs";
import { tokenCandidates } from "./token-candidates.mjs";

const SMALL_SCHEMA = {
  type: "object",
  properties: {
    title: { type: "string", minLength: 1, maxLength: 200 },
    slug: { type: "string", pattern: "^[a-z0-9]+(-[a-z0-9]+)*$", maxLength: 64 },
    priority: { enum: ["low", "normal", "high"] },
    due: { type: "integer", minimum: 0 },
    tags: { type: "array", items: { type: "string", maxLength: 32 }, maxItems: 10 },
    done: { type: "boolean" },
  },
  required: ["title", "slug", "priority"],
  additionalProperties: false,
};
const smallZod = z.strictObject({
  title: z.string().min(1).max(200),
  slug: z
    .string()
    .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/)
    .max(64),
  priority: z.enum(["low", "normal", "high"]),
  due: z.number().int().min(0).optional(),
  tags: z.array(z.string().max(32)).max(10).optional(),
  done: z.boolean().optional(),
});
const SMALL_INPUT = { title: "Q3 plan", slug: "q3-plan", priority: "high", due: 1_767_225_600, tags: ["planning", "q3"], done: false };

/** A JSON object of about `bytes` bytes: records with strings, numbers, booleans and nested arrays. */
function inputOfSize(bytes) {
  const records = [];
  let size = 2;
  for (let i = 0; size < bytes; i++) {
    const record = { id: `rec-${i}`, title: `Record number ${i} of the benchmark`, score: i * 1.5, open: i % 2 === 0, tags: ["alpha", "beta", String(i)] };
    records.push(record);
    size += JSON.stringify(record).length + 1;
  }
  return { kind: "bench", records };
}

async function run({ seconds }) {
  const results = [];
  const measure = async (group, name, operation, batch, extra = {}) => {
    results.push({ group, name, ...(await costPerCall(operation, { seconds, batch })), ...extra });
  };

  // 1. Input validation per call.
  const validator = compileSchema(SMALL_SCHEMA);
  if (validator.validate(SMALL_INPUT).length !== 0 || !smallZod.safeParse(SMALL_INPUT).success) throw new Error("the small input must be valid on both sides");
  if (validator.validate({ ...SMALL_INPUT, slug: "Not A Slug" }).length === 0 || smallZod.safeParse({ ...SMALL_INPUT, slug: "Not A Slug" }).success) {
    throw new Error("an invalid slug must fail on both sides");
  }
  await measure("validation", "zod safeParse", () => smallZod.safeParse(SMALL_INPUT), 2_000);
  await measure("validation", "toolpact compileSchema(...).validate (exact evaluator, RE2 pattern)", () => validator.validate(SMALL_INPUT), 2_000);
  await measure("validation", "toolpact step 4: prepareInput (bounded frozen copy) + validate", () => validator.validate(prepareInput(SMALL_INPUT)), 2_000);

  // 2a. The candidate JWT libraries, mint and verify of the same confirmation claims with the same checks.
  const { candidates, claims } = await tokenCandidates(new Uint8Array(randomBytes(32)), "bench");
  for (const candidate of candidates) {
    const token = await candidate.mint(claims);
    await measure("jwt", `${candidate.name}: mint`, () => candidate.mint(claims), 200, { library: candidate.name, op: "mint" });
    await measure("jwt", `${candidate.name}: verify`, () => candidate.verify(token, claims.iat), 200, { library: candidate.name, op: "verify" });
  }

  // 2b. Confirmation tokens, made and checked as the runtime does (HS256 via fast-jwt, HMAC input digest).
  const tokens = await ConfirmationTokens.create([{ kid: "bench", key: new Uint8Array(randomBytes(32)) }], 300, Date.now);
  /** @type {import("../../packages/runtime/dist/confirmation/binding.js").ConfirmationBinding} */
  const binding = {
    tenantId: "bench-tenant",
    actorUserId: "bench-user",
    callerPluginId: "bench.load-client",
    providerId: "bench.items",
    tool: "put-item",
    version: 1,
    schemaHash: schemaHash(SMALL_SCHEMA),
    effect: "write",
    mode: "token",
    input: prepareInput(SMALL_INPUT), // the validated, frozen copy the pipeline binds
  };
  const minted = await tokens.mint(binding);
  await tokens.verify(minted.token, binding, "bench.items:put-item@1");
  await measure("token", "mint (sign, HS256 + input digest)", () => tokens.mint(binding), 200);
  await measure(
    "token",
    "verify (header, signature, expiry, binding claims, input digest)",
    () => tokens.verify(minted.token, binding, "bench.items:put-item@1"),
    200,
  );

  // 3. Canonical digest of 1 KB and 1 MB inputs, against HMAC over plain JSON.stringify (no canonical form).
  const digestKey = new Uint8Array(randomBytes(32));
  for (const [label, bytes, batch] of [
    ["1 KB", 1_000, 500],
    ["1 MB", 1_000_000, 1],
  ]) {
    // Frozen, as the pipeline's validated input is (1 MB stays under the default 1 MiB input limit).
    const input = prepareInput(inputOfSize(bytes));
    const size = canonicalJson(input).length;
    await measure(
      "digest",
      `HMAC-SHA256 over JSON.stringify, ${label}`,
      () => createHmac("sha256", digestKey).update(JSON.stringify(input)).digest("base64url"),
      batch,
      { bytes: size },
    );
    await measure("digest", `inputDigest (RFC 8785 canonical JSON + HMAC-SHA256), ${label}`, () => inputDigest(digestKey, input), batch, { bytes: size });
    await measure("digest", `prepareInput (bounded frozen copy), ${label}`, () => prepareInput(input), batch, { bytes: size });
  }

  // 4. AES-256-GCM of kept payloads (seal when stored, open when read back), per row-bound AAD.
  const cipher = new PayloadCipher(new Uint8Array(randomBytes(32)));
  for (const [label, bytes, batch] of [
    ["1 KB", 1_000, 500],
    ["1 MB", 1_000_000, 1],
  ]) {
    const text = JSON.stringify(inputOfSize(bytes));
    const sealed = cipher.seal(text, "op:bench");
    if (cipher.open(sealed, "op:bench") !== text) throw new Error("a sealed payload must open to the same text");
    await measure("cipher", `seal, ${label}`, () => cipher.seal(text, "op:bench"), batch, { bytes: text.length });
    await measure("cipher", `open, ${label}`, () => cipher.open(sealed, "op:bench"), batch, { bytes: text.length });
  }
  return results;
}

serveRequests({ run });
