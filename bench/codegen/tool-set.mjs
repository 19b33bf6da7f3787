// A deterministic set of provider manifests with varied tool schemas (enums, nested objects, arrays of
// objects, $defs/$ref, oneOf), and what the benchmark needs to call each tool: a valid input literal,
// and the same input schema as zod source for the tRPC router.

const VERBS = ["create", "update", "list", "archive", "send"];
const NOUNS = ["record", "invoice", "contact", "ticket"];
const EFFECTS = ["read", "write", "read", "external", "write"];

/** mulberry32: the same numbers on every machine. */
function random(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function inputSchemaFor(kind, next, index) {
  const word = (n) => `field${n}${Math.floor(next() * 9)}`;
  const status = { enum: ["draft", "open", "closed", `custom${index % 7}`] };
  switch (kind) {
    case 0: // flat object with an enum and bounds
      return {
        type: "object",
        properties: {
          title: { type: "string", minLength: 1, maxLength: 200 },
          status,
          count: { type: "integer", minimum: 0, maximum: 1000 },
          flag: { type: "boolean" },
          [word(1)]: { type: "string" },
        },
        required: ["title", "status"],
        additionalProperties: false,
      };
    case 1: // a nested object with required fields, and an array of strings
      return {
        type: "object",
        properties: {
          name: { type: "string" },
          address: {
            type: "object",
            properties: { street: { type: "string" }, city: { type: "string" }, zip: { type: "string", pattern: "^[0-9]{5}$" } },
            required: ["street", "city"],
          },
          tags: { type: "array", items: { type: "string" } },
        },
        required: ["name", "address"],
      };
    case 2: // arrays of objects holding arrays
      return {
        type: "object",
        properties: {
          lines: {
            type: "array",
            items: {
              type: "object",
              properties: {
                sku: { type: "string" },
                quantity: { type: "integer", minimum: 1 },
                options: { type: "array", items: { type: "object", properties: { key: { type: "string" }, value: { type: "string" } }, required: ["key"] } },
              },
              required: ["sku", "quantity"],
            },
          },
          note: { type: "string" },
        },
        required: ["lines"],
      };
    case 3: // $defs referenced twice
      return {
        type: "object",
        properties: { from: { $ref: "#/$defs/party" }, to: { $ref: "#/$defs/party" }, amount: { type: "number" }, status },
        required: ["from", "to", "amount"],
        $defs: {
          party: {
            type: "object",
            properties: { id: { type: "string" }, kind: { enum: ["person", "company"] }, email: { type: "string", format: "email" } },
            required: ["id", "kind"],
          },
        },
      };
    default: // oneOf with a const discriminator
      return {
        type: "object",
        properties: {
          target: {
            oneOf: [
              {
                type: "object",
                properties: { kind: { const: "user" }, userId: { type: "string" } },
                required: ["kind", "userId"],
                additionalProperties: false,
              },
              {
                type: "object",
                properties: { kind: { const: "group" }, groupId: { type: "string" }, role: { enum: ["member", "admin"] } },
                required: ["kind", "groupId"],
                additionalProperties: false,
              },
            ],
          },
          message: { type: "string", maxLength: 500 },
        },
        required: ["target", "message"],
      };
  }
}

function outputSchemaFor(kind) {
  if (kind === 4) return undefined; // results of these tools are `unknown`
  return {
    type: "object",
    properties: {
      id: { type: "string" },
      createdAt: { type: "string", format: "date-time" },
      state: { enum: ["ok", "queued"] },
      items: { type: "array", items: { type: "object", properties: { id: { type: "string" }, label: { type: "string" } }, required: ["id"] } },
    },
    required: ["id", "state"],
  };
}

/** `providers` manifests as written (the loader applies defaults) of `toolsEach` tools each. */
export function createToolSet(providers, toolsEach) {
  const next = random(47);
  const manifests = [];
  for (let p = 0; p < providers; p++) {
    const tools = [];
    for (let t = 0; t < toolsEach; t++) {
      const index = p * toolsEach + t;
      const kind = index % 5;
      const effect = EFFECTS[(index * 7) % EFFECTS.length];
      const outputSchema = outputSchemaFor(kind);
      tools.push({
        name: `${VERBS[t % VERBS.length]}-${NOUNS[Math.floor(t / VERBS.length) % NOUNS.length]}${t >= 20 ? `-${t}` : ""}`,
        version: 1,
        title: `Tool ${t} of provider ${p}`,
        description: `Benchmark tool ${index}.`,
        effect,
        inputSchema: inputSchemaFor(kind, next, index),
        ...(outputSchema ? { outputSchema } : {}),
      });
    }
    manifests.push({
      id: `com.bench.provider-${p}`,
      version: "1.0.0",
      permissions: ["tools:provide"],
      tools,
    });
  }
  return manifests;
}

/** The client name codegen gives a bench provider and the method name of a tool. */
export const clientName = (manifest) => manifest.id.slice(manifest.id.lastIndexOf(".") + 1).replace(/-([a-z0-9])/g, (_, c) => c.toUpperCase());
export const methodName = (tool) => tool.name.replace(/-([a-z0-9])/g, (_, c) => c.toUpperCase());

function deref(root, schema) {
  return schema.$ref
    ? schema.$ref
        .slice(2)
        .split("/")
        .reduce((node, key) => node[key], root)
    : schema;
}

/** A minimal valid value for a schema (required properties only) as TypeScript source. */
export function inputLiteral(root, schema = root) {
  const s = deref(root, schema);
  if (s.oneOf) return inputLiteral(root, s.oneOf[0]);
  if (s.const !== undefined) return JSON.stringify(s.const);
  if (s.enum) return JSON.stringify(s.enum[0]);
  switch (s.type) {
    case "object": {
      const required = s.required ?? [];
      return `{ ${required.map((name) => `${JSON.stringify(name)}: ${inputLiteral(root, s.properties[name])}`).join(", ")} }`;
    }
    case "array":
      return `[${inputLiteral(root, s.items)}]`;
    case "integer":
    case "number":
      return String(s.minimum ?? 1);
    case "boolean":
      return "true";
    default:
      return s.pattern ? '"12345"' : '"text"';
  }
}

/** The zod source of an input schema (the tRPC router's equivalent of the JSON Schema). */
export function zodSource(root, schema = root) {
  if (schema.$ref) return zodSource(root, deref(root, schema));
  if (schema.oneOf) return `z.union([${schema.oneOf.map((branch) => zodSource(root, branch)).join(", ")}])`;
  if (schema.const !== undefined) return `z.literal(${JSON.stringify(schema.const)})`;
  if (schema.enum) return `z.enum([${schema.enum.map((value) => JSON.stringify(value)).join(", ")}])`;
  switch (schema.type) {
    case "object": {
      const required = new Set(schema.required ?? []);
      const fields = Object.entries(schema.properties ?? {}).map(
        ([name, sub]) => `${JSON.stringify(name)}: ${zodSource(root, sub)}${required.has(name) ? "" : ".optional()"}`,
      );
      return `${schema.additionalProperties === false ? "z.strictObject" : "z.object"}({ ${fields.join(", ")} })`;
    }
    case "array":
      return `z.array(${zodSource(root, schema.items)})`;
    case "integer":
      return `z.number().int()${schema.minimum !== undefined ? `.min(${schema.minimum})` : ""}${schema.maximum !== undefined ? `.max(${schema.maximum})` : ""}`;
    case "number":
      return "z.number()";
    case "boolean":
      return "z.boolean()";
    default:
      return `z.string()${schema.minLength !== undefined ? `.min(${schema.minLength})` : ""}${schema.maxLength !== undefined ? `.max(${schema.maxLength})` : ""}${schema.pattern ? `.regex(/${schema.pattern}/)` : ""}`;
  }
}
