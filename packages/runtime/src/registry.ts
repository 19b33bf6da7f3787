import {
  ToolpactError,
  compileSchema,
  matchesToolPattern,
  toolFullName,
  type Manifest,
  type ProviderDefinition,
  type ToolDeclaration,
  type ToolHandler,
  type ValidationIssue,
} from "@toolpact/contract";
import { DEFAULT_SEAM_TIMEOUT_MS, type GateHandler, type GuardHandler, type HookHandler, type RegisteredSeam, type SeamKind } from "./seams.js";
import { errorClassOf } from "./activity/error-class.js";

/** A declared tool with everything a call needs computed once, at registration. */
export interface RegisteredTool {
  readonly providerId: string;
  readonly declaration: ToolDeclaration;
  /** `<pluginId>:<name>@<version>`. */
  readonly fullName: string;
  /** schemaHash of the input schema: the `sch` claim of its tokens. */
  readonly schemaHash: string;
  /** The provider manifest's semver `version`, recorded with each call's activity. */
  readonly manifestVersion: string;
  readonly validateInput: (value: unknown) => readonly ValidationIssue[];
  readonly validateOutput: ((value: unknown) => readonly ValidationIssue[]) | undefined;
  /** The provider's handler once `provide` registered it. */
  handler: ToolHandler | undefined;
}

/** The versions of one tool name, highest first. */
interface ToolVersions {
  readonly highest: RegisteredTool;
  readonly byVersion: ReadonlyMap<number, RegisteredTool>;
  readonly versions: readonly number[];
}

/** A plugin known to this host. */
export interface RegisteredPlugin {
  readonly manifest: Manifest;
  readonly id: string;
  /** Holds `tools:call`. */
  readonly canCall: boolean;
  readonly tools: ReadonlyMap<string, ToolVersions>;
  /** Every declared tool, in manifest order. */
  readonly toolList: readonly RegisteredTool[];
  /** Declared gates, hooks and guards by name, in manifest order. */
  readonly gates: ReadonlyMap<string, RegisteredSeam<GateHandler>>;
  readonly hooks: ReadonlyMap<string, RegisteredSeam<HookHandler>>;
  readonly guards: ReadonlyMap<string, RegisteredSeam<GuardHandler>>;
  /** Does `uses` (when present) let this plugin call `tool`? Remembered per tool. */
  usesAllows(tool: RegisteredTool): boolean;
}

/**
 * The plugins this host knows, from their validated manifests. Providing is capability-bound: a plugin
 * registers handlers only for tools its own manifest declares, only under its own id.
 */
export class PluginRegistry {
  readonly #plugins = new Map<string, RegisteredPlugin>();
  readonly manifests: ReadonlyMap<string, Manifest> = new Map();
  #seamOrder = 0;
  #generation = 0;

  /** Grows with every plugin registered: caches of what acts on a tool compare it. */
  get generation(): number {
    return this.#generation;
  }

