import { RE2JS } from "re2js";
import { translateEcmaPattern } from "./dist/pattern/ecma-pattern.js";
for (const p of ["^[a-z][a-z0-9-]*(\\.[a-z][a-z0-9-]*)*$", "^(0|[1-9]\\d*)\\.(0|[1-9]\\d*)\\.(0|[1-9]\\d*)(-[0-9A-Za-z.-]+)?(\\+[0-9A-Za-z.-]+)?$", "^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$", "^\\+[1-9]\\d{1,14}$", "^\\d{4}-\\d{2}-\\d{2}$", "^.{1,200}$", "^[A-Za-z0-9]{20,40}$", "^[^@\\s]+@[^@\\s]+\\.[^@\\s]+$", "^\\S+$", "^(a+)+$", "^\\p{L}[\\p{L}\\p{Nd} ]*$", "^[a-z0-9]+(-[a-z0-9]+)*$", "^(https?|ftp)://[^\\s/$.?#].[^\\s]*$", "^#[0-9a-fA-F]{6}$", "[ab]*a[ab]{20}c"]) {
  const t = translateEcmaPattern(p); const re = RE2JS.compile(t.exact ?? t.re2);
  console.log(re.programSize(), p);
}
