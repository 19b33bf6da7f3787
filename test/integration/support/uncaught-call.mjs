// Run by client-failures.test.ts in a process of its own: one call whose ToolpactError nobody catches,
// so Node prints it as it prints any uncaught error.
import { createHttpTransport } from "@toolpact/client";

const transport = createHttpTransport({
  url: process.env.TOOLPACT_URL,
  pluginKey: process.env.TOOLPACT_PLUGIN_KEY,
  actorToken: process.env.TOOLPACT_ACTOR_TOKEN,
});
await transport.execute({ providerId: "com.test.notes", tool: "list-notes" }, {});
