import {
  RESERVED_TOOL_NAMES,
  camelCase,
  matchesToolPattern,
  pascalCase,
  pluginClientName,
  toolFullName,
  type Manifest,
  type ToolDeclaration,
} from "@toolpact/contract";
import { codegenError } from "./codegen-error.js";

/** Every name codegen gives one tool version. */
export interface ToolPlan {
  readonly tool: ToolDeclaration;
  readonly fullName: string;
  /** The versioned method and handler key: `createRecord`, or `createRecordV2` when several versions coexist. */
  readonly key: string;
  readonly descriptorName: string;
  /** `CreateRecordMethods`: the concrete interface of the tool's `preview`, `confirm` and `execute`. */
  readonly methodsInterface: string;
  readonly inputType: string;
  /** Undefined when the tool declares no outputSchema (results are `unknown`). */
  readonly outputType: string | undefined;
}

/** One property of a provider's client: a tool version under its versioned key, or the plain name of the highest version. */
export interface ClientMember {
  readonly name: string;
  readonly tool: ToolPlan;
  /** True for the plain method that stands for the highest of several versions. */
  readonly isLatestAlias: boolean;
}

/** Every name codegen gives one provider, and its tools in output order. */
export interface ProviderPlan {
  readonly manifest: Manifest;
  /** `notes`: the key under `createToolClients(...)`. */
  readonly clientName: string;
  /** `Notes`: the namespace the index re-exports the provider file under. */
  readonly namespace: string;
  /** `notes.ts` (kebab-case of the client name). */
  readonly file: string;
  readonly clientInterface: string;
  readonly clientFactory: string;
  readonly handlersInterface: string;
  readonly defineFunction: string;
  /** Sorted by tool name, then version: every declared tool (descriptors, handlers, the provider definition). */
  readonly tools: readonly ToolPlan[];
  /** The client's properties: every tool, or with a caller, only those its `uses` allows. */
  readonly members: readonly ClientMember[];
}

/** Who the clients are for: their tools are narrowed to what this caller's manifest lets it call. */
export interface CallerScope {
  readonly manifest: Manifest;
}

/** Names the index file declares itself, besides the per-provider ones. */
const INDEX_NAMES = ["ToolClients", "createToolClients", "toolpact"];
const RESERVED_CLIENT_NAMES: ReadonlySet<string> = new Set([...RESERVED_TOOL_NAMES].map(camelCase));

/**
 * Names every provider and tool, sorted (by client name; tools by name, then version), and refuses
 * any collision with a message naming both sources: two providers with one client name, two tools
 * on one method, or a generated name taken twice in one file.
 */
export function planProviders(manifests: readonly Manifest[], caller?: CallerScope): ProviderPlan[] {
  const byId = new Map<string, Manifest>();
  for (const manifest of manifests) {
    const earlier = byId.get(manifest.id);
    if (earlier) {
      throw codegenError(`plugin ${manifest.id} is given twice (versions ${earlier.version} and ${manifest.version}): pass each manifest once`);
    }
    byId.set(manifest.id, manifest);
  }

  if (caller !== undefined && !caller.manifest.permissions.includes("tools:call")) {
    throw codegenError(`the caller ${caller.manifest.id} does not hold "tools:call", so it may call no tool: add "tools:call" (and "uses") to its manifest`);
  }
  const providers = [...byId.values()]
    .filter((manifest) => manifest.tools.length > 0)
    .map((manifest) => planProvider(manifest, caller))
    .sort((a, b) => compare(a.clientName, b.clientName));

  const clientNames = new Names("the generated clients object");
  const indexNames = new Names("the generated index.ts");
  for (const name of INDEX_NAMES) indexNames.claim(name, "codegen itself");
  const files = new Names("the output folder");
  files.claim("index.ts", "the generated index");
  for (const provider of providers) {
    const source = `plugin ${provider.manifest.id}`;
    clientNames.claim(provider.clientName, source, 'give one of them an "alias" in its manifest');
    for (const name of [provider.namespace, provider.clientInterface, provider.clientFactory, provider.defineFunction, provider.handlersInterface]) {
      indexNames.claim(name, source, 'give one of them another "alias" in its manifest');
    }
    files.claim(provider.file, source, 'give it an "alias" in its manifest');
  }
  return providers;
}

