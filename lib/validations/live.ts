import { z } from "zod";

/** GET /api/v1/sandboxes/{id}/live: `cursor` is the last timeline event id the tab has (as Last-Event-ID). */
export const LiveQuery = z.object({ cursor: z.string().min(1).max(256).optional() });
