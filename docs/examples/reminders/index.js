// The reminders provider, in plain JavaScript: the host imports this module and calls activate(sdk).
/** Reminders by tenant and user, in memory (a real provider keeps them in its own store). */
const reminders = new Map();

function listOf(ctx) {
  const key = `${ctx.tenantId}/${ctx.actor.userId}`;
  if (!reminders.has(key)) reminders.set(key, []);
  return reminders.get(key);
}

export function activate(sdk) {
  sdk.tools.provide("add-reminder", {
    // Steps 6 (preview and execute): true or { allowed: true } lets the call on; anything else refuses it.
    authorize: (input, ctx) => !ctx.actor.roles.includes("guest"),
    // What the user approves: a one-line summary and details, both shown on the confirmation page.
    preview: (input) => ({ summary: `Remind you to "${input.text}" at ${input.at}`, details: { text: input.text, at: input.at } }),
    // The effect, run once per operation: ctx.operationId is the same if recovery runs it again.
    execute: (input, ctx) => {
      const list = listOf(ctx);
      const existing = list.find((reminder) => reminder.id === ctx.operationId);
      if (existing === undefined) list.push({ id: ctx.operationId, text: input.text, at: input.at });
      return { id: ctx.operationId, targetId: ctx.operationId };
    },
  });
  sdk.tools.provide("list-reminders", {
    execute: async (input, ctx) => ({ reminders: listOf(ctx).map(({ text, at }) => ({ text, at })) }),
  });
}
