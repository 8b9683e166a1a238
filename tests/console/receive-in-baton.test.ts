import "server-only";
import fs from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { DELETE as stopReceiving } from "../../app/api/hooks/receivers/[id]/route";
import { GET as receivers, POST as receiveInBaton } from "../../app/api/hooks/receivers/route";
import { DELETE as deleteWebhook, PATCH as patchWebhook } from "../../app/api/v1/webhooks/[id]/route";
import { POST as rotateSecret } from "../../app/api/v1/webhooks/[id]/rotate-secret/route";
import { POST as createWebhook } from "../../app/api/v1/webhooks/route";
import { addMember } from "../../lib/server/db/teams";
import { startEngine, type EngineHandle } from "../../engine/test/helpers/engine";
import { decrypt } from "../../lib/server/crypto";
import { testBackends } from "../../lib/server/db/test-backends";
import { receiverSecretAad } from "../../lib/server/hooks/store";
import { connectLocalEngine } from "../../lib/server/tokens";
import { jsonOf, makeUser, noParams, request, sessionCookie, useConsoleDb } from "./helpers";

// "Receive in Baton" against a real engine that allows the console's origin (as `npm start` sets
// ORKESTR_ENGINE_WEBHOOK_ALLOW): the webhook is made upstream through the typed client, its secret
// is stored encrypted (the e2e proves deliveries verify with it), a second click makes nothing new, a
// webhook deleted upstream is made again, and Stop receiving deletes it upstream and here.

let engine: EngineHandle;
beforeAll(async () => {
  // The console under test is http://baton.test (tests/console/helpers.ts): its receiver's origin.
  engine = await startEngine({ env: { ORKESTR_ENGINE_WEBHOOK_ALLOW: "http://baton.test" } });
  vi.stubEnv("ORKESTR_API_URL", engine.origin);
}, 60_000);
// SQLite: the engine round trips are the subject here; the repositories run on both backends elsewhere.
const ctx = useConsoleDb(testBackends[0]!);
beforeAll(() => {
  const dir = path.join(process.env.BATON_DATA_DIR!, "engine");
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "bootstrap.secret"), engine.bootstrap!, { mode: 0o600 });
});
afterAll(async () => {
  await engine?.stop();
  if (engine?.dataDir) fs.rmSync(engine.dataDir, { recursive: true, force: true });
});

