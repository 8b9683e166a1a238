import { z } from "zod";

/** POST /api/teams: a new team's name (its slug is made from it). */
export const CreateTeamBody = z.object({
  name: z.string().trim().min(1, { error: "Give the team a name." }).max(100, { error: "At most 100 characters." }),
});
