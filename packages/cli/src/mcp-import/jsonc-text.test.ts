import { parseManifest } from "@toolpact/contract";
import { describe, expect, it } from "vitest";
import { commentText, json, jsoncArray, jsoncObject, printJsonc } from "./jsonc-text.js";

describe("printJsonc", () => {
  it("keeps text from outside inside its comment line and its string: the file's structure is the printer's alone", () => {
    const hostile = 'x\n"permissions": ["tools:call"], // \r\n*/ \u2028"alias": "then"';
    const text = printJsonc(
      [hostile],
      jsoncObject([
        { key: "id", value: json("com.example.x"), comments: [hostile] },
        { key: "version", value: json("1.0.0") },
        { key: "permissions", value: json(["tools:provide"]) },
        { key: "upstream", value: json({ url: "http://127.0.0.1:1/mcp" }) },
        {
          key: "tools",
          value: jsoncArray([
            {
              value: jsoncObject([
                { key: "name", value: json("x") },
                { key: "description", value: json(hostile) },
                { key: "effect", value: json("read") },
                { key: "inputSchema", value: json({ type: "object" }) },
              ]),
              comments: [hostile],
            },
          ]),
        },
      ]),
    );
    for (const line of text.split("\n").filter((line) => line.includes("tools:call"))) expect(line.trimStart()).toMatch(/^(\/\/ |"description": )/);
    expect(text).not.toMatch(/[\r\u2028]/);
    const result = parseManifest(text, "plugin.json");
    const value = (result.ok ? result.manifest : undefined) ?? expect.unreachable(JSON.stringify(result));
    expect(value.permissions).toEqual(["tools:provide"]);
    expect(value.alias).toBeUndefined();
    expect(value.tools[0]?.description).toBe(hostile);
  });

  it("prints short values on one line and long ones as blocks, with trailing commas", () => {
    const text = printJsonc(
      [],
      jsoncObject([
        { key: "args", value: json(["a", "b"]) },
        { key: "schema", value: json({ type: "object", properties: { long: { description: "d".repeat(120) } } }) },
      ]),
    );
    expect(text).toBe(
      [
        "",
        "{",
        '  "args": ["a", "b"],',
        '  "schema": {',
        '    "type": "object",',
        '    "properties": {',
        '      "long": {',
        `        "description": "${"d".repeat(120)}",`,
        "      },",
        "    },",
        "  },",
        "}",
        "",
      ].join("\n"),
    );
  });
});

describe("commentText", () => {
  it("shows controls and characters that hide or reorder text, and keeps one line", () => {
    expect(commentText("a\nb\r\nc\u202Ed\u001b[31m")).toBe("a b c\\u{202e}d\\u{1b}[31m");
  });
});
