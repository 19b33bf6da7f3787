/** The most calls any grant may allow, whatever the policy says. */
export const GRANT_MAX_CALLS = 10_000;

/** The longest any grant may live, whatever the policy says: 30 days. */
export const GRANT_MAX_SECONDS = 30 * 24 * 60 * 60;

/** How long a grant lives when the policy bounds only its calls: 24 hours. A grant always ends. */
export const GRANT_DEFAULT_SECONDS = 24 * 60 * 60;

/** The most properties one grant may constrain, and the most values one `enum` may list. */
export const GRANT_CONSTRAINTS_MAX = 16;
