import { AppError } from "../../../lib/server/errors";
import { route } from "../../../lib/server/route";

export const runtime = "nodejs";

// Any /api path no route file serves: `{detail, code: "not_found"}` with 404, as every API error
// is, instead of Next rendering the not-found page (HTML, and a React render per stray request).
// Host checks and the error shape are route()'s, as for every other API route.
const notFound = route({ auth: "public" }, ({ req }) => {
  throw new AppError("not_found", `There is no API route ${new URL(req.url).pathname}.`);
});

export const GET = notFound;
export const POST = notFound;
export const PUT = notFound;
export const PATCH = notFound;
export const DELETE = notFound;