  /** Makes a plugin known; compiles its schemas now so calls pay nothing for them. */
  register(manifest: Manifest): RegisteredPlugin {
    if (this.#plugins.has(manifest.id)) {
      throw new ToolpactError("MANIFEST_INVALID", `plugin "${manifest.id}" is already registered in this host: each plugin id is registered once`);
    }
    if (manifest.tools.length > 0 && !manifest.permissions.includes("tools:provide")) {
      throw new ToolpactError("MANIFEST_INVALID", `plugin "${manifest.id}" declares tools but not the "tools:provide" permission: add it to "permissions"`);
    }
    for (const [kind, permission] of SEAM_PERMISSIONS) {
      if (manifest[SEAM_LISTS[kind]].length > 0 && !manifest.permissions.includes(permission)) {
        throw new ToolpactError(
          "MANIFEST_INVALID",
          `plugin "${manifest.id}" declares ${SEAM_LISTS[kind]} but not the "${permission}" permission: add it to "permissions"`,
        );
      }
    }
    const toolList: RegisteredTool[] = [];
    const grouped = new Map<string, RegisteredTool[]>();
    for (const declaration of manifest.tools) {
      const input = compileSchema(declaration.inputSchema);
      const output = declaration.outputSchema === undefined ? undefined : compileSchema(declaration.outputSchema);
      const tool: RegisteredTool = {
        providerId: manifest.id,
        declaration,
        fullName: toolFullName(manifest.id, declaration.name, declaration.version),
        schemaHash: input.hash,
        manifestVersion: manifest.version,
        validateInput: (value) => input.validate(value),
        validateOutput: output === undefined ? undefined : (value) => output.validate(value),
        handler: undefined,
      };
      toolList.push(tool);
      const versions = grouped.get(declaration.name) ?? [];
      if (versions.some((known) => known.declaration.version === declaration.version)) {
        throw new ToolpactError("MANIFEST_INVALID", `plugin "${manifest.id}" declares ${tool.fullName} twice: (name, version) must be unique`);
      }
      versions.push(tool);
      grouped.set(declaration.name, versions);
    }
    const tools = new Map<string, ToolVersions>();
    for (const [name, versions] of grouped) {
      versions.sort((a, b) => b.declaration.version - a.declaration.version);
      tools.set(name, {
        highest: versions[0]!,
        byVersion: new Map(versions.map((tool) => [tool.declaration.version, tool])),
        versions: versions.map((tool) => tool.declaration.version),
      });
    }
    const uses = manifest.uses;
    const usesCache = new WeakMap<RegisteredTool, boolean>();
    const plugin: RegisteredPlugin = {
      manifest,
      id: manifest.id,
      canCall: manifest.permissions.includes("tools:call"),
      tools,
      toolList,
      gates: this.#seams<GateHandler>(manifest, "gate"),
      hooks: this.#seams<HookHandler>(manifest, "hook"),
      guards: this.#seams<GuardHandler>(manifest, "guard"),
      usesAllows(tool) {
        if (uses === undefined) return true;
        let allowed = usesCache.get(tool);
        if (allowed === undefined) {
          allowed = uses.some((pattern) => matchesToolPattern(pattern, tool.providerId, tool.declaration.name, tool.declaration.version));
          usesCache.set(tool, allowed);
        }
        return allowed;
      },
    };
    this.#plugins.set(manifest.id, plugin);
    this.#generation++;
    (this.manifests as Map<string, Manifest>).set(manifest.id, manifest);
    return plugin;
  }

