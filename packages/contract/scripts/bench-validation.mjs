// Validation per call: toolpact's own evaluator (compileSchema, built dist) against the ajv path it replaced
// (packages/contract/src/validation.ts before commit ebb68f8: ajv 8 with allErrors, ownProperties,
// strictNumbers, ajv-formats with its regexes on RE2, RE2 patterns, issues converted the same way; the
// linear uniqueItems and url checks are left out, as no case uses them), side by side in one process,
// alternating batches so that both see the same machine. Run after a build:
//   pnpm --filter @toolpact/contract bench-validation [-- --seconds 3]
import { parseArgs } from "node:util";
import { Ajv2020 } from "ajv/dist/2020.js";
import * as ajvFormats from "ajv-formats";
import { fullFormats } from "ajv-formats/dist/formats.js";
import { RE2JS } from "re2js";
import { compileSchema } from "../dist/index.js";
import { escapePointerSegment } from "../dist/input.js";

const addFormats = ajvFormats.default ?? ajvFormats;

/** The old engine's options and regExp engine (RE2 through re2js' own translation, as it was). */
function oldEngine() {
  const regExp = Object.assign(
    (pattern, flags) => {
      const compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
      return { test: (text) => compiled.test(text), toString: () => `/${pattern}/${flags}` };
    },
    { code: "toolpact:re2js" },
  );
  const ajv = new Ajv2020({
    allErrors: true,
    ownProperties: true,
    strictSchema: false,
    strictNumbers: true,
    strictTypes: false,
    strictTuples: false,
    strictRequired: false,
    validateFormats: true,
    logger: false,
    code: { regExp },
  });
  addFormats(ajv);
  // Its formats: each ajv-formats regex that RE2 can run, on RE2.
  for (const [name, format] of Object.entries(fullFormats)) {
    if (!(format instanceof RegExp) || name === "url") continue;
    let compiled;
    try {
      compiled = RE2JS.compile(RE2JS.translateRegExp(format.source), format.flags.includes("i") ? RE2JS.CASE_INSENSITIVE : 0);
    } catch {
      continue;
    }
    ajv.addFormat(name, { type: "string", validate: (text) => compiled.test(text) });
  }
  return ajv;
}

/** The old conversion of ajv's errors into issues (required and additionalProperties point at the member). */
function toIssues(errors) {
  const issues = [];
  const seen = new Set();
  for (const error of errors) {
    let path = error.instancePath;
    if (error.keyword === "required") path += `/${escapePointerSegment(String(error.params.missingProperty))}`;
    if (error.keyword === "additionalProperties") path += `/${escapePointerSegment(String(error.params.additionalProperty))}`;
    const issue = { path, message: error.message ?? error.keyword };
    const key = issue.path + "\u0000" + issue.message;
    if (seen.has(key)) continue;
    seen.add(key);
    issues.push(issue);
  }
  return issues;
}

const NO_ISSUES = Object.freeze([]);

function oldValidator(ajv, schema) {
  const validate = ajv.compile(structuredClone(schema));
  return (value) => (validate(value) ? NO_ISSUES : toIssues(validate.errors ?? []));
}

