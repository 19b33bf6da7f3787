/**
 * The confirmation page's sign-in wiring: the relying party at the platform's OpenID provider that a
 * handler's `confirmationLogin` option makes, sending browsers back to the page's own origin.
 */
import { DEFAULT_LOGIN_REDIRECT_PATH } from "./confirmation-login-config.js";
import { createConfirmationLogin, type ConfirmationLogin, type ConfirmationLoginOptions } from "./confirmation-login.js";
import type { ConfirmationOrigin } from "./confirmation-origin.js";

/** The confirmation page's relying party, when a sign-in is configured; the provider sends browsers back to the page's own origin. */
export function loginOf(
  options: ConfirmationLoginOptions | undefined,
  page: { pageOrigin: ConfirmationOrigin; publicUrl: URL | undefined; pagePath: string; secure: boolean; secret: Uint8Array },
): ConfirmationLogin | undefined {
  if (options === undefined) return undefined;
  const origin = page.pageOrigin.kind === "dedicated" ? page.pageOrigin.origin.origin : page.publicUrl?.origin;
  if (origin === undefined) {
    throw new TypeError(
      "confirmationLogin needs publicUrl (or confirmationOrigin): the sign-in provider sends the browser back to <publicUrl>/confirm/<redirectPath>",
    );
  }
  const redirectPath = options.redirectPath ?? DEFAULT_LOGIN_REDIRECT_PATH;
  return createConfirmationLogin(options, {
    redirectUri: `${origin}${page.pagePath}/${redirectPath}`,
    cookiePath: page.pagePath,
    secure: page.secure,
    secret: page.secret,
    clock: Date.now,
  });
}
