import { defineConfig } from "vitest/config";

export default defineConfig({
  resolve: { conditions: ["@toolpact/source"] },
  ssr: { resolve: { conditions: ["@toolpact/source"] } },
  test: {
    include: ["packages/*/src/**/*.test.ts", "codegen/src/**/*.test.ts", "examples/*/src/**/*.test.ts", "test/**/*.test.ts"],
    reporters: ["default", ["json", { outputFile: "reports/vitest.json" }]],
    testTimeout: 30_000,
    hookTimeout: 60_000,
  },
});
