/**
 * The published packages as packed: every public workspace package is packed as `pnpm publish` would
 * pack it, and each tarball ships only what runs, with a license, metadata and resolvable exports. The
 * projects that install them are npm-project.test.ts and pnpm-project.test.ts.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { MINUTE, packPublishedPackages, repoRoot, type PublishedPackages } from "./support/published-packages.js";
import { tarballProblems } from "./support/workspace-packs.js";

let published: PublishedPackages;

beforeAll(async () => {
  published = await packPublishedPackages("tarballs");
  console.log(["packed (pnpm pack):", ...published.packed.map((pkg) => `  ${pkg.name}@${pkg.version}  ${(pkg.tarballBytes / 1000).toFixed(1)} kB`)].join("\n"));
}, 2 * MINUTE);

afterAll(() => published?.remove());

describe("the packed tarballs", () => {
  it("ship only what runs, with a license, metadata and resolvable exports", () => {
    const license = readFileSync(path.join(repoRoot, "LICENSE"), "utf8");
    const problems = published.packed.flatMap((pkg) => tarballProblems(published.unpacked.get(pkg.name)!, license));
    expect(problems).toEqual([]);
  });

  it("the client depends on the wire contract only (@toolpact/protocol, no dependencies), never on the manifest tooling", () => {
    const manifest = JSON.parse(readFileSync(path.join(published.unpacked.get("@toolpact/client")!, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    expect(Object.keys(manifest.dependencies ?? {}).filter((name) => name.startsWith("@toolpact/"))).toEqual(["@toolpact/protocol"]);
    const protocol = JSON.parse(readFileSync(path.join(published.unpacked.get("@toolpact/protocol")!, "package.json"), "utf8")) as {
      dependencies?: Record<string, string>;
    };
    expect(protocol.dependencies ?? {}).toEqual({});
  });
});
