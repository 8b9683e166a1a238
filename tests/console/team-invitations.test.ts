import "server-only";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { POST as accept } from "../../app/api/invitations/accept/route";
import { POST as lookup } from "../../app/api/invitations/lookup/route";
import { POST as acceptMine } from "../../app/api/me/invitations/[id]/accept/route";
import { POST as declineMine } from "../../app/api/me/invitations/[id]/decline/route";
import { GET as myInvitations } from "../../app/api/me/invitations/route";
import { GET as getMe } from "../../app/api/me/route";
import { POST as resend } from "../../app/api/team/invitations/[id]/resend/route";
import { DELETE as revoke } from "../../app/api/team/invitations/[id]/route";
import { GET as listInvitations, POST as invite } from "../../app/api/team/invitations/route";
import { listAuditEvents } from "../../lib/server/db/audit";
import { addMember, getMembership, type Role } from "../../lib/server/db/teams";
import { testBackends } from "../../lib/server/db/test-backends";
import { inviteMember, INVITATION_TTL_MS } from "../../lib/server/invitations";
import type { IssuedInvitationDto } from "../../lib/validations/team";
import { invitationLinkIn, startSmtpServer, type TestSmtpServer } from "../helpers/smtp-server";
import {
  cookieHeaderFrom,
  jsonOf,
  makeUser,
  noParams,
  ORIGIN,
  request,
  sessionCookie,
  uniq,
  useConsoleDb,
} from "./helpers";

const params = (p: Record<string, string>) => ({ params: Promise.resolve(p) });
const tokenOf = (link: string) => link.slice(link.lastIndexOf("/") + 1);

