/** The test world in platform confirmation mode: its policy, and the write tool the browser tests confirm. */
import type { ToolDescriptor } from "@toolpact/client";
import { PROVIDER_ID } from "./plugins.js";

/** Reads allowed; writes and external effects confirmed by the user on the confirmation page. */
export const PLATFORM_POLICY = {
  rules: [
    { tools: "com.test.*", effects: ["read"], decision: "allow" },
    { tools: "com.test.*", effects: ["write", "external"], decision: "confirm", mode: "platform" },
  ],
} as const;

/** The provider's `create-note@1`, as a generated client describes it. */
export const CREATE_NOTE: ToolDescriptor<"com.test.notes:create-note@1"> = {
  providerId: PROVIDER_ID,
  name: "create-note",
  version: 1,
  fullName: "com.test.notes:create-note@1",
  effect: "write",
  requiresConfirmation: true,
};