describe("Receive in Baton on the local engine", () => {
  let cookie = "";
  let ownerId = "";
  let ownerTeamId = "";

  beforeAll(async () => {
    const { user, teamId } = await makeUser(ctx.db(), "owner");
    ownerId = user.id;
    ownerTeamId = teamId!;
    await connectLocalEngine(user.id, { teamId });
    cookie = (await sessionCookie(ctx.db(), user.id)).cookie;
  });

  const click = () => receiveInBaton(request("/api/hooks/receivers", { method: "POST", cookie }), noParams);
  const webhooksUpstream = async (id: string) =>
    (await engine.api("GET", `/webhooks/${id}`, undefined, { token: await userToken() })).status;

  /** The token the user's connection holds, decrypted as the vault does (to ask the engine as them). */
  async function userToken(): Promise<string> {
    const row = await ctx
      .db()
      .selectFrom("orkestr_connections")
      .select(["id", "token_ciphertext"])
      .where("user_id", "=", ownerId)
      .executeTakeFirstOrThrow();
    return decrypt(row.token_ciphertext, { aad: `orkestr_connections:${row.id}:token` });
  }

  it("makes the webhook upstream, keeps its secret encrypted, and answers no secret", async () => {
    const res = await click();
    expect(res.status).toBe(201);
    const body = (await jsonOf(res)) as { receiver: { id: string; url: string; webhook_id: string } };
    expect(JSON.stringify(body)).not.toMatch(/whsec_/);
    expect(body.receiver.url).toBe(`http://baton.test/api/hooks/${body.receiver.id}`);
    const upstream = await engine.api<{ url: string; secret?: string }>(
      "GET",
      `/webhooks/${body.receiver.webhook_id}`,
      undefined,
      { token: await userToken() },
    );
    expect(upstream.status).toBe(200);
    expect(upstream.body.url).toBe(body.receiver.url);
    const row = await ctx
      .db()
      .selectFrom("webhook_receivers")
      .select(["id", "secret_ciphertext"])
      .executeTakeFirstOrThrow();
    expect(row.secret_ciphertext).not.toMatch(/whsec_/);
    expect(decrypt(row.secret_ciphertext, { aad: receiverSecretAad(row.id) })).toMatch(/^whsec_/);
  });

  it("a second click finds the receiver; one whose webhook was deleted upstream is made again", async () => {
    const first = (await jsonOf(await click())) as { receiver: { id: string; webhook_id: string } };
    const again = await click();
    expect(again.status).toBe(200);
    expect(((await jsonOf(again)) as { receiver: { id: string } }).receiver.id).toBe(first.receiver.id);

    expect(
      (await engine.api("DELETE", `/webhooks/${first.receiver.webhook_id}`, undefined, { token: await userToken() }))
        .status,
    ).toBe(204);
    const remade = await click();
    expect(remade.status).toBe(201);
    const next = (await jsonOf(remade)) as { receiver: { id: string; webhook_id: string } };
    expect(next.receiver.id).not.toBe(first.receiver.id);
    expect(await webhooksUpstream(next.receiver.webhook_id)).toBe(200);
    expect(await ctx.db().selectFrom("webhook_receivers").select("id").execute()).toEqual([{ id: next.receiver.id }]);
  });

  describe("Baton's receiver webhook through the webhooks API (/api/v1/webhooks/<id>)", () => {
    const byId = (id: string) => ({ params: Promise.resolve({ id }) });
    const rotate = (id: string, as: string) =>
      rotateSecret(request(`/api/v1/webhooks/${id}/rotate-secret`, { method: "POST", cookie: as }), byId(id));
    const patch = (id: string, as: string, body: Record<string, unknown>) =>
      patchWebhook(request(`/api/v1/webhooks/${id}`, { method: "PATCH", cookie: as, body }), byId(id));
    const remove = (id: string, as: string) =>
      deleteWebhook(request(`/api/v1/webhooks/${id}`, { method: "DELETE", cookie: as }), byId(id));

    async function ownedByBaton(res: Response, what: RegExp) {
      expect(res.status).toBe(409);
      expect(await jsonOf(res)).toEqual({ code: "webhook_owned_by_baton", detail: expect.stringMatching(what) });
    }

    it("is refused to rotate, edit or delete, for its owner and a teammate alike, and stays as it was", async () => {
      const { receiver } = (await jsonOf(await click())) as { receiver: { url: string; webhook_id: string } };
      const id = receiver.webhook_id;
      const { user: mate } = await makeUser(ctx.db(), null);
      const teamId = ownerTeamId;
      await addMember(ctx.db(), { teamId, userId: mate.id, role: "member" });
      await connectLocalEngine(mate.id, { teamId });
      const mateCookie = (await sessionCookie(ctx.db(), mate.id)).cookie;

      for (const as of [cookie, mateCookie]) {
        await ownedByBaton(await rotate(id, as), /Rotating its secret here would break it.*Stop receiving/);
        await ownedByBaton(await patch(id, as, { url: "https://example.com/hook" }), /Changing its URL/);
        await ownedByBaton(await patch(id, as, { description: "mine now", enabled: true }), /Changing/);
        await ownedByBaton(await remove(id, as), /Deleting it here would break it/);
      }
      const upstream = await engine.api<{ url: string; description: string }>("GET", `/webhooks/${id}`, undefined, {
        token: await userToken(),
      });
      expect(upstream.status).toBe(200);
      expect(upstream.body.url).toBe(receiver.url);
      expect(upstream.body.description).toMatch(/Baton's built-in receiver/);

      // Pausing breaks nothing (Enable brings it back): allowed, as the disable/enable routes are.
      expect((await patch(id, mateCookie, { enabled: false })).status).toBe(200);
      expect((await patch(id, cookie, { enabled: true })).status).toBe(200);
    });

    it("another team's member gets the upstream's 404, as for an id that does not exist; other webhooks are untouched by the rule", async () => {
      const { receiver } = (await jsonOf(await click())) as { receiver: { webhook_id: string } };
      const stranger = await makeUser(ctx.db(), "owner");
      await connectLocalEngine(stranger.user.id, { teamId: stranger.teamId });
      const strangerCookie = (await sessionCookie(ctx.db(), stranger.user.id)).cookie;
      for (const res of [
        await rotate(receiver.webhook_id, strangerCookie),
        await remove(receiver.webhook_id, strangerCookie),
      ]) {
        expect(res.status).toBe(404);
        expect((await jsonOf(res)).code).not.toBe("webhook_owned_by_baton");
      }

      // A webhook of the owner's own that is not the receiver: rotated, edited and deleted as before.
      const created = await createWebhook(
        request("/api/v1/webhooks", { method: "POST", cookie, body: { url: "http://baton.test/elsewhere" } }),
        noParams,
      );
      expect(created.status).toBe(201);
      const { id } = (await jsonOf(created)) as { id: string };
      expect((await rotate(id, cookie)).status).toBe(200);
      expect((await patch(id, cookie, { description: "renamed" })).status).toBe(200);
      expect((await remove(id, cookie)).status).toBe(204);
    });
  });

  it("Stop receiving deletes the webhook upstream and the receiver here", async () => {
    const { receiver } = (await jsonOf(await click())) as { receiver: { id: string; webhook_id: string } };
    const res = await stopReceiving(request(`/api/hooks/receivers/${receiver.id}`, { method: "DELETE", cookie }), {
      params: Promise.resolve({ id: receiver.id }),
    });
    expect(res.status).toBe(204);
    expect(await webhooksUpstream(receiver.webhook_id)).toBe(404);
    expect(await ctx.db().selectFrom("webhook_receivers").select("id").execute()).toEqual([]);
  });

  describe("which webhooks the pages mark as Baton's receivers (GET /api/hooks/receivers team_webhook_ids)", () => {
    interface Answer {
      receiver: { id: string; webhook_id: string } | null;
      team_webhook_ids: string[];
    }
    const answerOf = async (as: string) => {
      const res = await receivers(request("/api/hooks/receivers", { cookie: as }), noParams);
      expect(res.status).toBe(200);
      return (await jsonOf(res)) as unknown as Answer;
    };
    const makeReceiver = async (as: string) =>
      (
        (await jsonOf(
          await receiveInBaton(request("/api/hooks/receivers", { method: "POST", cookie: as }), noParams),
        )) as unknown as Answer
      ).receiver!.webhook_id;
    /** A user with a local-engine connection in `teamId` (made active), signed in. */
    async function memberOf(teamId: string, role: "member" | "viewer" = "member") {
      const { user } = await makeUser(ctx.db(), null);
      await addMember(ctx.db(), { teamId, userId: user.id, role });
      await connectLocalEngine(user.id, { teamId });
      return { user, cookie: (await sessionCookie(ctx.db(), user.id)).cookie };
    }

    it("names every receiver of the acting team's connections to each member, and never another team's", async () => {
      const ownersHook = await makeReceiver(cookie);
      const mate = await memberOf(ownerTeamId);
      const viewer = await memberOf(ownerTeamId, "viewer");
      // The teammate has no receiver of their own yet: the owner's is a teammate's to them.
      expect(await answerOf(mate.cookie)).toEqual({ receiver: null, team_webhook_ids: [ownersHook] });
      const matesHook = await makeReceiver(mate.cookie);

      // Another team with a receiver of its own, on its own engine account.
      const other = await makeUser(ctx.db(), "owner");
      await connectLocalEngine(other.user.id, { teamId: other.teamId });
      const otherCookie = (await sessionCookie(ctx.db(), other.user.id)).cookie;
      const othersHook = await makeReceiver(otherCookie);

      for (const as of [cookie, mate.cookie, viewer.cookie])
        expect((await answerOf(as)).team_webhook_ids.sort()).toEqual([ownersHook, matesHook].sort());
      expect((await answerOf(cookie)).receiver?.webhook_id).toBe(ownersHook);
      expect((await answerOf(mate.cookie)).receiver?.webhook_id).toBe(matesHook);
      expect(await answerOf(otherCookie)).toMatchObject({ team_webhook_ids: [othersHook] });

      // A member of both teams sees the ids of the team their request acts in, and only those.
      await addMember(ctx.db(), { teamId: other.teamId!, userId: mate.user.id, role: "member" });
      await connectLocalEngine(mate.user.id, { teamId: other.teamId, name: "Other team's engine" });
      expect(await answerOf(mate.cookie)).toEqual({ receiver: null, team_webhook_ids: [othersHook] });
    });

    it("a connection made without a team counts for its user's one team, as acting-team.ts binds it; with several teams, for none", async () => {
      const { user, teamId } = await makeUser(ctx.db(), "owner");
      await connectLocalEngine(user.id, { teamId });
      const legacyCookie = (await sessionCookie(ctx.db(), user.id)).cookie;
      const hook = await makeReceiver(legacyCookie);
      await ctx.db().updateTable("orkestr_connections").set({ team_id: null }).where("user_id", "=", user.id).execute();
      const mate = await memberOf(teamId!);
      expect((await answerOf(mate.cookie)).team_webhook_ids).toEqual([hook]);

      // Once its user is in a second team, nobody can tell whose it is: no team's.
      const second = await makeUser(ctx.db(), "owner");
      await addMember(ctx.db(), { teamId: second.teamId!, userId: user.id, role: "member" });
      expect((await answerOf(mate.cookie)).team_webhook_ids).toEqual([]);
      const secondCookie = (await sessionCookie(ctx.db(), second.user.id)).cookie;
      await connectLocalEngine(second.user.id, { teamId: second.teamId });
      expect((await answerOf(secondCookie)).team_webhook_ids).toEqual([]);
    });
  });
});
