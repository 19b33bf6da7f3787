/**
 * The workspace's published packages as a consumer gets them: every package that is not `private`,
 * packed with `pnpm pack` (so `workspace:*` becomes a version and `publishConfig` applies), unpacked
 * for inspection.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync } from "node:fs";
import path from "node:path";

/** A published package: where it lives, and its packed tarball. */
export interface PackedPackage {
  readonly name: string;
  readonly version: string;
  /** The workspace folder it is packed from. */
  readonly dir: string;
  readonly tarball: string;
  readonly tarballBytes: number;
}

/** The package.json fields these checks read. */
export interface PackageManifest {
  readonly name: string;
  readonly version: string;
  readonly private?: boolean;
  readonly license?: string;
  readonly engines?: Record<string, string>;
  readonly repository?: unknown;
  readonly description?: string;
  readonly publishConfig?: { readonly access?: string };
  readonly bin?: string | Record<string, string>;
  readonly exports?: unknown;
  readonly dependencies?: Record<string, string>;
  readonly devDependencies?: Record<string, string>;
  readonly peerDependencies?: Record<string, string>;
  readonly optionalDependencies?: Record<string, string>;
  readonly peerDependenciesMeta?: Record<string, { readonly optional?: boolean }>;
  readonly scripts?: Record<string, string>;
}

/** Reads a package.json. */
export function readManifest(dir: string): PackageManifest {
  return JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as PackageManifest;
}

/** Every workspace package that is not private: the ones `pnpm -r publish` publishes. */
export function publicWorkspacePackages(repoRoot: string): { name: string; version: string; dir: string }[] {
  const listed = JSON.parse(execFileSync("pnpm", ["ls", "-r", "--depth", "-1", "--json"], { cwd: repoRoot, encoding: "utf8" })) as {
    name: string;
    version: string;
    path: string;
    private: boolean;
  }[];
  return listed.filter((entry) => !entry.private).map((entry) => ({ name: entry.name, version: entry.version, dir: entry.path }));
}

/** `pnpm pack`s every public workspace package into `destination`, as `pnpm -r publish` would pack them. */
export function packWorkspace(repoRoot: string, destination: string): PackedPackage[] {
  const packages = publicWorkspacePackages(repoRoot);
  const unbuilt = packages.filter((pkg) => !existsSync(path.join(pkg.dir, "dist")));
  if (unbuilt.length > 0) {
    throw new Error(`not built: ${unbuilt.map((pkg) => pkg.name).join(", ")}: run \`pnpm build\` before this test`);
  }
  mkdirSync(destination, { recursive: true });
  execFileSync("pnpm", ["-r", ...packages.flatMap((pkg) => ["--filter", pkg.name]), "pack", "--pack-destination", destination], {
    cwd: repoRoot,
    stdio: "pipe",
  });
  return packages.map((pkg) => {
    const tarball = path.join(destination, `${pkg.name.replace(/^@/, "").replace("/", "-")}-${pkg.version}.tgz`);
    if (!existsSync(tarball)) throw new Error(`pnpm pack wrote no ${tarball} for ${pkg.name}`);
    return { ...pkg, tarball, tarballBytes: statSync(tarball).size };
  });
}

/** Unpacks a tarball into `into` (npm tarballs hold one `package/` folder); returns that folder. */
export function unpack(tarball: string, into: string): string {
  mkdirSync(into, { recursive: true });
  execFileSync("tar", ["-xzf", tarball, "-C", into]);
  return path.join(into, "package");
}

/** Every file under `dir`, as paths relative to it with `/` separators. */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(dir, path.join(entry.parentPath, entry.name)).split(path.sep).join("/"))
    .sort();
}

/** Every file path an `exports` map (or a `bin`) points at, `./`-relative. */
export function exportTargets(value: unknown): string[] {
  if (typeof value === "string") return [value];
  if (value === null || typeof value !== "object") return [];
  return Object.values(value).flatMap(exportTargets);
}

/** The subpaths of an `exports` map that have types, e.g. `.`, `./testing` (not JSON files or package.json). */
export function typedEntryPoints(manifest: PackageManifest): string[] {
  const exports = manifest.exports;
  if (exports === null || typeof exports !== "object") return [];
  return Object.entries(exports)
    .filter(([, target]) => target !== null && typeof target === "object" && "types" in target)
    .map(([subpath]) => subpath);
}

/** Everything wrong with an unpacked tarball as a published package; empty when it is fine. */
export function tarballProblems(unpacked: string, licenseText: string): string[] {
  const manifest = readManifest(unpacked);
  const files = filesUnder(unpacked);
  const problems: string[] = [];
  const expect = (ok: boolean, problem: string) => void (ok || problems.push(`${manifest.name}: ${problem}`));

  expect(manifest.private !== true, "is private");
  expect(manifest.license === "MIT", `license is ${String(manifest.license)}, not MIT`);
  expect(readFileOr(unpacked, "LICENSE") === licenseText, "LICENSE is missing or differs from the repository's");
  expect(files.includes("README.md"), "has no README.md");
  expect(typeof manifest.description === "string" && manifest.description.length > 0, "has no description");
  expect(manifest.repository !== undefined, "has no repository");
  expect(manifest.engines?.node !== undefined, "has no engines.node");
  expect(manifest.publishConfig?.access === "public", 'publishConfig.access is not "public"');

  for (const file of files) {
    // The CLI's project templates (`toolpact init`) are content it writes, sources and tests included.
    if (manifest.name === "@toolpact/cli" && file.startsWith("templates/")) continue;
    if (/^src\//.test(file)) problems.push(`${manifest.name}: ships source ${file}`);
    else if (/\.test(-d)?\.|\.test-support\./.test(file)) problems.push(`${manifest.name}: ships test file ${file}`);
    else if (/tsbuildinfo$|\.map$|^tsconfig/.test(file)) problems.push(`${manifest.name}: ships build artifact ${file}`);
  }
  const text = readFileSync(path.join(unpacked, "package.json"), "utf8");
  expect(!text.includes("workspace:"), "still has a workspace: range");
  expect(!text.includes("@toolpact/source"), "still has the workspace's @toolpact/source condition (its src/ is not shipped)");
  for (const target of [...exportTargets(manifest.exports), ...exportTargets(manifest.bin)]) {
    if (target.includes("*")) continue;
    expect(existsSync(path.join(unpacked, target)), `exports or bin point at ${target}, which is not in the tarball`);
  }
  return problems;
}

function readFileOr(dir: string, file: string): string | undefined {
  const full = path.join(dir, file);
  return existsSync(full) ? readFileSync(full, "utf8") : undefined;
}
