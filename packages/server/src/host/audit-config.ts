/** The `audit` key of `toolpact.config.json`: when the runtime checkpoints the activity log. */
import { z } from "zod";
import { AUDIT_DEFAULTS, type AuditOptions } from "@toolpact/runtime";

/** The zod schema of `audit`. */
export const auditConfigSchema = z
  .strictObject({
    checkpointIntervalSeconds: z
      .number()
      .min(0)
      .max(24 * 60 * 60)
      .optional()
      .describe(
        `How often this instance links settled activity into the hash chain and signs a checkpoint, s; 0 turns it off (default ${AUDIT_DEFAULTS.checkpointIntervalSeconds}).`,
      ),
    settleSeconds: z
      .number()
      .min(0)
      .max(60 * 60)
      .optional()
      .describe(`How old an activity event must be before it is linked, s: longer than any write transaction takes (default ${AUDIT_DEFAULTS.settleSeconds}).`),
  })
  .default({})
  .describe("Signed checkpoints over the activity log (toolpact audit verify).");

/** `audit` as the host keeps it. */
export type HostAudit = z.output<typeof auditConfigSchema>;

/** The runtime's audit options of a host's `audit`. */
export function auditOptionsOf(audit: HostAudit): { audit?: AuditOptions } {
  const { checkpointIntervalSeconds, settleSeconds } = audit;
  const options: { checkpointIntervalMs?: number; settleMs?: number } = {};
  if (checkpointIntervalSeconds !== undefined) options.checkpointIntervalMs = Math.round(checkpointIntervalSeconds * 1000);
  if (settleSeconds !== undefined) options.settleMs = Math.round(settleSeconds * 1000);
  return Object.keys(options).length === 0 ? {} : { audit: options };
}
