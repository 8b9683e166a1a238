import "server-only";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import type { AuditAction } from "../../audit-actions";
import { decrypt, hashPassword } from "../crypto";
import { resetEnvForTests } from "../env";
import { listAuditEvents, recordAudit } from "./audit";
import {
  connectionTokenAad,
  deleteConnection,
  getActiveConnection,
  getConnection,
  getConnectionSecret,
  listConnections,
  recordConnectionCheck,
  setActiveConnection,
  updateConnection,
  upsertConnection,
} from "./connections";
import { DbConflictError, DbNotFoundError, DbRowError } from "./errors";
import { migrateToLatest, type Db } from "./index";
import { hitRateLimit, resetRateLimit } from "./rate-limit";
import {
  createSession,
  findValidSession,
  listActiveSessions,
  purgeSessions,
  revokeAllSessionsForUser,
  revokeSession,
  revokeSessionById,
  touchSession,
} from "./sessions";
import { createFirstOwner, isFirstRun } from "./setup";
import {
  acceptInvitation,
  addMember,
  createInvitation,
  createTeamWithOwner,
  deleteTeam,
  findPendingInvitation,
  getMembership,
  getTeam,
  listMembershipsForUser,
  listTeamMembers,
  removeMember,
  setMemberRole,
  slugify,
} from "./teams";
import { testBackends, type TestDatabase } from "./test-backends";
import {
  countUsers,
  createUser,
  deleteUser,
  findUserByEmail,
  findUserById,
  getUserCredentials,
  setUserDisabled,
  type User,
} from "./users";

let seq = 0;
const uniq = (p: string) => `${p}${++seq}${Math.random().toString(36).slice(2, 7)}`;
const email = () => `${uniq("u")}@example.com`;
const slug = () => uniq("team-");

