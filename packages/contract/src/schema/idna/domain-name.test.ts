import { describe, expect, it } from "vitest";
import { isEmail, isIdnEmail } from "../format-email.js";
import { HOST_NAME, IDN_HOST_NAME, isDomainName } from "./domain-name.js";
import { encodePunycode } from "./punycode.js";

const hostname = (text: string): boolean => isDomainName(text, HOST_NAME);
const idnHostname = (text: string): boolean => isDomainName(text, IDN_HOST_NAME);
const aLabel = (text: string): string => "xn--" + encodePunycode(Array.from(text, (c) => c.codePointAt(0)!))!;

describe("hostname: RFC 1123 names whose xn-- labels are A-labels", () => {
  it("takes LDH labels, upper case and reserved hyphens included", () => {
    for (const name of ["example.com", "EXAMPLE.com", "a--b.com", "ab--cd.example", "1host", "a.b.c.d"]) expect(hostname(name), name).toBe(true);
    for (const name of ["", ".", "a..b", "example.", "-a.com", "a-.com", "a_b.com", "ex ample.com", "é.com", "a\u3002b"])
      expect(hostname(name), name).toBe(false);
  });

  it("decodes A-labels, in either case, and refuses fake ones", () => {
    expect(hostname("xn--9n2bp8q.xn--9t4b11yi5a")).toBe(true); // 실례.테스트
    expect(hostname("XN--9N2BP8Q.Xn--9T4B11YI5A")).toBe(true);
    expect(hostname("xn--7a.com")).toBe(false); // U+00A1 is DISALLOWED
    expect(hostname("xn--abc-.com")).toBe(false); // decodes to ASCII only
    expect(hostname("xn--ls8h")).toBe(false); // 💩: a symbol, DISALLOWED
    expect(hostname("xn--Bcher-kva.example")).toBe(false); // Bücher: an upper-case letter in the U-label
    expect(hostname("xn--bcher-kva.example")).toBe(true); // bücher
    expect(hostname("xn--bcher-kva2.example")).toBe(false); // trailing digits decode to another code point
  });

  it("applies the Bidi rule to every label of a name with a right-to-left label", () => {
    expect(hostname(`${aLabel("\u05d0\u05d1")}.com`)).toBe(true);
    expect(hostname(`${aLabel("\u05d0\u05d1")}.1com`)).toBe(false); // a label starting with a digit
    expect(hostname("1com.example")).toBe(true); // no right-to-left label: no Bidi rule
  });

  it("counts at most 253 characters and 63 per label", () => {
    const label = "a".repeat(63);
    expect(hostname(`${label}.${label}.${label}.${"a".repeat(61)}`)).toBe(true);
    expect(hostname(`${label}.${label}.${label}.${"a".repeat(62)}`)).toBe(false);
    expect(hostname("a".repeat(64))).toBe(false);
  });
});

