// The host loads every plugin's module; this caller reaches the server over HTTP only, so it provides nothing.
export function activate() {}
