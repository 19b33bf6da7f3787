import { EFFECTS, MAX_VERIFICATION_LEVEL, type Effect } from "@toolpact/protocol";
import { z } from "zod";
import { withoutUndefined } from "./without-undefined.js";
import { PLUGIN_ID_MAX_LENGTH, PLUGIN_ID_PATTERN, RESERVED_TOOL_NAMES, TOOL_NAME_MAX_LENGTH, TOOL_NAME_PATTERN, TOOL_PATTERN } from "./names.js";

/** Manifest permissions and what each one allows a plugin to declare or do. */
export const PERMISSIONS = ["tools:provide", "tools:call", "tools:gate", "tools:observe", "tools:guard"] as const;
/** One of PERMISSIONS. */
export type Permission = (typeof PERMISSIONS)[number];

/** Declared recovery capability: "idempotent" lets recovery re-invoke the tool with the same operation id. */
export const RECOVERY_CAPABILITIES = ["none", "idempotent"] as const;
/** One of RECOVERY_CAPABILITIES. */
export type RecoveryCapability = (typeof RECOVERY_CAPABILITIES)[number];

/** A tool's timeout when its declaration gives none. */
export const DEFAULT_TOOL_TIMEOUT_MS = 10_000;
/** The longest timeout a tool may declare, ms. */
export const MAX_TOOL_TIMEOUT_MS = 600_000;
/** The longest timeout a gate, hook or guard may declare, ms. */
export const MAX_SEAM_TIMEOUT_MS = 60_000;
/** The longest `title` of a tool and `name` of a plugin. */
export const TITLE_MAX_LENGTH = 200;
/** The longest `description` of a plugin, tool, gate, hook or guard. */
export const DESCRIPTION_MAX_LENGTH = 4000;

const pluginId = z
  .string()
  .max(PLUGIN_ID_MAX_LENGTH, `a plugin id has at most ${PLUGIN_ID_MAX_LENGTH} characters`)
  .regex(PLUGIN_ID_PATTERN, 'a plugin id is lowercase dot-separated segments, e.g. "com.example.notes"');

const localName = (what: string) =>
  z
    .string()
    .max(TOOL_NAME_MAX_LENGTH, `a ${what} name has at most ${TOOL_NAME_MAX_LENGTH} characters`)
    .regex(TOOL_NAME_PATTERN, `a ${what} name is lowercase words joined by single hyphens, e.g. "create-record"`);

/** A tool name; reserved names are refused (in JSON Schema: `not: { enum: [...] }`, see manifest-json-schema.ts). */
export const toolNameSchema = localName("tool")
  .refine((name) => !RESERVED_TOOL_NAMES.has(name), {
    message: "this tool name collides with a JavaScript built-in on the generated client object; choose another name",
  })
  .meta({ description: 'Local tool name, e.g. "create-record"; its full name is <pluginId>:<name>@<version>.' });

/** A tool pattern: `*`, `<pluginId>:*`, `<pluginId>:<tool>`, `<pluginId>:<tool>@<version>`. */
const toolPattern = z.string().regex(TOOL_PATTERN, 'a tool pattern is "*", "<pluginId>:*", "<pluginId>:<tool>" or "<pluginId>:<tool>@<version>"');

/** A JSON Schema document; its content is checked against the meta-schema by the loader. */
const jsonSchema = z.record(z.string(), z.unknown());
const describe = (description: string): { description: string } => ({ description });
const description = () => z.string().max(DESCRIPTION_MAX_LENGTH);
const seamTimeout = () => z.number().int().min(1).max(MAX_SEAM_TIMEOUT_MS);

/** A tool's name on an upstream MCP server (MCP allows `_`, `.`, capitals; toolpact names do not). */
export const UPSTREAM_TOOL_NAME_PATTERN = /^[\x21-\x7E]{1,128}$/;

