import "server-only";

// One team's spend-cap decisions, one at a time in this process: the caps job's evaluation of a
// team and a request's check-then-create for that team take turns. So a create that passed the
// check is not still on its way upstream while the job writes that the cap is reached, and parallel
// creates are checked one after the other (each against the state the previous one left).
// Per process: with several Baton instances, the job runs in one of them per interval (its lease),
// and a create on another instance is checked against the state the database holds.

const tails = new Map<string, Promise<unknown>>();

export async function withTeamCapLock<T>(teamId: string, fn: () => Promise<T>): Promise<T> {
  const before = tails.get(teamId) ?? Promise.resolve();
  let release!: () => void;
  const mine = new Promise<void>((r) => (release = r));
  const tail = before.then(() => mine);
  tails.set(teamId, tail);
  try {
    await before.catch(() => undefined);
    return await fn();
  } finally {
    release();
    if (tails.get(teamId) === tail) tails.delete(teamId);
  }
}
