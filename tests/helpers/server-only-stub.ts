// Stands in for the `server-only` package under vitest: the real one throws when imported outside
// a React Server Components build, which tests of server modules are not.
export {};