  #seams<THandler>(manifest: Manifest, kind: SeamKind): Map<string, RegisteredSeam<THandler>> {
    const seams = new Map<string, RegisteredSeam<THandler>>();
    for (const declaration of manifest[SEAM_LISTS[kind]]) {
      if (seams.has(declaration.name)) {
        throw new ToolpactError("MANIFEST_INVALID", `plugin "${manifest.id}" declares the ${kind} "${declaration.name}" twice: names are unique per kind`);
      }
      seams.set(declaration.name, {
        kind,
        pluginId: manifest.id,
        name: declaration.name,
        key: `${manifest.id}:${declaration.name}`,
        appliesTo: Object.freeze([...declaration.appliesTo]),
        timeoutMs: declaration.timeoutMs ?? DEFAULT_SEAM_TIMEOUT_MS,
        order: this.#seamOrder++,
        canCall: manifest.permissions.includes("tools:call"),
        handler: undefined,
      });
    }
    return seams;
  }

  /**
   * Registers the function of a declared gate, hook or guard of `pluginId`'s own manifest.
   * @throws ToolpactError CAPABILITY_UNDECLARED for one the manifest does not declare; HANDLER_INVALID for one
   *   that is not a function, or provided twice.
   */
  provideSeam(pluginId: string, provided: { readonly kind: SeamKind; readonly name: string; readonly handler: unknown }): void {
    const { kind, name, handler } = provided;
    const plugin = this.#plugins.get(pluginId);
    if (plugin === undefined) {
      throw unregistered(pluginId);
    }
    const declared = plugin[SEAM_LISTS[kind]] as ReadonlyMap<string, RegisteredSeam<unknown>>;
    const seam = typeof name === "string" ? declared.get(name) : undefined;
    if (seam === undefined) {
      throw new ToolpactError(
        "CAPABILITY_UNDECLARED",
        `plugin "${pluginId}" cannot provide the ${kind} "${String(name).slice(0, 64)}": its manifest's "${SEAM_LISTS[kind]}" does not declare it` +
          (declared.size > 0 ? ` (it declares ${[...declared.keys()].map((n) => `"${n}"`).join(", ")})` : ""),
      );
    }
    if (typeof handler !== "function") {
      throw new ToolpactError("HANDLER_INVALID", `the ${kind} ${seam.key} must be provided as a function (call, ctx) => ...`);
    }
    if (seam.handler !== undefined) {
      throw new ToolpactError("HANDLER_INVALID", `the ${kind} ${seam.key} already has a function: each declared ${kind} is provided once`);
    }
    seam.handler = handler;
  }

  get(pluginId: string): RegisteredPlugin | undefined {
    return this.#plugins.get(pluginId);
  }

  /** Every plugin known to this host. */
  all(): IterableIterator<RegisteredPlugin> {
    return this.#plugins.values();
  }

  /**
   * Registers `handler` for `spec` (`"name"` when one version is declared, else `"name@version"`) of
   * `pluginId`'s own manifest.
   * @throws ToolpactError CAPABILITY_UNDECLARED for anything the manifest does not declare; HANDLER_INVALID
   *   for a handler that cannot run, or a second one.
   */
  provide(pluginId: string, spec: string, handler: ToolHandler): RegisteredTool {
    const plugin = this.#plugins.get(pluginId);
    if (plugin === undefined) {
      throw unregistered(pluginId);
    }
    const at = spec.lastIndexOf("@");
    const name = at < 0 ? spec : spec.slice(0, at);
    const versionText = at < 0 ? undefined : spec.slice(at + 1);
    const versions = plugin.tools.get(name);
    if (versions === undefined) {
      throw new ToolpactError(
        "CAPABILITY_UNDECLARED",
        `plugin "${pluginId}" cannot provide "${name}": its manifest declares no such tool` +
          (plugin.tools.size > 0 ? ` (it declares ${[...plugin.tools.keys()].map((n) => `"${n}"`).join(", ")})` : ""),
      );
    }
    let tool: RegisteredTool | undefined;
    if (versionText === undefined) {
      if (versions.versions.length > 1) {
        throw new ToolpactError(
          "CAPABILITY_UNDECLARED",
          `plugin "${pluginId}" declares versions ${versions.versions.join(", ")} of "${name}": ` +
            `name the one this handler serves, e.g. provide("${name}@${versions.highest.declaration.version}", handler)`,
        );
      }
      tool = versions.highest;
    } else {
      const version = /^[1-9][0-9]*$/.test(versionText) ? Number(versionText) : Number.NaN;
      tool = versions.byVersion.get(version);
      if (tool === undefined) {
        throw new ToolpactError(
          "CAPABILITY_UNDECLARED",
          `plugin "${pluginId}" cannot provide "${spec}": its manifest declares "${name}" only in version ` + versions.versions.join(", "),
        );
      }
    }
    const record = handlerRecord(tool.fullName, handler);
    if (tool.handler !== undefined) {
      throw new ToolpactError("HANDLER_INVALID", `${tool.fullName} already has a handler: each declared tool is provided once`);
    }
    tool.handler = record;
    return tool;
  }

  /** Registers every handler of a provider definition made for `pluginId`. */
  provideAll(pluginId: string, definition: ProviderDefinition): void {
    const { providerId, tools } = copyDefinition(definition);
    if (providerId !== pluginId) {
      throw new ToolpactError(
        "CAPABILITY_UNDECLARED",
        `plugin "${pluginId}" cannot provide tools of "${String(providerId).slice(0, 128)}": a plugin provides only under its own id`,
      );
    }
    const specs = tools.map((entry) => `${String(entry.name).slice(0, 64)}@${String(entry.version).slice(0, 16)}`);
    // Check everything first, so a bad definition registers nothing.
    const plugin = this.#plugins.get(pluginId);
    const records: ToolHandler[] = [];
    for (const [index, spec] of specs.entries()) {
      const entry = tools[index]!;
      const known = typeof entry.name === "string" ? plugin?.tools.get(entry.name)?.byVersion.get(entry.version as number) : undefined;
      if (known === undefined) {
        throw new ToolpactError("CAPABILITY_UNDECLARED", `plugin "${pluginId}" cannot provide "${spec}": its manifest does not declare it`);
      }
      if (known.handler !== undefined || specs.indexOf(spec) !== index) {
        throw new ToolpactError("HANDLER_INVALID", `${known.fullName} already has a handler: each declared tool is provided once`);
      }
      records.push(handlerRecord(known.fullName, entry.handler));
    }
    for (const [index, record] of records.entries()) this.provide(pluginId, specs[index]!, record);
  }
}