describe("idn-hostname: U-labels under IDNA2008", () => {
  it("takes U-labels in NFC with PVALID code points, and every label separator of RFC 3490", () => {
    for (const name of [
      "실례.테스트",
      "bücher.example",
      "παράδειγμα.δοκιμή",
      "例え。テスト",
      "a\uff0eb",
      "a\uff61b",
      "\u00df\u03c2\u0f0b\u3007",
      "ab--cd.example",
    ]) {
      expect(idnHostname(name), name).toBe(true);
    }
    for (const name of ["Bücher.example", "b\u00fccher example", "\u2163.example", "\uff11\uff12\uff13", "a\u200bb", "\u00a1"])
      expect(idnHostname(name), name).toBe(false);
  });

  it("refuses a U-label not in NFC, with a leading combining mark, or with hyphens in the wrong places", () => {
    expect(idnHostname("cafe\u0301.example")).toBe(false);
    expect(idnHostname("caf\u00e9.example")).toBe(true);
    expect(idnHostname("\u0301a.example")).toBe(false);
    expect(idnHostname("-ü.example")).toBe(false);
    expect(idnHostname("ü-.example")).toBe(false);
    expect(idnHostname("üü--ü.example")).toBe(false);
    expect(idnHostname("ü--ü.example")).toBe(true);
  });

  it("refuses reserved LDH labels beside U-labels (an IDN holds NR-LDH labels, A-labels and U-labels)", () => {
    expect(idnHostname("ab--cd.bücher")).toBe(false);
    expect(idnHostname("ab--cd.bucher")).toBe(true);
  });

  it("checks the contextual rules of RFC 5892 appendix A", () => {
    // ZERO WIDTH NON-JOINER: after a virama, or between joining letters with transparent marks around it.
    expect(idnHostname("\u0628\u064b\u200c\u064b\u0628")).toBe(true);
    expect(idnHostname("\u0628\u200c\u0627")).toBe(true); // D, then R
    expect(idnHostname("\u0627\u200c\u0628")).toBe(false); // R cannot join to the left
    expect(idnHostname("\u0628\u200c")).toBe(false);
    expect(idnHostname("a\u200cb")).toBe(false);
    expect(idnHostname("\u0915\u094d\u200c\u0937")).toBe(true);
    // ZERO WIDTH JOINER: only after a virama.
    expect(idnHostname("\u0628\u200d\u0628")).toBe(false);
    expect(idnHostname("\u0915\u094d\u200d\u0937")).toBe(true);
    // The CONTEXTO code points.
    expect(idnHostname("l\u00b7l")).toBe(true);
    expect(idnHostname("L\u00b7l")).toBe(false);
    expect(idnHostname("\u03b1\u0375\u03b2")).toBe(true);
    expect(idnHostname("\u03b1\u0375a")).toBe(false);
    expect(idnHostname("\u05d0\u05f4\u05d1")).toBe(true);
    expect(idnHostname("\u30fb\u4e08")).toBe(true);
    expect(idnHostname("\u30fbab")).toBe(false);
    expect(idnHostname("\u0628\u0660\u0661")).toBe(true);
    expect(idnHostname("\u0628\u0660\u06f1")).toBe(false);
  });

  it("applies the Bidi rule of RFC 5893", () => {
    expect(idnHostname("\u05d0\u05d1.example")).toBe(true);
    expect(idnHostname("\u05d0\u05d1.0example")).toBe(false); // condition 1 in another label
    expect(idnHostname("\u05d0\u0301")).toBe(true); // a trailing NSM is fine (condition 3)
    expect(idnHostname("\u05d0a")).toBe(false); // condition 2: no L in a right-to-left label
    expect(idnHostname("\u05d0-")).toBe(false); // a hyphen cannot end a label anyway
    expect(idnHostname("\u05d0-\u05d1")).toBe(true); // ES inside
    expect(idnHostname("\u05d01\u0661")).toBe(false); // condition 4: EN and AN
    expect(idnHostname("\u0628\u0661")).toBe(true); // AN at the end (condition 3)
    expect(idnHostname("a\u0661")).toBe(false); // condition 5: AN in a left-to-right label
    expect(idnHostname("\u00e9\u05d0")).toBe(false);
  });

  it("measures labels and names in their ASCII form", () => {
    let longest = "";
    while (aLabel(longest + "ü").length <= 63) longest += "ü";
    expect(idnHostname(longest)).toBe(true);
    expect(idnHostname(longest + "ü")).toBe(false);
    const label = "a".repeat(63);
    const rest = 253 - 3 * 64; // 61 characters of ASCII form for the last label
    let last = "";
    while (aLabel(last + "é").length <= rest) last += "é";
    expect(idnHostname(`${label}.${label}.${label}.${last}`)).toBe(true);
    expect(idnHostname(`${label}.${label}.${label}.${last}é`)).toBe(false);
  });

  it("is linear in the text: a megabyte of labels is refused at once", () => {
    for (const text of ["ü.".repeat(500_000), "\u200c".repeat(1_000_000), "\u30fb".repeat(1_000_000), "xn--" + "9".repeat(1_000_000)]) {
      const started = performance.now();
      expect(idnHostname(text)).toBe(false);
      expect(performance.now() - started).toBeLessThan(200);
    }
  });
});

describe("email and idn-email", () => {
  it("email takes A-labels that are A-labels only", () => {
    expect(isEmail("joe@xn--bcher-kva.example")).toBe(true);
    expect(isEmail("joe@xn--7a.example")).toBe(false);
    expect(isEmail("joe@bücher.example")).toBe(false);
    expect(isEmail("jöe@example.com")).toBe(false);
  });

  it("idn-email takes non-ASCII local parts and U-label domains, normalizing the domain to NFC", () => {
    for (const address of [
      "사용자@예제.테스트",
      "jöe@bücher.example",
      '"jöe bloggs"@example.com',
      "joe@cafe\u0301.example",
      "cafe\u0301@example.com",
      "\u05d0@example.com",
      "joe@[IPv6:::1]",
    ]) {
      expect(isIdnEmail(address), address).toBe(true);
    }
    for (const address of [
      "joe@xn--7a.example",
      "joe@Bücher.example",
      "joe@\u05d0\u05d1.0example",
      "joe@a\u3002example",
      "\ud800@example.com",
      "joe",
      "@example.com",
      "joe@",
    ]) {
      expect(isIdnEmail(address), address).toBe(false);
    }
  });

  it("idn-email counts the local part's 64 octets in UTF-8", () => {
    expect(isIdnEmail(`${"ü".repeat(32)}@example.com`)).toBe(true);
    expect(isIdnEmail(`${"ü".repeat(33)}@example.com`)).toBe(false);
    expect(isIdnEmail(`${"€".repeat(21)}a@example.com`)).toBe(true);
    expect(isIdnEmail(`${"€".repeat(21)}ab@example.com`)).toBe(false);
    expect(isIdnEmail(`${"😀".repeat(16)}@example.com`)).toBe(true);
    expect(isIdnEmail(`${"😀".repeat(16)}a@example.com`)).toBe(false);
  });
});
