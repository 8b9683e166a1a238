import { z } from "zod";
import { OpenPtyBody } from "../orkestr/schemas/pty";

// Inputs of the terminal proxy routes (/api/v1/sandboxes/{id}/pty/**): the PTY extension's own
// bounds (engine/src/routes/pty.ts) so a bad size is a 422 here, not a round trip.

const Id = z.string().min(1).max(200);

export const PtyParams = z.object({ id: Id, pid: Id });

export const OpenPtyRequest = OpenPtyBody.extend({
  cols: z.number().int().min(1).max(1000).optional(),
  rows: z.number().int().min(1).max(500).optional(),
});