const TASK = {
  type: "object",
  properties: {
    title: { type: "string", minLength: 1, maxLength: 200 },
    slug: { type: "string", maxLength: 64 },
    priority: { enum: ["low", "normal", "high"] },
    due: { type: "integer", minimum: 0 },
    tags: { type: "array", items: { type: "string", maxLength: 32 }, maxItems: 10 },
    done: { type: "boolean" },
  },
  required: ["title", "slug", "priority"],
  additionalProperties: false,
};
const TASK_WITH_PATTERN = { ...TASK, properties: { ...TASK.properties, slug: { type: "string", pattern: "^[a-z0-9]+(-[a-z0-9]+)*$", maxLength: 64 } } };
const TASK_INPUT = { title: "Q3 plan", slug: "q3-plan", priority: "high", due: 1_767_225_600, tags: ["planning", "q3"], done: false };
const ORDER = {
  type: "object",
  properties: {
    customer: { type: "string", minLength: 1 },
    lines: {
      type: "array",
      maxItems: 100,
      items: {
        type: "object",
        properties: { sku: { type: "string", maxLength: 32 }, quantity: { type: "integer", minimum: 1 }, note: { type: "string", maxLength: 200 } },
        required: ["sku", "quantity"],
        additionalProperties: false,
      },
    },
  },
  required: ["customer", "lines"],
  additionalProperties: false,
};
const ORDER_INPUT = {
  customer: "c-17",
  lines: Array.from({ length: 20 }, (_, index) => ({ sku: `sku-${index}`, quantity: index + 1, ...(index % 3 === 0 ? { note: "gift wrap" } : {}) })),
};
const CHOICE = {
  type: "object",
  properties: {
    target: {
      oneOf: [
        { type: "object", properties: { email: { type: "string", format: "email" } }, required: ["email"] },
        { type: "object", properties: { phone: { type: "string", maxLength: 20 } }, required: ["phone"] },
      ],
    },
    when: { type: "string", format: "date-time" },
    count: { anyOf: [{ type: "integer" }, { type: "null" }] },
  },
  required: ["target"],
};
const CHOICE_INPUT = { target: { phone: "+41 44 000 00 00" }, when: "2026-01-01T09:00:00Z", count: null };

const CASES = [
  ["6 fields, no pattern: valid", TASK, TASK_INPUT, 0],
  ["6 fields, no pattern: 3 issues (wrong type, missing, extra)", TASK, { ...TASK_INPUT, title: 7, slug: undefined, colour: "red" }, 3],
  ["6 fields with a pattern: valid", TASK_WITH_PATTERN, TASK_INPUT, 0],
  ["6 fields with a pattern: pattern fails", TASK_WITH_PATTERN, { ...TASK_INPUT, slug: "Not A Slug" }, 1],
  ["20 order lines (array of small objects): valid", ORDER, ORDER_INPUT, 0],
  [
    "20 order lines: one line invalid",
    ORDER,
    { ...ORDER_INPUT, lines: ORDER_INPUT.lines.map((line, index) => (index === 13 ? { ...line, quantity: 0 } : line)) },
    1,
  ],
  ["oneOf, anyOf, formats: valid", CHOICE, CHOICE_INPUT, 0],
].map(([name, schema, input, issues]) => [name, schema, JSON.parse(JSON.stringify(input)), issues]);

/** Median nanoseconds per call of each contender, from alternating batches over about `seconds`. */
function race(contenders, { seconds, batch }) {
  const samples = contenders.map(() => []);
  const deadline = performance.now() + seconds * 1000;
  for (let round = 0; performance.now() < deadline || round < 10; round++) {
    contenders.forEach((call, index) => {
      const started = performance.now();
      for (let i = 0; i < batch; i++) call();
      samples[index].push(((performance.now() - started) * 1e6) / batch);
    });
  }
  return samples.map((list) => list.sort((a, b) => a - b)[Math.floor(list.length / 2)]);
}

const { values } = parseArgs({ options: { seconds: { type: "string", default: "2" } } });
const seconds = Number(values.seconds);
const ajv = oldEngine();
const rows = [];
for (const [name, schema, input, issues] of CASES) {
  const old = oldValidator(ajv, schema);
  const own = compileSchema(schema);
  const answers = [old(input), own.validate(input)];
  for (const answer of answers) if (answer.length !== issues) throw new Error(`${name}: expected ${issues} issues, got ${JSON.stringify(answer)}`);
  const [oldNs, ownNs] = race([() => old(input), () => own.validate(input)], { seconds, batch: 2_000 });
  rows.push([name, oldNs, ownNs]);
}
const ns = (value) => (value >= 1000 ? `${(value / 1000).toFixed(2)} µs` : `${value.toFixed(0)} ns`);
console.log("| per call (median of alternating batches) | ajv path (before ebb68f8) | toolpact evaluator | evaluator ÷ ajv |");
console.log("| --- | ---: | ---: | ---: |");
for (const [name, oldNs, ownNs] of rows) console.log(`| ${name} | ${ns(oldNs)} | ${ns(ownNs)} | ${(ownNs / oldNs).toFixed(2)} |`);
console.log(`\nNode ${process.version}, about ${seconds} s per row.`);