/**
 * A provider's handler as the runtime keeps it: each function read once, here, inside a guard (a getter
 * that throws fails `provide`), then called with the handler object as `this`; the record is frozen. No
 * later read of the plugin's object can throw, or answer differently, on a call's path.
 * @throws ToolpactError HANDLER_INVALID when it is not an object of functions, or reading it throws.
 */
function handlerRecord(tool: string, handler: unknown): ToolHandler {
  if (HANDLER_RECORDS.has(handler as object)) return handler as ToolHandler;
  if (typeof handler !== "object" || handler === null) {
    throw new ToolpactError("HANDLER_INVALID", `the handler for ${tool} must be an object with an execute(input, ctx) function`);
  }
  let execute: unknown;
  let preview: unknown;
  let authorize: unknown;
  try {
    ({ execute, preview, authorize } = handler as Record<string, unknown>);
  } catch (error) {
    throw new ToolpactError(
      "HANDLER_INVALID",
      `reading the handler for ${tool} threw (${errorClassOf(error)}): a handler is a plain object of functions, execute and optionally preview and authorize`,
      { tool },
      { cause: error },
    );
  }
  if (typeof execute !== "function") {
    throw new ToolpactError("HANDLER_INVALID", `the handler for ${tool} must be an object with an execute(input, ctx) function`);
  }
  for (const [name, value] of [
    ["preview", preview],
    ["authorize", authorize],
  ] as const) {
    if (value !== undefined && typeof value !== "function") {
      throw new ToolpactError("HANDLER_INVALID", `the handler for ${tool} has a ${name} that is not a function`);
    }
  }
  const bound = (fn: Function) => (input: unknown, ctx: unknown) => Reflect.apply(fn, handler, [input, ctx]) as unknown;
  const record = Object.freeze({
    execute: bound(execute),
    ...(preview === undefined ? {} : { preview: bound(preview as Function) }),
    ...(authorize === undefined ? {} : { authorize: bound(authorize as Function) }),
  }) as ToolHandler;
  HANDLER_RECORDS.add(record);
  return record;
}

/** The records `handlerRecord` made (so a record handed back in is kept as it is). */
const HANDLER_RECORDS = new WeakSet<object>();

/** A provider definition's fields, read once inside a guard. */
function copyDefinition(definition: ProviderDefinition): {
  readonly providerId: unknown;
  readonly tools: readonly { readonly name: unknown; readonly version: unknown; readonly handler: unknown }[];
} {
  try {
    if (definition === null || typeof definition !== "object") throw new TypeError("not an object");
    const { providerId, tools } = definition as { providerId?: unknown; tools?: unknown };
    if (!Array.isArray(tools)) throw new TypeError("no tools list");
    return {
      providerId,
      tools: Array.from(tools as readonly unknown[], (entry) => {
        const { name, version, handler } = entry as { name?: unknown; version?: unknown; handler?: unknown };
        return { name, version, handler };
      }),
    };
  } catch (error) {
    throw new ToolpactError(
      "HANDLER_INVALID",
      `provideAll needs a provider definition ({ providerId, tools }) made by define<Alias>Provider; reading this one failed (${errorClassOf(error)})`,
      {},
      { cause: error },
    );
  }
}

const SEAM_LISTS = { gate: "gates", hook: "hooks", guard: "guards" } as const;
const SEAM_PERMISSIONS: readonly (readonly [SeamKind, "tools:gate" | "tools:observe" | "tools:guard"])[] = [
  ["gate", "tools:gate"],
  ["hook", "tools:observe"],
  ["guard", "tools:guard"],
];

/**
 * An SDK only exists for a registered plugin (sdkFor checks), so a call for an unregistered one is a bug
 * in toolpact, not a plugin's undeclared capability: an internal error, not CAPABILITY_UNDECLARED.
 */
function unregistered(pluginId: string): Error {
  return new Error(`internal error: plugin "${pluginId}" provides to this host's registry without being registered`);
}
