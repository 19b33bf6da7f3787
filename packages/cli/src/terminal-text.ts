/**
 * Text as the CLI prints it: what came from outside (a server's manifests and errors, a package's
 * plugin.json, a plugin's output) must not drive the terminal. Escape sequences, other controls and the
 * characters that reorder or hide what a person reads are printed as visible escapes instead.
 */

/**
 * Controls but tab and line feed, format characters (bidirectional marks, embeddings, overrides and
 * isolates, zero-width characters, tags), line and paragraph separators, lone surrogates.
 */
const HIDDEN = /[\u0000-\u0008\u000B-\u001F\u007F-\u009F\p{Cf}\p{Zl}\p{Zp}\p{Cs}]/gu;

/**
 * `text` with every character in HIDDEN shown as `\u{…}`: ESC prints as `\u{1b}`, RIGHT-TO-LEFT
 * OVERRIDE as `\u{202e}`. A CR LF line end (a Windows tool's output) is a line end, not a stray CR.
 */
export function terminalText(text: string): string {
  return text.replace(/\r\n/g, "\n").replace(HIDDEN, (char) => `\\u{${char.codePointAt(0)!.toString(16)}}`);
}
