// `node --import ./tests/helpers/next-stub/register.mjs scripts/console-server.mjs`: runs the real
// console server with a stand-in for Next (tests/console/console-server.test.ts), so what the
// server does before Next sees a request is tested without a `next build`.
import { register } from "node:module";

register("./hooks.mjs", import.meta.url);
