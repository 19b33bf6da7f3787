/** The confirmation page's side of the runtime's surface: who decides, what they see, what they decided. */
import type { Effect } from "@toolpact/contract";
import type { ConfirmationState } from "@toolpact/protocol";
import type { GrantLimits } from "../api.js";

/** Options of `waitConfirmation`. */
export interface WaitConfirmationOptions {
  /** How long to wait for a decision, ms (default and most 25000); then the answer is `pending`. */
  readonly timeoutMs?: number;
  /** Ends the wait early (the answer is then the current status). */
  readonly signal?: AbortSignal;
}

/** How the person on the confirmation page proved who they are. */
export interface ConfirmationAttestation {
  /** `presence-token`: a presence token the platform minted; `oidc`: a sign-in at the platform's OpenID provider. */
  readonly method: "presence-token" | "oidc";
  /** Who signed in: the presence token's user, or the ID token's `sub`. */
  readonly subject: string;
  /** The OpenID provider's issuer (`oidc` only). */
  readonly issuer?: string;
}

/** A person signed in to the confirmation page (with a verified presence token, or at the platform's OpenID provider). */
export interface ConfirmationPerson {
  readonly tenantId: string;
  readonly userId: string;
  /** How the sign-in was proved; the runtime records it with the decision. */
  readonly attestation?: ConfirmationAttestation;
}

/** What a verified presence token establishes; `expiresAt` in Unix milliseconds. */
export interface PresenceIdentity extends ConfirmationPerson {
  readonly expiresAt: number;
  /** The one confirmation request the token signs in for (its `cfr` claim), when it names one. */
  readonly requestId?: string;
}

/** The life of a platform-mode confirmation request: pending -> approved | denied | expired | cancelled. */
export type ConfirmationRequestState = ConfirmationState;

/** A confirmation request as the person it is for sees it on the confirmation page. */
export interface ConfirmationRequestView {
  readonly requestId: string;
  /** The tool's full name. */
  readonly tool: string;
  readonly title?: string;
  readonly description?: string;
  readonly effect: Effect;
  /** The provider's preview; empty once the request is no longer pending (the preview is deleted then). */
  readonly summary: string;
  readonly details: unknown;
  /** The exact validated input the approval binds; absent once the request is no longer pending. */
  readonly input?: unknown;
  /** When the page may offer a grant for the next calls like this one: the policy's bounds. Absent: this call alone. */
  readonly grants?: GrantLimits;
  readonly callerPluginId: string;
  /** The calling plugin's human name, from its manifest. */
  readonly callerName?: string;
  readonly status: ConfirmationRequestState;
  readonly expiresAt: string;
  readonly createdAt: string;
}

/** What a decision on the confirmation page did (the person never receives the token: only the caller does). */
export interface ConfirmationDecision {
  readonly requestId: string;
  readonly status: "approved" | "denied";
  /** The grant the approval made, when it was approved as one. */
  readonly grantId?: string;
}