/** One tool declaration, as written in the manifest (defaults not yet applied). */
export const toolDeclarationSchema = z.strictObject({
  name: toolNameSchema,
  version: z
    .number()
    .int("version is a positive integer")
    .positive("version is a positive integer")
    .optional()
    .meta(describe("Positive integer, default 1; several versions of a tool may coexist.")),
  title: z.string().min(1).max(TITLE_MAX_LENGTH).optional().meta(describe("Short human title, shown on confirmation.")),
  description: description().optional().meta(describe("What the tool does; becomes JSDoc of the generated client.")),
  effect: z.enum(EFFECTS).meta(describe("read: no mutation; write: mutates plugin-owned data; external: reaches outside the instance.")),
  requiresConfirmation: z.boolean().optional().meta(describe('Default: effect !== "read". Policy may tighten this, never loosen it.')),
  minVerificationLevel: z
    .number()
    .int()
    .min(0)
    .max(MAX_VERIFICATION_LEVEL)
    .optional()
    .meta(describe(`Lowest actor verification level (0..${MAX_VERIFICATION_LEVEL}) allowed to call the tool; default 0.`)),
  recovery: z.enum(RECOVERY_CAPABILITIES).optional().meta(describe('"idempotent" lets recovery re-invoke the tool with the same operationId; default "none".')),
  timeoutMs: z
    .number()
    .int()
    .min(1)
    .max(MAX_TOOL_TIMEOUT_MS)
    .optional()
    .meta(describe(`Provider timeout in ms; default ${DEFAULT_TOOL_TIMEOUT_MS}.`)),
  inputSchema: jsonSchema.meta(describe('JSON Schema (2020-12, or draft-07 via "$schema") of the input; its root is "type": "object".')),
  outputSchema: jsonSchema.optional().meta(describe("JSON Schema of the result; results are validated against it.")),
  upstreamName: z
    .string()
    .regex(UPSTREAM_TOOL_NAME_PATTERN, 'an upstream tool name is 1 to 128 printable ASCII characters without spaces, e.g. "read_file"')
    .optional()
    .meta(describe('The tool\'s name on the upstream MCP server, e.g. "read_file"; only with "upstream"; default: the tool\'s "name".')),
});

/** One gate declaration; needs the tools:gate permission. */
export const gateDeclarationSchema = z.strictObject({
  name: localName("gate"),
  description: description().optional(),
  appliesTo: z.array(toolPattern).min(1),
  timeoutMs: seamTimeout().optional(),
});

/** One afterTool hook declaration; needs the tools:observe permission. */
export const hookDeclarationSchema = z.strictObject({
  name: localName("hook"),
  description: description().optional(),
  point: z.literal("afterTool"),
  appliesTo: z.array(toolPattern).min(1),
  timeoutMs: seamTimeout().optional(),
});

/** One output guard declaration; needs the tools:guard permission. */
export const guardDeclarationSchema = z.strictObject({
  name: localName("guard"),
  description: description().optional(),
  appliesTo: z.array(toolPattern).min(1),
  timeoutMs: seamTimeout().optional(),
});

/** How a provider's code runs: in the host's process (the default, for first-party plugins) or in a child process. */
export const ISOLATION_MODES = ["in-process", "process"] as const;
/** One of ISOLATION_MODES. */
export type IsolationMode = (typeof ISOLATION_MODES)[number];

/** An upstream's or isolated child's calls in flight when the manifest gives no bound. */
export const DEFAULT_UPSTREAM_MAX_IN_FLIGHT = 16;
/** The most calls in flight a manifest may allow one upstream or isolated child. */
export const MAX_UPSTREAM_MAX_IN_FLIGHT = 1024;
/** An isolated child's heap limit when the manifest gives none, MB. */
export const DEFAULT_ISOLATED_MEMORY_MB = 256;
/** The smallest and largest heap limit a manifest may give an isolated child, MB. */
export const MIN_ISOLATED_MEMORY_MB = 16;
export const MAX_ISOLATED_MEMORY_MB = 65_536;

