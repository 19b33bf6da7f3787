/**
 * What a package pulls into a project: its installed dependency closure, found the way Node resolves
 * packages (up the node_modules folders, through pnpm's links), with sizes and anything native or
 * database-shaped in it. Works the same on npm's and pnpm's layouts.
 */
import { existsSync, lstatSync, readdirSync, realpathSync } from "node:fs";
import path from "node:path";
import { readManifest } from "./workspace-packs.js";

/** One installed package of a closure. */
export interface InstalledPackage {
  readonly name: string;
  readonly version: string;
  /** Its real folder (pnpm links resolved). */
  readonly dir: string;
  /** Bytes of its files, nested node_modules excluded. */
  readonly bytes: number;
  /** Bytes on disk (allocated blocks) of the same files. */
  readonly diskBytes: number;
}

/** Database drivers a caller's install must not contain. */
const DATABASE_DRIVERS = [
  "pg",
  "pg-native",
  "postgres",
  "better-sqlite3",
  "sqlite3",
  "sqlite",
  "mysql",
  "mysql2",
  "mariadb",
  "tedious",
  "oracledb",
  "mongodb",
  "ioredis",
  "redis",
  "@libsql/client",
  "libsql",
  "@neondatabase/serverless",
];

/**
 * The installed closure of `roots` as seen from `projectDir`: each root, its dependencies, and its
 * installed peer dependencies, recursively. A peer the project itself depends on (its TypeScript, say)
 * is the project's own choice and is left out.
 */
export function installClosure(projectDir: string, roots: readonly string[]): InstalledPackage[] {
  const project = readManifest(projectDir);
  const ownDeps = new Set(Object.keys({ ...project.dependencies, ...project.devDependencies }));
  const found = new Map<string, InstalledPackage>();
  const visit = (name: string, fromDir: string, optional: boolean) => {
    const dir = resolvePackageDir(name, fromDir);
    if (dir === undefined) {
      if (optional) return;
      throw new Error(`${name} is not installed where ${fromDir} would find it`);
    }
    if (found.has(dir)) return;
    const manifest = readManifest(dir);
    found.set(dir, { name: manifest.name, version: manifest.version, dir, ...folderSize(dir) });
    for (const dep of Object.keys(manifest.dependencies ?? {})) visit(dep, dir, false);
    for (const dep of Object.keys(manifest.optionalDependencies ?? {})) visit(dep, dir, true);
    for (const peer of Object.keys(manifest.peerDependencies ?? {})) {
      if (ownDeps.has(peer)) continue;
      visit(peer, dir, manifest.peerDependenciesMeta?.[peer]?.optional === true);
    }
  };
  for (const root of roots) visit(root, projectDir, false);
  return [...found.values()].sort((a, b) => b.bytes - a.bytes);
}

/** Native builds and database drivers in a closure: one line each; empty when there are none. */
export function nativeOrDatabaseFindings(closure: readonly InstalledPackage[]): string[] {
  const findings: string[] = [];
  for (const pkg of closure) {
    const where = `${pkg.name}@${pkg.version}`;
    if (DATABASE_DRIVERS.includes(pkg.name)) findings.push(`${where}: a database driver`);
    const scripts = readManifest(pkg.dir).scripts ?? {};
    for (const hook of ["preinstall", "install", "postinstall"]) {
      if (scripts[hook] !== undefined) findings.push(`${where}: an ${hook} script (${scripts[hook]})`);
    }
    for (const file of ownFiles(pkg.dir)) {
      const base = path.basename(file);
      if (base === "binding.gyp") findings.push(`${where}: ${path.relative(pkg.dir, file)} (a native build)`);
      else if (base.endsWith(".node")) findings.push(`${where}: ${path.relative(pkg.dir, file)} (a native module)`);
    }
  }
  return findings;
}

/** "12.3 MB" */
export function megabytes(bytes: number): string {
  return `${(bytes / 1_000_000).toFixed(1)} MB`;
}

/** The folder of package `name` as Node resolves it from `fromDir`: the nearest node_modules/<name> up the tree. */
function resolvePackageDir(name: string, fromDir: string): string | undefined {
  for (let dir = fromDir; ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, "node_modules", name);
    if (existsSync(path.join(candidate, "package.json"))) return realpathSync(candidate);
    if (path.dirname(dir) === dir) return undefined;
  }
}

function folderSize(dir: string): { bytes: number; diskBytes: number } {
  let bytes = 0;
  let diskBytes = 0;
  for (const file of ownFiles(dir)) {
    const stat = lstatSync(file);
    bytes += stat.size;
    diskBytes += stat.blocks * 512;
  }
  return { bytes, diskBytes };
}

/** Files of a package folder, not descending into its own node_modules (those are packages of their own). */
function ownFiles(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== "node_modules") files.push(...ownFiles(full));
    } else if (entry.isFile()) {
      files.push(full);
    }
  }
  return files;
}
