/**
 * Stand-ins for what a reader's machine reaches on the internet, so the docs' commands run as written:
 * an npm registry that serves the packed `@toolpact/*` tarballs under their names (everything else
 * comes from the real registry), and better-sqlite3's prebuilt binary (these machines reach no
 * prebuilt downloads; the workspace's own build of the same version stands in for it).
 */
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import type { PackedPackage } from "./workspace-packs.js";

/** A running registry for one scope. */
export interface LocalRegistry {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * Serves each packed package's packument (`GET /@scope%2fname`) and tarball. `unpacked` maps a package
 * name to its unpacked `package/` folder, whose package.json is what `pnpm pack` wrote (versions, publishConfig applied).
 */
export async function startLocalRegistry(packed: readonly PackedPackage[], unpacked: ReadonlyMap<string, string>): Promise<LocalRegistry> {
  const byName = new Map(packed.map((pkg) => [pkg.name, pkg]));
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://registry");
    const pathname = decodeURIComponent(url.pathname).replace(/^\//, "");
    const tarball = /^tarballs\/(.+\.tgz)$/.exec(pathname)?.[1];
    const pkg = tarball === undefined ? byName.get(pathname) : packed.find((candidate) => path.basename(candidate.tarball) === tarball);
    if (pkg === undefined) {
      res.writeHead(404, { "content-type": "application/json" }).end(JSON.stringify({ error: "not found" }));
      return;
    }
    const bytes = readFileSync(pkg.tarball);
    if (tarball !== undefined) {
      res.writeHead(200, { "content-type": "application/octet-stream", "content-length": bytes.length }).end(bytes);
      return;
    }
    const manifest = JSON.parse(readFileSync(path.join(unpacked.get(pkg.name)!, "package.json"), "utf8")) as Record<string, unknown>;
    const base = `http://${req.headers.host}`;
    const version = {
      ...manifest,
      _id: `${pkg.name}@${pkg.version}`,
      dist: {
        tarball: `${base}/tarballs/${path.basename(pkg.tarball)}`,
        integrity: `sha512-${createHash("sha512").update(bytes).digest("base64")}`,
        shasum: createHash("sha1").update(bytes).digest("hex"),
      },
    };
    const packument = { name: pkg.name, "dist-tags": { latest: pkg.version }, versions: { [pkg.version]: version } };
    res.writeHead(200, { "content-type": "application/json" }).end(JSON.stringify(packument));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}/`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * A folder holding better-sqlite3's "prebuilt" binary for this Node, named as prebuild-install looks
 * for it; name it as `local-prebuilds` in a `.prebuild-installrc` above the project and `npm install`
 * unpacks it instead of compiling SQLite. Built from the workspace's better-sqlite3, which must be the version npm picks.
 */
export function localSqlitePrebuild(repoRoot: string, destination: string): { dir: string; version: string } {
  const fromRuntime = createRequire(path.join(repoRoot, "packages/runtime/package.json"));
  const packageDir = path.dirname(fromRuntime.resolve("better-sqlite3/package.json"));
  const { version } = JSON.parse(readFileSync(path.join(packageDir, "package.json"), "utf8")) as { version: string };
  // tar reads a copy: the workspace's binary is hard-linked from pnpm's store, and another install
  // linking it meanwhile changes its ctime, which tar reports as "file changed as we read it" (exit 1).
  const staged = path.join(destination, "staged");
  mkdirSync(path.join(staged, "build/Release"), { recursive: true });
  copyFileSync(path.join(packageDir, "build/Release/better_sqlite3.node"), path.join(staged, "build/Release/better_sqlite3.node"));
  const file = path.join(destination, `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`);
  execFileSync("tar", ["czf", file, "-C", staged, "build/Release/better_sqlite3.node"]);
  return { dir: destination, version };
}

/** An npm user config: the `@toolpact` scope from `registryUrl`, the rest as the repository's .npmrc says. */
export function writeNpmUserConfig(file: string, registryUrl: string, repoNpmrc: string): void {
  writeFileSync(file, `${repoNpmrc.trimEnd()}\n@toolpact:registry=${registryUrl}\n`);
}
