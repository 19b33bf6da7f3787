/**
 * A manifest's cross-field rules, on the raw tree so they run whatever the field-level outcome: the
 * permission each section needs, unique tool and seam names, a client name that shadows no built-in, and
 * where a provider's tools run (an upstream server, an isolated child, or in process).
 */
import type { Node } from "jsonc-parser";
import type { Permission } from "./manifest.js";
import { type ManifestCheck, keyNodeOf, memberOf, propertyOf } from "./manifest-document.js";
import { RESERVED_TOOL_NAMES, camelCase, pluginClientName } from "./names.js";

/** Which permission each top-level array needs, and what it declares. */
const PERMISSION_RULES: readonly { key: string; permission: Permission; what: string }[] = [
  { key: "tools", permission: "tools:provide", what: "declaring tools" },
  { key: "uses", permission: "tools:call", what: '"uses" (calling other plugins\' tools)' },
  { key: "gates", permission: "tools:gate", what: "declaring gates" },
  { key: "hooks", permission: "tools:observe", what: "declaring hooks" },
  { key: "guards", permission: "tools:guard", what: "declaring guards" },
];

/** Client names that would shadow a built-in on the generated `tools` object. */
const RESERVED_CLIENT_NAMES: ReadonlySet<string> = new Set([...RESERVED_TOOL_NAMES].map(camelCase));

function stringsOf(node: Node | undefined): Set<string> {
  const out = new Set<string>();
  if (node?.type !== "array") return out;
  for (const child of node.children ?? []) if (child.type === "string") out.add(child.value as string);
  return out;
}

export function checkCrossFieldRules(check: ManifestCheck, root: Node): void {
  const permissions = stringsOf(memberOf(root, "permissions"));
  for (const rule of PERMISSION_RULES) {
    const property = propertyOf(root, rule.key);
    const value = property?.children?.[1];
    if (!property || (value?.type === "array" && (value.children?.length ?? 0) === 0)) continue;
    if (permissions.has(rule.permission)) continue;
    check.error(
      keyNodeOf(property)!,
      [rule.key],
      `${rule.what} needs the ${JSON.stringify(rule.permission)} permission: add ${JSON.stringify(rule.permission)} to "permissions"`,
    );
  }

  checkUniqueTools(check, memberOf(root, "tools"));
  for (const kind of ["gates", "hooks", "guards"] as const) checkUniqueNames(check, memberOf(root, kind), kind);
  checkClientName(check, root);
  checkProviderPlacement(check, root);
}

/** An upstream MCP server provides tools only, and runs in its own process already; `process` goes with `isolation: "process"`. */
function checkProviderPlacement(check: ManifestCheck, root: Node): void {
  const upstream = propertyOf(root, "upstream");
  const isolation = memberOf(root, "isolation");
  const processSettings = propertyOf(root, "process");
  if (upstream !== undefined) {
    const upstreamKey = keyNodeOf(upstream)!;
    if (memberOf(root, "tools") === undefined) {
      check.error(
        upstreamKey,
        ["upstream"],
        'an upstream MCP server provides this plugin\'s "tools": declare them (toolpact import mcp writes them from the server)',
      );
    }
    for (const kind of ["gates", "hooks", "guards"] as const) {
      const property = propertyOf(root, kind);
      if (property !== undefined) {
        check.error(keyNodeOf(property)!, [kind], `a plugin with "upstream" provides tools only: move its ${kind} to a plugin with a module`);
      }
    }
    if (isolation !== undefined) {
      check.error(isolation, ["isolation"], 'an upstream MCP server already runs in a process of its own: remove "isolation"');
    }
    const stdio = memberOf(upstream.children?.[1], "command") !== undefined;
    const http = memberOf(upstream.children?.[1], "url") !== undefined;
    if (stdio === http) {
      check.error(
        upstreamKey,
        ["upstream"],
        stdio
          ? 'upstream has both "command" and "url": keep one (a stdio server or a Streamable HTTP URL)'
          : 'upstream needs "command" (a stdio server) or "url" (Streamable HTTP)',
      );
    }
  }
  const tools = memberOf(root, "tools");
  const upstreamNames = upstream === undefined && tools?.type === "array" ? (tools.children ?? []) : [];
  const unplaced = '"upstreamName" names a tool on an upstream MCP server: add "upstream", or remove it';
  upstreamNames.forEach((tool, index) => {
    const property = propertyOf(tool, "upstreamName");
    if (property !== undefined) check.error(keyNodeOf(property)!, ["tools", index, "upstreamName"], unplaced);
  });
  if (processSettings !== undefined && !(isolation?.type === "string" && isolation.value === "process")) {
    check.error(keyNodeOf(processSettings)!, ["process"], '"process" sets up an isolated child: add "isolation": "process", or remove "process"');
  }
}

function checkUniqueTools(check: ManifestCheck, tools: Node | undefined): void {
  if (tools?.type !== "array") return;
  const seen = new Map<string, number>();
  (tools.children ?? []).forEach((tool, index) => {
    const nameNode = memberOf(tool, "name");
    if (nameNode?.type !== "string") return;
    const versionNode = memberOf(tool, "version");
    if (versionNode && versionNode.type !== "number") return;
    const version = versionNode ? (versionNode.value as number) : 1;
    const name = nameNode.value as string;
    const key = `${name}@${version}`;
    const first = seen.get(key);
    if (first === undefined) {
      seen.set(key, index);
      return;
    }
    const { line } = check.position(memberOf(tools.children![first]!, "name")!.offset);
    check.error(
      nameNode,
      ["tools", index, "name"],
      `duplicate tool ${JSON.stringify(name)} version ${version}: tools[${first}] on line ${line} already declares it; rename this one or give it another "version"`,
    );
  });
}

function checkUniqueNames(check: ManifestCheck, entries: Node | undefined, kind: string): void {
  if (entries?.type !== "array") return;
  const seen = new Map<string, number>();
  (entries.children ?? []).forEach((entry, index) => {
    const nameNode = memberOf(entry, "name");
    if (nameNode?.type !== "string") return;
    const name = nameNode.value as string;
    const first = seen.get(name);
    if (first === undefined) {
      seen.set(name, index);
      return;
    }
    check.error(nameNode, [kind, index, "name"], `duplicate ${kind.slice(0, -1)} ${JSON.stringify(name)}: ${kind}[${first}] already uses this name`);
  });
}

function checkClientName(check: ManifestCheck, root: Node): void {
  const idNode = memberOf(root, "id");
  const aliasNode = memberOf(root, "alias");
  if (idNode?.type !== "string") return;
  const alias = aliasNode?.type === "string" ? (aliasNode.value as string) : undefined;
  const clientName = pluginClientName({ id: idNode.value as string, alias });
  if (!RESERVED_CLIENT_NAMES.has(clientName)) return;
  if (alias !== undefined) {
    check.error(
      aliasNode!,
      ["alias"],
      `alias ${JSON.stringify(alias)} collides with a JavaScript built-in on the generated client object; choose another alias`,
    );
  } else {
    check.error(
      idNode,
      ["id"],
      `the client name derived from this id, ${JSON.stringify(clientName)}, collides with a JavaScript built-in on the generated client object; set "alias" to another name`,
    );
  }
}
