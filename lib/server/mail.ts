import "server-only";
import nodemailer from "nodemailer";

// Outgoing mail (invitations), through nodemailer to the SMTP server named by BATON_SMTP_URL
// (`smtp://user:pass@host:587`, `smtps://…:465`; nodemailer's URL form) from BATON_MAIL_FROM
// (default `Baton <baton@localhost>`). Without BATON_SMTP_URL Baton sends nothing: whoever made the
// link is shown it and passes it on themselves, so nothing depends on mail working.

export interface MailMessage {
  to: string;
  subject: string;
  text: string;
  html?: string;
}

export type MailOutcome = { sent: true } | { sent: false; reason: "not_configured" | "failed"; detail?: string };

const DEFAULT_FROM = "Baton <baton@localhost>";

/** Whether mail is configured (BATON_SMTP_URL set). */
export function mailConfigured(): boolean {
  return Boolean(process.env.BATON_SMTP_URL?.trim());
}

/**
 * Sends one message. Never throws: a failure is logged and answered as `{ sent: false }`, so the
 * caller (who already has the link) says "not mailed" instead of failing the whole action.
 */
export async function sendMail(message: MailMessage): Promise<MailOutcome> {
  const url = process.env.BATON_SMTP_URL?.trim();
  if (!url) return { sent: false, reason: "not_configured" };
  const from = process.env.BATON_MAIL_FROM?.trim() || DEFAULT_FROM;
  try {
    const transport = nodemailer.createTransport(url);
    try {
      await transport.sendMail({ from, ...message });
    } finally {
      transport.close();
    }
    return { sent: true };
  } catch (err) {
    // The URL may hold the SMTP password: log the error, never the URL.
    const detail = err instanceof Error ? err.message : String(err);
    console.error(`[baton] could not send mail to ${message.to}: ${detail}`);
    return { sent: false, reason: "failed", detail };
  }
}