describe.each(testBackends)("invitations ($name)", (backend) => {
  let smtp: TestSmtpServer;
  beforeAll(async () => {
    smtp = await startSmtpServer();
  });
  afterAll(async () => {
    await smtp.close();
  });
  const ctx = useConsoleDb(backend);
  beforeAll(() => {
    vi.stubEnv("BATON_SMTP_URL", smtp.url);
    vi.stubEnv("BATON_MAIL_FROM", "Baton <baton@example.test>");
  });

  async function team() {
    const owner = await makeUser(ctx.db(), "owner");
    const teamId = owner.teamId!;
    const join = async (role: Role) => {
      const { user } = await makeUser(ctx.db(), null);
      await addMember(ctx.db(), { teamId, userId: user.id, role });
      return { user, cookie: (await sessionCookie(ctx.db(), user.id)).cookie };
    };
    return { owner: { ...owner, cookie: (await sessionCookie(ctx.db(), owner.user.id)).cookie }, teamId, join };
  }

  async function sendInvite(cookie: string, email: string, role: Role = "member") {
    return invite(request("/api/team/invitations", { method: "POST", cookie, body: { email, role } }), noParams);
  }
  const lookupToken = (token: string) =>
    lookup(request("/api/invitations/lookup", { method: "POST", body: { token } }), noParams);
  const acceptToken = (body: Record<string, string>, cookie?: string) =>
    accept(request("/api/invitations/accept", { method: "POST", body, cookie }), noParams);

  it("invites by mail; a new person creates their account from the mailed link and is signed in", async () => {
    const { owner, teamId } = await team();
    const email = `${uniq("new")}@example.com`;
    const res = await sendInvite(owner.cookie, email, "member");
    expect(res.status).toBe(201);
    const issued = (await jsonOf(res)) as unknown as IssuedInvitationDto;
    expect(issued).toMatchObject({ mailed: true, mail_error: null, invitation: { email, role: "member" } });
    expect(issued.link).toMatch(new RegExp(`^${ORIGIN}/invite/[A-Za-z0-9_-]{43}$`));
    // The mail, as the test's own SMTP server received it, holds the same link.
    const mail = await smtp.waitFor(email);
    expect(mail.subject).toContain("invited you");
    expect(invitationLinkIn(mail)).toBe(issued.link);
    const token = tokenOf(invitationLinkIn(mail));
    // Expires in 7 days.
    const expires = Date.parse(issued.invitation.expires_at) - Date.parse(issued.invitation.created_at);
    expect(expires).toBe(INVITATION_TTL_MS);

    expect(await jsonOf(await lookupToken(token))).toMatchObject({
      state: "pending",
      email,
      role: "member",
      account_exists: false,
    });
    const created = await acceptToken({ token, name: "New Person", password: "a long enough password" });
    expect(created.status, JSON.stringify(await created.clone().json())).toBe(201);
    const cookie = cookieHeaderFrom(created);
    const me = await jsonOf(await getMe(request("/api/me", { cookie }), noParams));
    expect(me).toMatchObject({ user: { email, name: "New Person" }, memberships: [{ role: "member" }] });
    expect((me.memberships as Array<{ team: { id: string } }>)[0]!.team.id).toBe(teamId);

    // The link works once.
    const again = await acceptToken({ token, name: "Someone", password: "a long enough password" });
    expect(again.status).toBe(410);
    expect(await jsonOf(again)).toMatchObject({
      code: "invitation_used",
      detail: expect.stringMatching(/already used/),
    });
    expect(await jsonOf(await lookupToken(token))).toMatchObject({ state: "used" });
    const events = await listAuditEvents(ctx.db(), { teamId });
    expect(events.map((e) => e.action)).toEqual(expect.arrayContaining(["invitation.create", "invitation.accept"]));
  });

  it("nobody invites above their own role", async () => {
    const { join } = await team();
    const admin = await join("admin");
    const asOwner = await sendInvite(admin.cookie, `${uniq("x")}@example.com`, "owner");
    expect(asOwner.status).toBe(403);
    expect(await jsonOf(asOwner)).toMatchObject({ code: "owner_only" });
    expect((await sendInvite(admin.cookie, `${uniq("x")}@example.com`, "admin")).status).toBe(201);
    const member = await join("member");
    const byMember = await sendInvite(member.cookie, `${uniq("x")}@example.com`, "viewer");
    expect(byMember.status).toBe(403);
    expect(await jsonOf(byMember)).toMatchObject({ code: "forbidden" });
  });

  it("re-inviting replaces the pending invitation: the old link says it was replaced", async () => {
    const { owner } = await team();
    const email = `${uniq("twice")}@example.com`;
    const first = (await jsonOf(await sendInvite(owner.cookie, email, "viewer"))) as unknown as IssuedInvitationDto;
    const second = (await jsonOf(await sendInvite(owner.cookie, email, "admin"))) as unknown as IssuedInvitationDto;
    expect(second.replaced).toEqual([first.invitation.id]);
    const list = (await jsonOf(
      await listInvitations(request("/api/team/invitations", { cookie: owner.cookie }), noParams),
    )) as { invitations: Array<{ email: string; role: string }> };
    expect(list.invitations.filter((i) => i.email === email)).toEqual([expect.objectContaining({ role: "admin" })]);
    const old = await acceptToken({ token: tokenOf(first.link), name: "X", password: "a long enough password" });
    expect(old.status).toBe(410);
    expect(await jsonOf(old)).toMatchObject({ code: "invitation_revoked", detail: expect.stringMatching(/replaced/) });
    expect(await jsonOf(await lookupToken(tokenOf(second.link)))).toMatchObject({ state: "pending", role: "admin" });
  });

  it("resend makes a new link and kills the old one; revoke kills it too", async () => {
    const { owner } = await team();
    const email = `${uniq("resend")}@example.com`;
    const first = (await jsonOf(await sendInvite(owner.cookie, email))) as unknown as IssuedInvitationDto;
    const res = await resend(
      request(`/api/team/invitations/${first.invitation.id}/resend`, { method: "POST", cookie: owner.cookie }),
      params({ id: first.invitation.id }),
    );
    expect(res.status).toBe(200);
    const second = (await jsonOf(res)) as unknown as IssuedInvitationDto;
    expect(second.link).not.toBe(first.link);
    expect(await jsonOf(await lookupToken(tokenOf(first.link)))).toMatchObject({ state: "revoked" });
    // Both mails arrived; the newest holds the new link.
    await expect.poll(() => smtp.messages.filter((m) => m.to.includes(email)).length).toBe(2);
    const mails = smtp.messages.filter((m) => m.to.includes(email));
    expect(invitationLinkIn(mails.at(-1)!)).toBe(second.link);

    const gone = await revoke(
      request(`/api/team/invitations/${second.invitation.id}`, { method: "DELETE", cookie: owner.cookie }),
      params({ id: second.invitation.id }),
    );
    expect(gone.status).toBe(200);
    const late = await acceptToken({ token: tokenOf(second.link), name: "X", password: "a long enough password" });
    expect(late.status).toBe(410);
    expect(await jsonOf(late)).toMatchObject({ code: "invitation_revoked" });
  });

  it("an expired link says so", async () => {
    const { owner, teamId } = await team();
    const issued = await inviteMember(ctx.db(), {
      teamId,
      inviter: { userId: owner.user.id, role: "owner", name: "", email: owner.user.email },
      email: `${uniq("late")}@example.com`,
      role: "viewer",
      origin: ORIGIN,
      now: Date.now() - INVITATION_TTL_MS - 1000,
    });
    expect(await jsonOf(await lookupToken(tokenOf(issued.link)))).toMatchObject({ state: "expired" });
    const res = await acceptToken({ token: tokenOf(issued.link), name: "X", password: "a long enough password" });
    expect(res.status).toBe(410);
    expect(await jsonOf(res)).toMatchObject({ code: "invitation_expired", detail: expect.stringMatching(/expired/) });
    const unknown = await lookupToken("A".repeat(43));
    expect(unknown.status).toBe(404);
  });

  it("an existing user signs in first, sees the invitation in the console, and accepts it there", async () => {
    const { owner, teamId } = await team();
    const existing = await makeUser(ctx.db(), null);
    const other = await makeUser(ctx.db(), null);
    const issued = (await jsonOf(
      await sendInvite(owner.cookie, existing.user.email, "viewer"),
    )) as unknown as IssuedInvitationDto;
    const token = tokenOf(issued.link);
    expect(await jsonOf(await lookupToken(token))).toMatchObject({ account_exists: true });
    // Not signed in: making a second account with the address is refused.
    const anon = await acceptToken({ token, name: "Dup", password: "a long enough password" });
    expect(anon.status).toBe(409);
    expect(await jsonOf(anon)).toMatchObject({ code: "account_exists", detail: expect.stringMatching(/sign in/i) });
    // Signed in as someone else: refused, naming the invited address.
    const wrong = await acceptToken({ token }, (await sessionCookie(ctx.db(), other.user.id)).cookie);
    expect(wrong.status).toBe(409);
    expect(await jsonOf(wrong)).toMatchObject({ code: "invitation_email_mismatch" });

    const cookie = (await sessionCookie(ctx.db(), existing.user.id)).cookie;
    const mine = (await jsonOf(await myInvitations(request("/api/me/invitations", { cookie }), noParams))) as {
      invitations: Array<{ id: string; team: { id: string }; role: string }>;
    };
    expect(mine.invitations).toEqual([expect.objectContaining({ id: issued.invitation.id, role: "viewer" })]);
    expect(mine.invitations[0]!.team.id).toBe(teamId);
    // Another user cannot accept it by id.
    const stranger = await acceptMine(
      request(`/api/me/invitations/${issued.invitation.id}/accept`, {
        method: "POST",
        cookie: (await sessionCookie(ctx.db(), other.user.id)).cookie,
      }),
      params({ id: issued.invitation.id }),
    );
    expect(stranger.status).toBe(404);
    const ok = await acceptMine(
      request(`/api/me/invitations/${issued.invitation.id}/accept`, { method: "POST", cookie }),
      params({ id: issued.invitation.id }),
    );
    expect(ok.status).toBe(200);
    expect((await getMembership(ctx.db(), teamId, existing.user.id))?.role).toBe("viewer");
    expect(await jsonOf(await myInvitations(request("/api/me/invitations", { cookie }), noParams))).toEqual({
      invitations: [],
    });
  });

  it("a signed-in invitee accepts by link, and one can decline", async () => {
    const { owner, teamId } = await team();
    const a = await makeUser(ctx.db(), null);
    const b = await makeUser(ctx.db(), null);
    const ia = (await jsonOf(await sendInvite(owner.cookie, a.user.email))) as unknown as IssuedInvitationDto;
    const ib = (await jsonOf(await sendInvite(owner.cookie, b.user.email))) as unknown as IssuedInvitationDto;
    const res = await acceptToken({ token: tokenOf(ia.link) }, (await sessionCookie(ctx.db(), a.user.id)).cookie);
    expect(res.status).toBe(200);
    expect((await getMembership(ctx.db(), teamId, a.user.id))?.role).toBe("member");
    const declined = await declineMine(
      request(`/api/me/invitations/${ib.invitation.id}/decline`, {
        method: "POST",
        cookie: (await sessionCookie(ctx.db(), b.user.id)).cookie,
      }),
      params({ id: ib.invitation.id }),
    );
    expect(declined.status).toBe(204);
    expect(await jsonOf(await lookupToken(tokenOf(ib.link)))).toMatchObject({ state: "revoked" });
  });

  it("without BATON_SMTP_URL nothing is mailed and the inviter still gets the link", async () => {
    const { owner } = await team();
    vi.stubEnv("BATON_SMTP_URL", "");
    try {
      const email = `${uniq("nomail")}@example.com`;
      const issued = (await jsonOf(await sendInvite(owner.cookie, email))) as unknown as IssuedInvitationDto;
      expect(issued).toMatchObject({ mailed: false, mail_error: expect.stringMatching(/not configured/) });
      expect(issued.link).toContain("/invite/");
      await new Promise((r) => setTimeout(r, 200));
      expect(smtp.messages.some((m) => m.to.includes(email))).toBe(false);
    } finally {
      vi.stubEnv("BATON_SMTP_URL", smtp.url);
    }
  });

  it("a mail server that refuses leaves the invitation made, and the inviter is told to pass the link on", async () => {
    const { owner } = await team();
    const closed = await startSmtpServer();
    await closed.close(); // a port where nothing listens any more
    vi.stubEnv("BATON_SMTP_URL", closed.url);
    try {
      const issued = (await jsonOf(
        await sendInvite(owner.cookie, `${uniq("down")}@example.com`),
      )) as unknown as IssuedInvitationDto;
      expect(issued).toMatchObject({ mailed: false, mail_error: expect.stringMatching(/did not take/) });
      expect(await jsonOf(await lookupToken(tokenOf(issued.link)))).toMatchObject({ state: "pending" });
    } finally {
      vi.stubEnv("BATON_SMTP_URL", smtp.url);
    }
  });
});
