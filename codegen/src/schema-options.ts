import type { Options } from "json-schema-to-typescript";

/**
 * json-schema-to-typescript, set up once. `additionalProperties: false` is only the default for
 * objects that do not say: an object that names its properties is closed (an unknown field is a
 * compile error through TypeScript's excess property check), while `additionalProperties: true`
 * or a schema in the manifest gives an index signature. Item counts are constraints, checked at
 * run time like `minLength`, not tuple types. The codegen benchmark compares against these options.
 */
export const JSON_SCHEMA_TO_TYPESCRIPT_OPTIONS: Readonly<Partial<Options>> = {
  additionalProperties: false,
  bannerComment: "",
  declareExternallyReferenced: true,
  enableConstEnums: false,
  format: false,
  ignoreMinAndMaxItems: true,
  inferStringEnumKeysFromValues: false,
  strictIndexSignatures: true,
  unknownAny: true,
  unreachableDefinitions: false,
  $refOptions: { resolve: { external: false } },
};