function planProvider(manifest: Manifest, caller: CallerScope | undefined): ProviderPlan {
  const clientName = pluginClientName(manifest);
  if (RESERVED_CLIENT_NAMES.has(clientName)) {
    throw codegenError(
      `plugin ${manifest.id}: its client name ${JSON.stringify(clientName)} would shadow a JavaScript built-in on the generated clients object; set "alias" in its manifest to another name`,
    );
  }
  const namespace = pascalCase(clientName);
  const sorted = [...manifest.tools].sort((a, b) => compare(a.name, b.name) || a.version - b.version);

  const groups = new Map<string, ToolDeclaration[]>();
  for (const tool of sorted) groups.set(tool.name, [...(groups.get(tool.name) ?? []), tool]);

  const methods = new Names(`the client of ${manifest.id}`);
  const tools: ToolPlan[] = [];
  const members: ClientMember[] = [];
  for (const [name, versions] of groups) {
    const plain = camelCase(name);
    const several = versions.length > 1;
    const plans = versions.map((tool): ToolPlan => {
      const key = several ? `${plain}V${tool.version}` : plain;
      const typePrefix = pascalCase(key);
      return {
        tool,
        fullName: toolFullName(manifest.id, tool.name, tool.version),
        key,
        descriptorName: `${key}Descriptor`,
        methodsInterface: `${typePrefix}Methods`,
        inputType: `${typePrefix}Input`,
        outputType: tool.outputSchema === undefined ? undefined : `${typePrefix}Output`,
      };
    });
    if (several) {
      const latest = plans[plans.length - 1]!;
      methods.claim(plain, `tool "${name}" (its highest version, ${latest.tool.version})`, "rename one of the tools");
      members.push({ name: plain, tool: latest, isLatestAlias: true });
    }
    for (const plan of plans) {
      methods.claim(plan.key, `tool "${name}" version ${plan.tool.version}`, "rename one of the tools");
      members.push({ name: plan.key, tool: plan, isLatestAlias: false });
      tools.push(plan);
    }
  }
  const callable = caller === undefined ? members : members.filter((member) => callerMayCall(caller.manifest, manifest.id, member.tool));
  return {
    manifest,
    clientName,
    namespace,
    file: `${kebabCase(clientName)}.ts`,
    clientInterface: `${namespace}Client`,
    clientFactory: `create${namespace}Client`,
    handlersInterface: `${namespace}ProviderHandlers`,
    defineFunction: `define${namespace}Provider`,
    tools,
    // The plain name of the highest version stays only where that very version is callable: it never moves to a lower one.
    members: callable,
  };
}

/** What step 3 of the pipeline asks: does the caller hold `tools:call`, and does its `uses` (when present) match the tool? */
function callerMayCall(caller: Manifest, providerId: string, plan: ToolPlan): boolean {
  if (caller.uses === undefined) return true;
  return caller.uses.some((pattern) => matchesToolPattern(pattern, providerId, plan.tool.name, plan.tool.version));
}

/** `mailEr` -> `mail-er`; one-to-one on camelCase names. */
export function kebabCase(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}

/** Code-point order: the same on every machine and locale. */
export function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Names taken in one scope, each with the source that took it, so a collision can name both. */
export class Names {
  private readonly owners = new Map<string, string>();

  constructor(private readonly scope: string) {}

  claim(name: string, source: string, remedy = "rename one of them"): void {
    const owner = this.owners.get(name);
    if (owner !== undefined) {
      throw codegenError(`${owner} and ${source} both need the name "${name}" in ${this.scope}: ${remedy}`);
    }
    this.owners.set(name, source);
  }
}
