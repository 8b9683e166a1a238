// The password rules, without zod: the browser's forms read them from here (zod stays on the
// server), lib/validations/auth.ts builds its schemas on them.

export const PASSWORD_MIN_LENGTH = 12;
/** scrypt runs on every sign-in attempt: cap the input so a huge body cannot buy extra CPU time. */
export const PASSWORD_MAX_LENGTH = 1024;