let dataDir: string;
beforeAll(() => {
  dataDir = fs.mkdtempSync(path.join(os.tmpdir(), "baton-repo-"));
  vi.stubEnv("BATON_DATA_DIR", dataDir);
  vi.stubEnv("BATON_SECRET", "r".repeat(48));
  resetEnvForTests();
});
afterAll(() => {
  vi.unstubAllEnvs();
  resetEnvForTests();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

describe.each(testBackends)("repositories on $name", (backend) => {
  let t: TestDatabase;
  let db: Db;
  const newUser = (e = email()): Promise<User> => createUser(db, { email: e, name: "Test", passwordHash: "scrypt$x" });

  beforeAll(async () => {
    t = await backend.open();
    db = t.db;
    await migrateToLatest(db);
  });
  afterAll(async () => {
    await t.close();
  });

  describe("first run", () => {
    it("creates the owner and first team once; a second setup is refused", async () => {
      expect(await isFirstRun(db)).toBe(true);
      const hash = await hashPassword("owner-password");
      const attempts = await Promise.allSettled([
        createFirstOwner(db, {
          email: "Owner@Example.com",
          name: "Owner",
          passwordHash: hash,
          teamName: "Acme",
          teamSlug: "acme",
        }),
        createFirstOwner(db, {
          email: "other@example.com",
          name: "Other",
          passwordHash: hash,
          teamName: "Evil",
          teamSlug: "evil",
        }),
      ]);
      const ok = attempts.filter((a) => a.status === "fulfilled");
      const failed = attempts.filter((a): a is PromiseRejectedResult => a.status === "rejected");
      expect(ok).toHaveLength(1);
      expect(failed).toHaveLength(1);
      expect(failed[0]?.reason).toBeInstanceOf(DbConflictError);
      expect((failed[0]?.reason as DbConflictError).code).toBe("setup_done");
      expect(await countUsers(db)).toBe(1);
      expect(await isFirstRun(db)).toBe(false);
      const owner = await findUserByEmail(db, "owner@example.com");
      const [m] = await listMembershipsForUser(db, owner!.id);
      expect(m?.membership.role).toBe("owner");
    });
  });

  describe("users", () => {
    it("creates a user and finds it by id and by email in any case", async () => {
      const e = `Mixed.Case+${uniq("x")}@Example.COM`;
      const u = await newUser(e);
      expect(u).toMatchObject({ email: e, name: "Test", disabledAt: null });
      expect(u.id).toMatch(/^usr_[0-9A-HJKMNP-TV-Z]{26}$/);
      expect(u.createdAt).toBeInstanceOf(Date);
      expect((await findUserByEmail(db, e.toLowerCase()))?.id).toBe(u.id);
      expect((await findUserByEmail(db, `  ${e.toUpperCase()} `))?.id).toBe(u.id);
      expect(await findUserById(db, u.id)).toEqual(u);
      expect(u).not.toHaveProperty("passwordHash");
    });

    it("refuses a second account with the same email in another letter case", async () => {
      const e = email();
      await newUser(e);
      const err = await newUser(e.toUpperCase()).catch((x: unknown) => x);
      expect(err).toBeInstanceOf(DbConflictError);
      expect((err as DbConflictError).code).toBe("email_taken");
    });

    it("rejects an invalid email before touching the database", async () => {
      await expect(newUser("not-an-email")).rejects.toThrow(/valid email/);
    });

    it("returns credentials only through getUserCredentials", async () => {
      const e = email();
      const hash = await hashPassword("pw-123456");
      await createUser(db, { email: e, passwordHash: hash });
      const creds = await getUserCredentials(db, e.toUpperCase());
      expect(creds?.passwordHash).toBe(hash);
      expect(await getUserCredentials(db, "nobody@example.com")).toBeNull();
    });
  });

  describe("sessions", () => {
    it("creates a session whose id is the sha256 of its token and finds it", async () => {
      const u = await newUser();
      const { token, session } = await createSession(db, { userId: u.id, ip: "203.0.113.9", userAgent: "vitest" });
      expect(session.id).toMatch(/^[0-9a-f]{64}$/);
      expect(session.id).not.toContain(token);
      const found = await findValidSession(db, token);
      expect(found?.user).toEqual(u);
      expect(found?.session).toMatchObject({ id: session.id, userId: u.id, ip: "203.0.113.9", userAgent: "vitest" });
      const row = await db.selectFrom("sessions").selectAll().where("id", "=", session.id).executeTakeFirstOrThrow();
      expect(JSON.stringify(row)).not.toContain(token);
    });

    it("ignores unknown and malformed tokens", async () => {
      expect(await findValidSession(db, "A".repeat(43))).toBeNull();
      expect(await findValidSession(db, "'; drop table sessions; --")).toBeNull();
    });

    it("revokes a session (sign out)", async () => {
      const u = await newUser();
      const { token } = await createSession(db, { userId: u.id });
      expect(await revokeSession(db, token)).toBe(true);
      expect(await findValidSession(db, token)).toBeNull();
      expect(await revokeSession(db, token)).toBe(false);
    });

    it("expires sessions", async () => {
      const u = await newUser();
      const now = Date.now();
      const { token, session } = await createSession(db, { userId: u.id, ttlMs: 60_000, now });
      expect(await findValidSession(db, token, { now: now + 59_000 })).not.toBeNull();
      expect(await findValidSession(db, token, { now: now + 60_000 })).toBeNull();
      // Sliding expiry moves it forward; it never shortens it.
      await touchSession(db, session.id, { now: now + 30_000, slideTtlMs: 60_000, minIntervalMs: 0 });
      expect(await findValidSession(db, token, { now: now + 80_000 })).not.toBeNull();
      await touchSession(db, session.id, { now: now + 31_000, slideTtlMs: 1_000, minIntervalMs: 0 });
      expect(await findValidSession(db, token, { now: now + 80_000 })).not.toBeNull();
      expect(await purgeSessions(db, { now: now + 10 * 86_400_000, keepMs: 0 })).toBeGreaterThanOrEqual(1);
      expect(await findValidSession(db, token, { now: now + 1_000 })).toBeNull();
    });

    it("signs out everywhere, optionally keeping the current session", async () => {
      const u = await newUser();
      const other = await newUser();
      const a = await createSession(db, { userId: u.id });
      const b = await createSession(db, { userId: u.id });
      const c = await createSession(db, { userId: u.id });
      const o = await createSession(db, { userId: other.id });
      expect(await revokeAllSessionsForUser(db, u.id, { exceptSessionId: a.session.id })).toBe(2);
      expect(await findValidSession(db, a.token)).not.toBeNull();
      expect(await findValidSession(db, b.token)).toBeNull();
      expect(await findValidSession(db, c.token)).toBeNull();
      expect(await findValidSession(db, o.token)).not.toBeNull();
      expect((await listActiveSessions(db, u.id)).map((s) => s.id)).toEqual([a.session.id]);
      expect(await revokeAllSessionsForUser(db, u.id)).toBe(1);
      expect(await listActiveSessions(db, u.id)).toEqual([]);
    });

    it("only revokes a session by id for its own user", async () => {
      const u = await newUser();
      const mallory = await newUser();
      const { token, session } = await createSession(db, { userId: u.id });
      expect(await revokeSessionById(db, session.id, mallory.id)).toBe(false);
      expect(await findValidSession(db, token)).not.toBeNull();
      expect(await revokeSessionById(db, session.id, u.id)).toBe(true);
    });

    it("stops validating sessions of a disabled user", async () => {
      const u = await newUser();
      const { token } = await createSession(db, { userId: u.id });
      await setUserDisabled(db, u.id, true);
      expect(await findValidSession(db, token)).toBeNull();
      await setUserDisabled(db, u.id, false);
      expect(await findValidSession(db, token)).not.toBeNull();
    });
  });

  describe("teams and memberships", () => {
    it("creates a team with its owner membership in one transaction", async () => {
      const u = await newUser();
      const s = slug();
      const { team, membership } = await createTeamWithOwner(db, {
        name: "Team A",
        slug: s,
        ownerId: u.id,
        spendCapEur: 12.5,
      });
      expect(team).toMatchObject({ name: "Team A", slug: s, spendCapEur: 12.5 });
      expect(membership).toMatchObject({ teamId: team.id, userId: u.id, role: "owner" });
      expect(await getMembership(db, team.id, u.id)).toEqual(membership);
      const list = await listMembershipsForUser(db, u.id);
      expect(list).toEqual([{ team, membership }]);
    });

    it("rolls the team back when the owner membership cannot be created", async () => {
      const s = slug();
      await expect(
        createTeamWithOwner(db, { name: "Orphan", slug: s, ownerId: "usr_does_not_exist" }),
      ).rejects.toThrow();
      expect(await db.selectFrom("teams").select("id").where("slug", "=", s).executeTakeFirst()).toBeUndefined();
    });

    it("refuses a duplicate slug", async () => {
      const u = await newUser();
      const s = slug();
      await createTeamWithOwner(db, { name: "One", slug: s, ownerId: u.id });
      const err = await createTeamWithOwner(db, { name: "Two", slug: s, ownerId: u.id }).catch((x: unknown) => x);
      expect(err).toBeInstanceOf(DbConflictError);
      expect((err as DbConflictError).code).toBe("slug_taken");
      await expect(createTeamWithOwner(db, { name: "Bad", slug: "Not A Slug", ownerId: u.id })).rejects.toThrow(/slug/);
      expect(slugify("Équipe Ünïcode & Co.")).toBe("equipe-unicode-co");
    });

    it("keeps at least one owner", async () => {
      const owner = await newUser();
      const admin = await newUser();
      const { team } = await createTeamWithOwner(db, { name: "Owners", slug: slug(), ownerId: owner.id });
      await addMember(db, { teamId: team.id, userId: admin.id, role: "admin" });
      await expect(addMember(db, { teamId: team.id, userId: admin.id, role: "viewer" })).rejects.toThrow(
        DbConflictError,
      );
      await expect(setMemberRole(db, { teamId: team.id, userId: owner.id, role: "member" })).rejects.toMatchObject({
        code: "last_owner",
      });
      await expect(removeMember(db, { teamId: team.id, userId: owner.id })).rejects.toMatchObject({
        code: "last_owner",
      });
      expect((await getMembership(db, team.id, owner.id))?.role).toBe("owner");
      await setMemberRole(db, { teamId: team.id, userId: admin.id, role: "owner" });
      await setMemberRole(db, { teamId: team.id, userId: owner.id, role: "viewer" });
      const members = await listTeamMembers(db, team.id);
      expect(members.map((m) => [m.user.id, m.membership.role])).toEqual([
        [admin.id, "owner"],
        [owner.id, "viewer"],
      ]);
      await removeMember(db, { teamId: team.id, userId: owner.id });
      await expect(removeMember(db, { teamId: team.id, userId: owner.id })).rejects.toThrow(DbNotFoundError);
    });

    it("rejects a membership row with an unknown role on read", async () => {
      const u = await newUser();
      const { team } = await createTeamWithOwner(db, { name: "Corrupt", slug: slug(), ownerId: u.id });
      await db.updateTable("memberships").set({ role: "superuser" }).where("team_id", "=", team.id).execute();
      const err = await listMembershipsForUser(db, u.id).catch((x: unknown) => x);
      expect(err).toBeInstanceOf(DbRowError);
      expect((err as DbRowError).table).toBe("memberships");
      expect((err as DbRowError).message).toMatch(/role/);
      expect((err as DbRowError).message).not.toContain("superuser");
      await expect(getMembership(db, team.id, u.id)).rejects.toThrow(DbRowError);
      await expect(listTeamMembers(db, team.id)).rejects.toThrow(DbRowError);
      // The writers never produce one.
      await expect(
        addMember(db, { teamId: team.id, userId: (await newUser()).id, role: "superuser" as never }),
      ).rejects.toThrow();
    });

    it("invites by email: accept once, only for the invited address, only before expiry", async () => {
      const owner = await newUser();
      const { team } = await createTeamWithOwner(db, { name: "Inv", slug: slug(), ownerId: owner.id });
      const invitee = await newUser();
      const { token, invitation } = await createInvitation(db, {
        teamId: team.id,
        email: invitee.email.toUpperCase(),
        role: "member",
        invitedBy: owner.id,
      });
      const row = await db
        .selectFrom("invitations")
        .select("token_hash")
        .where("id", "=", invitation.id)
        .executeTakeFirstOrThrow();
      expect(row.token_hash).not.toBe(token);
      const stranger = await newUser();
      await expect(acceptInvitation(db, { token, user: stranger })).rejects.toMatchObject({
        code: "invitation_email_mismatch",
      });
      const m = await acceptInvitation(db, { token, user: invitee });
      expect(m).toMatchObject({ teamId: team.id, userId: invitee.id, role: "member" });
      await expect(acceptInvitation(db, { token, user: invitee })).rejects.toThrow(DbNotFoundError);

      const late = await createInvitation(db, {
        teamId: team.id,
        email: email(),
        role: "viewer",
        invitedBy: owner.id,
        ttlMs: 1000,
      });
      expect(await findPendingInvitation(db, late.token)).not.toBeNull();
      expect(await findPendingInvitation(db, late.token, Date.now() + 2000)).toBeNull();
    });
  });

  describe("orkestr connections", () => {
    it("stores the token encrypted and bound to its row, shows only a hint", async () => {
      const u = await newUser();
      const token = "ork_live_0123456789abcdefghijWXYZ";
      const c = await upsertConnection(db, { userId: u.id, name: "local", baseUrl: "http://127.0.0.1:8787/", token });
      expect(c).toMatchObject({
        name: "local",
        baseUrl: "http://127.0.0.1:8787",
        tokenHint: "ork_…WXYZ",
        isActive: true,
      });
      expect(JSON.stringify(c)).not.toContain(token);
      const raw = await db
        .selectFrom("orkestr_connections")
        .selectAll()
        .where("id", "=", c.id)
        .executeTakeFirstOrThrow();
      expect(raw.token_ciphertext).toMatch(/^v1:/);
      expect(JSON.stringify(raw)).not.toContain(token);
      const secret = await getConnectionSecret(db, u.id);
      expect(secret?.connection.id).toBe(c.id);
      expect(decrypt(secret!.ciphertext, { aad: secret!.aad })).toBe(token);
      // Copying the ciphertext onto another row does not decrypt there.
      expect(() => decrypt(secret!.ciphertext, { aad: connectionTokenAad("conn_other") })).toThrow(
        /authentication failed/,
      );
    });

    it("keeps exactly one active connection per user", async () => {
      const u = await newUser();
      const other = await newUser();
      const a = await upsertConnection(db, {
        userId: u.id,
        name: "a",
        baseUrl: "https://a.example",
        token: "ork_aaaaaaaaaaaaaaaa",
      });
      const b = await upsertConnection(db, {
        userId: u.id,
        name: "b",
        baseUrl: "https://b.example",
        token: "ork_bbbbbbbbbbbbbbbb",
      });
      const o = await upsertConnection(db, {
        userId: other.id,
        name: "a",
        baseUrl: "https://o.example",
        token: "ork_oooooooooooooooo",
      });
      expect(a.isActive).toBe(true);
      expect(b.isActive).toBe(false);
      expect(o.isActive).toBe(true);

      expect((await setActiveConnection(db, u.id, b.id)).isActive).toBe(true);
      expect((await getActiveConnection(db, u.id))?.id).toBe(b.id);
      expect((await listConnections(db, u.id)).map((c) => [c.name, c.isActive])).toEqual([
        ["b", true],
        ["a", false],
      ]);

      // Someone else's connection: not found, and nothing changes (rolled back).
      await expect(setActiveConnection(db, u.id, o.id)).rejects.toThrow(DbNotFoundError);
      expect((await getActiveConnection(db, u.id))?.id).toBe(b.id);
      expect((await getActiveConnection(db, other.id))?.id).toBe(o.id);

      // Concurrent switches still leave exactly one.
      const c = await upsertConnection(db, {
        userId: u.id,
        name: "c",
        baseUrl: "https://c.example",
        token: "ork_cccccccccccccccc",
      });
      await Promise.allSettled([a, b, c, a, c, b].map((x) => setActiveConnection(db, u.id, x.id)));
      expect((await listConnections(db, u.id)).filter((x) => x.isActive)).toHaveLength(1);

      // The database itself refuses a second active row.
      await expect(
        db.updateTable("orkestr_connections").set({ is_active: 1 }).where("user_id", "=", u.id).execute(),
      ).rejects.toThrow(/unique/i);
    });

    it("upserts by name, replaces tokens, records checks and refuses duplicate names", async () => {
      const u = await newUser();
      const first = await upsertConnection(db, {
        userId: u.id,
        name: "prod",
        baseUrl: "https://api.orkestr.eu",
        token: "ork_first_token_1111",
      });
      await recordConnectionCheck(db, u.id, first.id, "401 unauthorized");
      expect((await getConnection(db, u.id, first.id))?.lastError).toBe("401 unauthorized");
      const second = await upsertConnection(db, {
        userId: u.id,
        name: "prod",
        baseUrl: "https://api.orkestr.eu",
        token: "ork_second_token_2222",
      });
      expect(second.id).toBe(first.id);
      expect(second).toMatchObject({ tokenHint: "ork_…2222", lastError: null, lastCheckedAt: null });
      const s = await getConnectionSecret(db, u.id, first.id);
      expect(decrypt(s!.ciphertext, { aad: s!.aad })).toBe("ork_second_token_2222");

      const staging = await upsertConnection(db, {
        userId: u.id,
        name: "staging",
        baseUrl: "https://s.example",
        token: "ork_staging_token_33",
      });
      await expect(updateConnection(db, u.id, staging.id, { name: "prod" })).rejects.toMatchObject({
        code: "connection_name_taken",
      });
      const renamed = await updateConnection(db, u.id, staging.id, { name: "stage", token: "ork_replaced_token_44" });
      expect(renamed).toMatchObject({ name: "stage", tokenHint: "ork_…n_44" });
      await expect(updateConnection(db, (await newUser()).id, staging.id, { name: "x" })).rejects.toThrow(
        DbNotFoundError,
      );
      await expect(
        upsertConnection(db, { userId: u.id, name: "bad", baseUrl: "ftp://x.example", token: "ork_xxxxxxxxxxxx" }),
      ).rejects.toThrow(/http/);
    });

    it("deleting the active connection promotes another; deleting others leaves it", async () => {
      const u = await newUser();
      const a = await upsertConnection(db, {
        userId: u.id,
        name: "a",
        baseUrl: "https://a.example",
        token: "ork_aaaaaaaaaaaaaaaa",
      });
      const b = await upsertConnection(db, {
        userId: u.id,
        name: "b",
        baseUrl: "https://b.example",
        token: "ork_bbbbbbbbbbbbbbbb",
      });
      expect(await deleteConnection(db, (await newUser()).id, a.id)).toBe(false);
      expect(await deleteConnection(db, u.id, a.id)).toBe(true);
      expect((await getActiveConnection(db, u.id))?.id).toBe(b.id);
      expect(await deleteConnection(db, u.id, b.id)).toBe(true);
      expect(await getActiveConnection(db, u.id)).toBeNull();
      expect(await getConnectionSecret(db, u.id)).toBeNull();
    });
  });

  describe("cascades", () => {
    it("deleting a user removes their sessions, memberships and connections, and keeps audit events", async () => {
      const u = await newUser();
      const owner = await newUser();
      const { team } = await createTeamWithOwner(db, { name: "Casc", slug: slug(), ownerId: owner.id });
      await addMember(db, { teamId: team.id, userId: u.id, role: "member" });
      const { token } = await createSession(db, { userId: u.id });
      await upsertConnection(db, {
        userId: u.id,
        name: "x",
        baseUrl: "https://x.example",
        token: "ork_xxxxxxxxxxxxxxxx",
      });
      const ev = await recordAudit(db, { action: "auth.sign_in", userId: u.id, teamId: team.id });
      const inv = await createInvitation(db, { teamId: team.id, email: email(), role: "viewer", invitedBy: u.id });

      expect(await deleteUser(db, u.id)).toBe(true);
      expect(await findValidSession(db, token)).toBeNull();
      expect(await db.selectFrom("sessions").select("id").where("user_id", "=", u.id).execute()).toEqual([]);
      expect(await getMembership(db, team.id, u.id)).toBeNull();
      expect(await listConnections(db, u.id)).toEqual([]);
      // Audit rows outlive their user (migration 0005): the id and email stay as they were.
      const [kept] = await listAuditEvents(db, { teamId: team.id });
      expect(kept).toMatchObject({ id: ev.id, userId: u.id, actorEmail: u.email.toLowerCase() });
      expect((await findPendingInvitation(db, inv.token))?.invitedBy).toBeNull();
    });

    it("deleting a team removes its memberships, invitations and team connections, and keeps its audit events", async () => {
      const owner = await newUser();
      const { team } = await createTeamWithOwner(db, { name: "Gone", slug: slug(), ownerId: owner.id });
      const inv = await createInvitation(db, { teamId: team.id, email: email(), role: "member", invitedBy: owner.id });
      await upsertConnection(db, {
        userId: owner.id,
        teamId: team.id,
        name: "t",
        baseUrl: "https://t.example",
        token: "ork_tttttttttttttttt",
      });
      await recordAudit(db, { action: "team.create", userId: owner.id, teamId: team.id });
      expect(await deleteTeam(db, team.id)).toBe(true);
      expect(await getTeam(db, team.id)).toBeNull();
      expect(await listMembershipsForUser(db, owner.id)).toEqual([]);
      expect(await findPendingInvitation(db, inv.token)).toBeNull();
      expect(await listConnections(db, owner.id)).toEqual([]);
      // Audit rows outlive the team they describe (migration 0005): no foreign key, append-only.
      expect((await listAuditEvents(db, { teamId: team.id })).map((e) => e.action)).toEqual(["team.create"]);
      expect(await findUserById(db, owner.id)).not.toBeNull();
    });
  });

  describe("audit", () => {
    it("records events with JSON data, redacts secrets, lists newest first", async () => {
      const u = await newUser();
      const { team } = await createTeamWithOwner(db, { name: "Aud", slug: slug(), ownerId: u.id });
      const e1 = await recordAudit(db, {
        action: "connection.create",
        teamId: team.id,
        userId: u.id,
        target: "conn_1",
        ip: "198.51.100.7",
        data: { name: "prod", token: "ork_leak", nested: { apiKey: "k", ok: [1, 2] } },
      });
      expect(e1.data).toEqual({ name: "prod", token: "[redacted]", nested: { apiKey: "[redacted]", ok: [1, 2] } });
      const e2 = await recordAudit(db, { action: "connection.activate", teamId: team.id, userId: u.id });
      const list = await listAuditEvents(db, { teamId: team.id });
      expect(list.map((e) => e.id)).toEqual([e2.id, e1.id]);
      expect(list[1]).toMatchObject({
        action: "connection.create",
        target: "conn_1",
        ip: "198.51.100.7",
        data: e1.data,
      });
      expect(await listAuditEvents(db, { teamId: team.id, before: e2.id })).toHaveLength(1);
      expect((await listAuditEvents(db, { userId: u.id })).length).toBeGreaterThanOrEqual(2);
      const raw = await db.selectFrom("audit_events").select("data").where("id", "=", e1.id).executeTakeFirstOrThrow();
      expect(raw.data).not.toContain("ork_leak");
      await expect(recordAudit(db, { action: "Not An Action" as AuditAction })).rejects.toThrow(/resource\.verb/);
    });
  });

  describe("rate limiting", () => {
    it("counts hits in a fixed window and resets", async () => {
      const key = uniq("signin:ip:");
      const now = Date.now();
      const opts = { limit: 3, windowMs: 60_000 };
      const results = await Promise.all([1, 2, 3].map(() => hitRateLimit(db, key, { ...opts, now })));
      expect(results.map((r) => r.count).sort()).toEqual([1, 2, 3]);
      expect(results.every((r) => r.allowed)).toBe(true);
      const blocked = await hitRateLimit(db, key, { ...opts, now: now + 10_000 });
      expect(blocked).toMatchObject({ allowed: false, count: 4, remaining: 0, retryAfterMs: 50_000 });
      const fresh = await hitRateLimit(db, key, { ...opts, now: now + 60_000 });
      expect(fresh).toMatchObject({ allowed: true, count: 1 });
      await resetRateLimit(db, key);
      expect((await hitRateLimit(db, key, { ...opts, now: now + 61_000 })).count).toBe(1);
    });
  });
});