/** An environment variable name a child process may be given. */
const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'an environment variable name is letters, digits and underscores, e.g. "API_BASE"');
/** What a child process sees of the environment: literal values, and names whose values it gets from the host's environment. */
const childEnvironment = {
  env: z
    .record(envName, z.string())
    .optional()
    .meta(describe("Variables the child sees, with these values (nothing else from the host's environment, except passEnv).")),
  passEnv: z.array(envName).optional().meta(describe('Names of host environment variables passed through to the child, e.g. ["HOME"].')),
};
/** Supervision bounds shared by upstream servers and isolated children. */
const supervision = {
  maxInFlight: z
    .number()
    .int()
    .min(1)
    .max(MAX_UPSTREAM_MAX_IN_FLIGHT)
    .optional()
    .meta(describe(`Calls in flight at most; more are refused as RATE_LIMITED. Default ${DEFAULT_UPSTREAM_MAX_IN_FLIGHT}.`)),
};

/** An MCP server started as a child process and spoken to over stdio. */
export const stdioUpstreamSchema = z.strictObject({
  command: z.string().min(1).meta(describe('The program to start, e.g. "npx" or an absolute path.')),
  args: z.array(z.string()).optional().meta(describe("Its arguments.")),
  cwd: z.string().min(1).optional().meta(describe("Its working directory, relative to the plugin folder; default the plugin folder.")),
  ...childEnvironment,
  ...supervision,
});

/** An MCP server reached over Streamable HTTP. */
export const httpUpstreamSchema = z.strictObject({
  url: z.url({ protocol: /^https?$/ }).meta(describe("Its Streamable HTTP endpoint, e.g. https://mcp.example.com/mcp.")),
  tokenFile: z
    .string()
    .min(1)
    .optional()
    .meta(describe("A file holding the bearer token sent to it, relative to the plugin folder; refused when group or others can read it.")),
  ...supervision,
});

/** An upstream MCP server: a stdio command or a Streamable HTTP URL. */
export const upstreamSchema = z.union([stdioUpstreamSchema, httpUpstreamSchema]);

/** An isolated provider's child process: its environment and limits. */
export const processIsolationSchema = z.strictObject({
  memoryMb: z
    .number()
    .int()
    .min(MIN_ISOLATED_MEMORY_MB)
    .max(MAX_ISOLATED_MEMORY_MB)
    .optional()
    .meta(describe(`The child's JavaScript heap limit, MB; beyond it the child is stopped and its calls fail. Default ${DEFAULT_ISOLATED_MEMORY_MB}.`)),
  ...childEnvironment,
  ...supervision,
});

/**
 * The manifest's field-level shape. Cross-field rules (uniqueness, permissions)
 * live in `checkManifestRules`, which runs even when field-level errors exist.
 */
export const manifestSchema = z.strictObject({
  $schema: z.string().optional().meta(describe("The JSON Schema editors use for this file.")),
  id: pluginId.meta(describe('Plugin id: lowercase dot-separated segments, e.g. "com.example.notes".')),
  alias: z
    .string()
    .regex(/^[a-z][A-Za-z0-9]*$/, 'an alias is a camelCase identifier, e.g. "notes"')
    .optional()
    .meta(describe("Client name in generated code (tools.<alias>); default: the last id segment, camelCased.")),
  name: z.string().min(1).max(TITLE_MAX_LENGTH).optional().meta(describe("Human name of the plugin.")),
  description: description().optional().meta(describe("What the plugin does.")),
  version: z
    .string()
    .regex(/^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/, 'version is semver, e.g. "1.4.0"')
    .meta(describe('The plugin\'s semver version, e.g. "1.4.0".')),
  permissions: z
    .array(z.enum(PERMISSIONS))
    .default([])
    .meta(describe("tools:provide (declare tools), tools:call (uses), tools:gate, tools:observe (hooks), tools:guard.")),
  uses: z.array(toolPattern).optional().meta(describe("Narrows which tools this plugin may call; needs tools:call.")),
  tools: z
    .array(toolDeclarationSchema)
    .min(1, "tools, when present, has at least one entry")
    .optional()
    .meta(describe("Tools this plugin provides; needs tools:provide. (name, version) is unique.")),
  gates: z.array(gateDeclarationSchema).min(1).optional().meta(describe("Gates this plugin provides; needs tools:gate.")),
  hooks: z.array(hookDeclarationSchema).min(1).optional().meta(describe("afterTool hooks; needs tools:observe.")),
  guards: z.array(guardDeclarationSchema).min(1).optional().meta(describe("Output guards; needs tools:guard.")),
  upstream: upstreamSchema
    .optional()
    .meta(describe("An MCP server that provides this plugin's tools instead of a module: { command, args } over stdio or { url } over Streamable HTTP.")),
  isolation: z.enum(ISOLATION_MODES).optional().meta(describe('"process" runs this plugin\'s module in a child process of its own; default "in-process".')),
  process: processIsolationSchema.optional().meta(describe('The child process of "isolation": "process": environment, memory limit, calls in flight.')),
});

