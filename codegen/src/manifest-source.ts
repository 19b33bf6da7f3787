import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { codegenError } from "./codegen-error.js";

/** An npm package name: `notes-tools` or `@acme/notes-tools`. */
const PACKAGE_NAME = /^(?:@[a-z0-9-~][a-z0-9-._~]*\/)?[a-z0-9-~][a-z0-9-._~]*$/;

/** Where a manifest argument led: the file to load, and how to name it to the user. */
export interface ManifestLocation {
  readonly file: string;
  /** `<package>/plugin.json` for a package (`@acme/notes-tools/plugin.json`), else the path relative to `cwd`. */
  readonly shown: string;
}

/**
 * Resolves a manifest argument the way `toolpact codegen`, `validate` and `diff` take them: a path to
 * a `plugin.json`, or the name of a package installed in the project at `cwd` that ships its manifest
 * as `<package>/plugin.json` (resolved like an import from `cwd`, through the package's `exports`).
 * A file that exists, or a name ending in `.json`, is a file; a package is looked up only by its name.
 * Throws ToolpactError MANIFEST_INVALID saying what to do when neither is there.
 */
export function resolveManifestArgument(argument: string, cwd: string): ManifestLocation {
  const file = path.resolve(cwd, argument);
  if (existsSync(file) || /\.jsonc?$/.test(argument) || !PACKAGE_NAME.test(argument)) return { file, shown: path.relative(cwd, file) || argument };
  const require = createRequire(path.join(cwd, "package.json"));
  try {
    return { file: require.resolve(`${argument}/plugin.json`), shown: `${argument}/plugin.json` };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === "ERR_PACKAGE_PATH_NOT_EXPORTED") {
      throw codegenError(
        `package ${argument} does not export its plugin.json: its package.json needs "./plugin.json": "./plugin.json" in "exports" ` +
          `(and "plugin.json" in "files"); until then, pass the path of the manifest`,
        error,
      );
    }
    if (code === "MODULE_NOT_FOUND" && isInstalled(require, argument)) {
      throw codegenError(`package ${argument} ships no plugin.json: add plugin.json at its root (and to "files"), or pass the path of the manifest`, error);
    }
    throw codegenError(
      `${argument} is neither a file nor a package installed in ${cwd}: pass the path of a plugin.json, ` +
        `or install the provider's package (npm install -D ${argument})`,
      error,
    );
  }
}

function isInstalled(require: NodeJS.Require, name: string): boolean {
  try {
    require.resolve(`${name}/package.json`);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "ERR_PACKAGE_PATH_NOT_EXPORTED";
  }
}