/** A manifest as written (after parsing, before defaults). */
export type ManifestInput = z.input<typeof manifestSchema>;
type ParsedManifest = z.output<typeof manifestSchema>;

/** A tool declaration with every default filled in. */
export interface ToolDeclaration {
  readonly name: string;
  readonly version: number;
  readonly title?: string;
  readonly description?: string;
  readonly effect: Effect;
  readonly requiresConfirmation: boolean;
  readonly minVerificationLevel: number;
  readonly recovery: RecoveryCapability;
  readonly timeoutMs: number;
  readonly inputSchema: Readonly<Record<string, unknown>>;
  readonly outputSchema?: Readonly<Record<string, unknown>>;
  /** The tool's name on the plugin's upstream MCP server, when it differs from `name`. */
  readonly upstreamName?: string;
}

/** A declared gate. */
export type GateDeclaration = z.output<typeof gateDeclarationSchema>;
/** A declared hook. */
export type HookDeclaration = z.output<typeof hookDeclarationSchema>;
/** A declared guard. */
export type GuardDeclaration = z.output<typeof guardDeclarationSchema>;

/** A validated manifest with defaults applied. */
export interface Manifest {
  readonly id: string;
  readonly alias?: string;
  readonly name?: string;
  readonly description?: string;
  readonly version: string;
  readonly permissions: readonly Permission[];
  readonly uses?: readonly string[];
  readonly tools: readonly ToolDeclaration[];
  readonly gates: readonly GateDeclaration[];
  readonly hooks: readonly HookDeclaration[];
  readonly guards: readonly GuardDeclaration[];
  /** Set when an MCP server provides the tools instead of a module. */
  readonly upstream?: UpstreamDeclaration;
  /** Where the module runs; absent means "in-process". */
  readonly isolation?: IsolationMode;
  /** The child process of `isolation: "process"`. */
  readonly process?: ProcessIsolationDeclaration;
}

/** A declared upstream MCP server. */
export type UpstreamDeclaration = z.output<typeof upstreamSchema>;
/** A declared stdio upstream. */
export type StdioUpstreamDeclaration = z.output<typeof stdioUpstreamSchema>;
/** A declared Streamable HTTP upstream. */
export type HttpUpstreamDeclaration = z.output<typeof httpUpstreamSchema>;
/** A declared isolated child process. */
export type ProcessIsolationDeclaration = z.output<typeof processIsolationSchema>;

/** Fills in defaults: version 1, confirmation for non-read effects, level 0, recovery none, 10 s. */
export function applyManifestDefaults(parsed: ParsedManifest): Manifest {
  const { $schema: _schema, tools, gates, hooks, guards, ...rest } = parsed;
  return withoutUndefined({
    ...rest,
    tools: (tools ?? []).map((tool) =>
      withoutUndefined({
        ...tool,
        version: tool.version ?? 1,
        requiresConfirmation: tool.requiresConfirmation ?? tool.effect !== "read",
        minVerificationLevel: tool.minVerificationLevel ?? 0,
        recovery: tool.recovery ?? "none",
        timeoutMs: tool.timeoutMs ?? DEFAULT_TOOL_TIMEOUT_MS,
      }),
    ),
    gates: gates ?? [],
    hooks: hooks ?? [],
    guards: guards ?? [],
  }) as Manifest;
}
